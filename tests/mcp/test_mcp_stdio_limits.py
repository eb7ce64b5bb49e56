"""A stdio MCP server that writes without newlines is read with bounded memory
(issue 20, item 15): a stdout line past the cap is a clear MCP error, and stderr
is kept only as a short tail, which says why a server that died did."""

from __future__ import annotations

import resource
import threading
import time
from pathlib import Path

import peerkit
import pytest
from peerkit import tool_call

from mantyx_sync._peers.mcp import stdio
from mantyx_sync.errors import ToolResolutionError
from mantyx_sync.mcp import define_local_mcp

FLOOD = str(peerkit.PEERS / "stdio_flood_peer.py")
MIB = 1 << 20


def _peak_rss() -> int:
    """This process's peak resident set so far, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_a_stdout_line_past_the_cap_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(stdio, "MAX_LINE_BYTES", MIB)
    progress = tmp_path / "sent"
    definition = define_local_mcp(
        "f",
        command=peerkit.PYTHON,
        args=[FLOOD, "--stdout-line", str(256 * MIB), "--progress", str(progress)],
        timeout=10,
    )
    with pytest.raises(ToolResolutionError, match=f"a line of more than {MIB} bytes"):
        definition.connect()
    # Reading stopped at the cap: the server could not get rid of its line.
    assert int(progress.read_text()) < 16 * MIB


def test_stderr_without_newlines_is_kept_as_a_bounded_tail() -> None:
    before = _peak_rss()
    conn = define_local_mcp(
        "f", command=peerkit.PYTHON, args=[FLOOD, "--stderr", str(200 * MIB)], timeout=20
    ).connect()
    try:
        assert conn.call(tool_call("f_a"), timeout=10) == "ok"
        transport = conn._client._transport  # type: ignore[union-attr]
        assert 0 < len(transport._stderr) <= stdio.STDERR_TAIL_BYTES
    finally:
        conn.close()
    # 200 MB went through; holding it as one line would have grown the process by as much.
    assert _peak_rss() - before < 100 * MIB


def test_why_a_server_died_is_in_the_error() -> None:
    definition = define_local_mcp(
        "f",
        command=peerkit.PYTHON,
        args=[FLOOD, "--die", "fatal: no config in /etc/f.toml (mantyx_live_secret_1234567890)"],
        timeout=10,
    )
    with pytest.raises(ToolResolutionError) as info:
        definition.connect()
    message = str(info.value)
    assert "exited with code 3" in message
    assert "fatal: no config in /etc/f.toml" in message
    assert "mantyx_live_secret_1234567890" not in message


# Regression (issue #29 item 3): an answer nested past the JSON parser raised
# RecursionError in the stdout reader thread, which died and left the call waiting.
def test_an_answer_nested_too_deeply_fails_the_call_saying_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    died: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    conn = define_local_mcp(
        "f", command=peerkit.PYTHON, args=[FLOOD, "--deep", "200000"], timeout=10
    ).connect()
    try:
        started = time.monotonic()
        with pytest.raises(Exception, match="nested too deeply") as info:
            conn.call(tool_call("f_a"), timeout=10)
        assert time.monotonic() - started < 5  # not the call's own timeout
        assert not isinstance(info.value, RecursionError)
    finally:
        conn.close()
    assert died == []  # no thread died of it
