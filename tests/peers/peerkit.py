"""Helpers the MCP/A2A tests share: free ports, bounded readiness waits, peer processes.

Imported by tests/mcp/conftest.py and tests/a2a/conftest.py (this folder is put
on sys.path there); no test here depends on timing, only on bounded waits.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mantyx_sync.events import LocalToolCall

PEERS = Path(__file__).resolve().parent
PYTHON = sys.executable


def tool_call(name: str, args: dict[str, Any] | None = None, **fields: Any) -> LocalToolCall:
    """A ``local_tool_call`` as the executor hands it to a connection."""
    return LocalToolCall(tool_use_id="tu_test", name=name, args=args or {}, **fields)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], deadline_s: float = 20.0) -> None:
    """Poll until something accepts on ``port``; fail if ``proc`` dies or time runs out."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"peer exited early with code {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        threading.Event().wait(0.05)  # a poll interval, not synchronisation
    raise RuntimeError(f"peer did not listen on {port} within {deadline_s} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate, then kill, and always reap."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@contextlib.contextmanager
def http_peer(args: list[str], port: int, python: str = PYTHON) -> Iterator[int]:
    """Run ``python <args>`` (which must listen on ``port``) for the duration of the block."""
    proc = subprocess.Popen([python, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, proc)
        yield port
    finally:
        stop(proc)


def reaped(pid: int) -> bool:
    """True when ``pid`` no longer exists at all (a zombie still does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_until(predicate: Callable[[], object], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` passes (state with no event to wait on)."""
    gate = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return True
        gate.wait(0.05)  # a poll interval, not synchronisation
    return bool(predicate())


def threads_named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]


def npm_bin(name: str) -> str | None:
    """Path of an installed npm peer binary, or None when node or the install is missing."""
    if shutil.which("node") is None:
        return None
    path = PEERS / "node_modules" / ".bin" / name
    return str(path) if path.exists() else None


A2A03_PYTHON = PEERS / ".venv-a2a03" / "bin" / "python"
AGENTSCOPE_PYTHON = PEERS / ".venv-agentscope" / "bin" / "python"
