"""Fixtures for the seam tests: a config and a transport pointed at a fake host."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from core_support import BASE, KEY

from mantyx_sync._http.api import Api
from mantyx_sync.config import ClientConfig


@pytest.fixture
def config() -> ClientConfig:
    return ClientConfig(api_key=KEY, workspace="acme", base_url=BASE, read_timeout=5.0)


@pytest.fixture
def transport(config: ClientConfig) -> Iterator[Api]:
    t = Api(config)
    yield t
    t.close()
