"""Shared fixtures. The ``mantyx_server`` fixture comes from mantyx_sync's own pytest plugin."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mantyx_sync.testing import LocalMantyx


@pytest.fixture(autouse=True)
def _no_mantyx_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests must never pick up a developer's real credentials.
    for name in ("MANTYX_API_KEY", "MANTYX_WORKSPACE", "MANTYX_BASE_URL", "MANTYX_LOG"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def emulator() -> Iterator[LocalMantyx]:
    """An emulator that is never started, for tests of what is not the network:
    ``emulator.client(in_memory=True)`` reaches it with no socket. Tests of
    streaming, reconnects and retries use ``mantyx_server`` (real HTTP)."""
    server = LocalMantyx()
    try:
        yield server
    finally:
        server.stop()


PEERS = Path(__file__).parent / "peers"


def pytest_configure(config: pytest.Config) -> None:
    """Install the third-party test peers the MCP/A2A tests run against, once.

    The npm MCP reference servers go into tests/peers/node_modules, the
    a2a-sdk 0.3 line into its own venv (it cannot share ours with 1.x), and
    agentscope-runtime into another (it pins a2a-sdk<1 and is large). Set
    MANTYX_TEST_NO_PEER_INSTALL=1 to skip; the tests that need them then skip.
    """
    if os.environ.get("MANTYX_TEST_NO_PEER_INSTALL"):
        return
    npm = shutil.which("npm")
    if npm and not (PEERS / "node_modules" / ".bin").is_dir():
        subprocess.run(
            [npm, "install", "--prefix", str(PEERS), "--no-audit", "--no-fund", "--silent"],
            check=False,
            timeout=600,
            stdout=subprocess.DEVNULL,
        )
    if not (PEERS / ".venv-a2a03" / "bin" / "python").exists():
        subprocess.run(
            ["sh", str(PEERS / "make_a2a03_venv.sh")],
            check=False,
            timeout=600,
            stdout=subprocess.DEVNULL,
        )
    if not (PEERS / ".venv-agentscope" / "bin" / "python").exists():
        subprocess.run(
            ["sh", str(PEERS / "make_agentscope_venv.sh")],
            check=False,
            timeout=900,
            stdout=subprocess.DEVNULL,
        )
