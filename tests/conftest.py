"""Shared fixtures. The ``mantyx_server`` fixture comes from mantyx_sync's own pytest plugin."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
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


@pytest.fixture
def signalled_server() -> Iterator[LocalMantyx]:
    """A started emulator whose quiet streams ping every 0.2 s, for tests that
    signal a child process while it follows a run.

    CPython runs a signal's handler on the main thread, between bytecodes. A
    signal the kernel hands to another thread (a stuck tool's), or that lands
    just before the main thread blocks in its read, is acted on only when that
    read returns: on a quiet stream, never. Keepalive pings, which servers send
    on quiet streams, wake the reader. Without them about one child in ten
    missed its Ctrl-C. Blocking signals in tool threads would avoid one cause,
    but the mask is inherited by every subprocess a tool starts, which then
    could not be interrupted or terminated.
    """
    with LocalMantyx(keepalive=0.2) as server:
        yield server


PEERS = Path(__file__).parent / "peers"


@pytest.hookimpl(trylast=True)  # after the terminal reporter exists, so each build is announced
def pytest_configure(config: pytest.Config) -> None:
    """Install the third-party test peers the MCP/A2A tests run against, once.

    The npm MCP reference servers go into tests/peers/node_modules, the
    a2a-sdk 0.3 line into its own venv (it cannot share ours with 1.x), and
    agentscope-runtime into another (it pins a2a-sdk<1 and is large). Each one
    built is announced on the terminal, even under ``-q``, with the time it
    took, so a first run does not sit silent for minutes. Set
    MANTYX_TEST_NO_PEER_INSTALL=1 to skip; the tests that need them then skip.
    """
    if os.environ.get("MANTYX_TEST_NO_PEER_INSTALL"):
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def build(what: str, where: Path, command: list[str], timeout: int) -> None:
        line = f"mantyx_sync tests: installing {what} into {where.relative_to(PEERS.parent.parent)}"
        say(f"{line} (once; MANTYX_TEST_NO_PEER_INSTALL=1 skips it) ...")
        started = time.monotonic()
        try:
            done = subprocess.run(command, check=False, timeout=timeout, stdout=subprocess.DEVNULL)
            outcome = "done" if done.returncode == 0 else f"failed (exit {done.returncode})"
        except subprocess.TimeoutExpired:
            outcome = f"timed out after {timeout} s"
        say(f"mantyx_sync tests: {what}: {outcome} in {time.monotonic() - started:.0f} s")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(line)
        else:
            sys.stderr.write(line + "\n")

    npm = shutil.which("npm")
    if npm and not (PEERS / "node_modules" / ".bin").is_dir():
        build(
            "the npm MCP reference servers (about 40 MB)",
            PEERS / "node_modules",
            [npm, "install", "--prefix", str(PEERS), "--no-audit", "--no-fund", "--silent"],
            600,
        )
    if not (PEERS / ".venv-a2a03" / "bin" / "python").exists():
        build(
            "a venv with the a2a-sdk 0.3 line (about 80 MB)",
            PEERS / ".venv-a2a03",
            ["sh", str(PEERS / "make_a2a03_venv.sh")],
            600,
        )
    if not (PEERS / ".venv-agentscope" / "bin" / "python").exists():
        build(
            "a venv with agentscope-runtime (about 560 MB)",
            PEERS / ".venv-agentscope",
            ["sh", str(PEERS / "make_agentscope_venv.sh")],
            900,
        )
