"""Shared fixtures. The ``mantyx_server`` fixture comes from mantyx_sync's own pytest plugin."""

from __future__ import annotations

import pytest

from mantyx_sync._config import ClientConfig
from mantyx_sync._transport import HttpTransport

BASE = "https://mantyx.test"
ROOT = f"{BASE}/api/v1/workspaces/acme"
KEY = "mantyx_unit_secret_key_123"


@pytest.fixture
def config() -> ClientConfig:
    return ClientConfig(api_key=KEY, workspace="acme", base_url=BASE, read_timeout=5.0)


@pytest.fixture
def transport(config: ClientConfig) -> HttpTransport:
    t = HttpTransport(config)
    yield t
    t.close()


@pytest.fixture(autouse=True)
def _no_mantyx_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests must never pick up a developer's real credentials.
    for name in ("MANTYX_API_KEY", "MANTYX_WORKSPACE", "MANTYX_BASE_URL", "MANTYX_LOG"):
        monkeypatch.delenv(name, raising=False)
