"""Regression tests for stdio servers that misbehave: wedged, wrapped, or sending junk ids."""

from __future__ import annotations

import os
import shlex
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import peerkit
import pytest
from peerkit import tool_call

from mantyx_sync.errors import ToolError
from mantyx_sync.mcp import McpConnection, define_local_mcp

QUIRKS = str(peerkit.PEERS / "stdio_quirks_peer.py")
RAW_PEER = str(peerkit.PEERS / "raw_mcp_peer.py")

posix_only = pytest.mark.skipif(
    os.name != "posix" or shutil.which("sh") is None, reason="needs a POSIX shell"
)


def _in_thread(fn: Callable[[], object], limit: float) -> tuple[bool, object]:
    """Run ``fn`` on a daemon thread; (finished within ``limit``, result or exception)."""
    box: list[object] = []

    def run() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # reported to the test, not swallowed
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    return (not thread.is_alive(), box[0] if box else None)


def _gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (gone, or a zombie nobody reaped yet)."""
    if peerkit.reaped(pid):
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _eventually_gone(pid: int, limit: float = 5.0) -> bool:
    deadline = time.monotonic() + limit
    ticker = threading.Event()
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        ticker.wait(0.05)  # polling another process's state; nothing to wait on
    return _gone(pid)


def _read_pid(path: Path) -> int:
    deadline = time.monotonic() + 5
    ticker = threading.Event()
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        ticker.wait(0.05)
    raise AssertionError(f"no pid written to {path}")


def test_wedged_server_cannot_block_calls_or_close() -> None:
    conn = define_local_mcp(
        "q", command=peerkit.PYTHON, args=[QUIRKS, "--stop-reading"], timeout=5
    ).connect()
    client = conn._client
    assert client is not None
    pid = client._transport.pid  # type: ignore[attr-defined]
    try:
        # The first call wedges the server; the second is far bigger than a pipe
        # buffer, so writing it blocks for good. Both must still time out on time.
        small_done, small = _in_thread(lambda: conn.call(tool_call("q_a"), timeout=1), 5)
        started = time.monotonic()
        big_done, big = _in_thread(
            lambda: conn.call(tool_call("q_a", {"blob": "x" * 2_000_000}), timeout=1),
            5,
        )
        assert small_done and isinstance(small, ToolError) and "timed out" in str(small)
        assert big_done and isinstance(big, ToolError) and "timed out" in str(big)
        assert time.monotonic() - started < 3
    finally:
        closed, error = _in_thread(conn.close, 12)
    assert closed and error is None
    assert _eventually_gone(pid)
    after_done, after = _in_thread(lambda: conn.call(tool_call("q_a"), timeout=1), 5)
    assert after_done and isinstance(after, ToolError)


def test_malformed_response_ids_are_ignored() -> None:
    conn = define_local_mcp(
        "b", command=peerkit.PYTHON, args=[QUIRKS, "--bad-ids"], timeout=5
    ).connect()
    try:
        for _ in range(2):
            assert conn.call(tool_call("b_a"), timeout=5) == "ok"
        assert peerkit.threads_named("mantyx-mcp-b-stdout")
    finally:
        conn.close()


@posix_only
def test_wrapper_shell_grandchild_ignoring_eof_and_sigterm_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    inner = shlex.join([peerkit.PYTHON, RAW_PEER, "--ignore-eof", "--pidfile", str(pidfile)])
    conn = define_local_mcp("w", command="sh", args=["-c", f"{inner}; echo done"]).connect()
    assert conn.call(tool_call("w_t0", {"x": 1}), timeout=5).startswith("t0:")
    grandchild = _read_pid(pidfile)
    started = time.monotonic()
    closed, error = _in_thread(conn.close, 15)
    assert closed and error is None
    assert time.monotonic() - started < 8
    assert _eventually_gone(grandchild)


@posix_only
def test_background_child_holding_stdout_is_stopped_on_close(tmp_path: Path) -> None:
    # The server exits on EOF as it should, but leaves a child holding its stdout.
    pidfile = tmp_path / "bg"
    peer = shlex.join([peerkit.PYTHON, RAW_PEER])
    script = f"sleep 300 & echo $! > {shlex.quote(str(pidfile))}; exec {peer}"
    conn: McpConnection = define_local_mcp("bg", command="sh", args=["-c", script]).connect()
    background = _read_pid(pidfile)
    started = time.monotonic()
    closed, error = _in_thread(conn.close, 15)
    assert closed and error is None
    assert time.monotonic() - started < 6
    assert _eventually_gone(background)
    assert not peerkit.threads_named("mantyx-mcp-bg-")
