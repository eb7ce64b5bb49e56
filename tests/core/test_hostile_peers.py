"""MCP-over-HTTP servers and A2A peers that answer without end: reading stops at the cap."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests
from hostile_support import Conn, Hostile, answer, head

from mantyx_sync._base.bounded import MAX_BODY_BYTES
from mantyx_sync._peers.a2a.client import A2AError, fetch_card
from mantyx_sync.errors import ToolError, ToolResolutionError
from mantyx_sync.events import LocalToolCall
from mantyx_sync.mcp import define_local_mcp

# What the sockets' buffers hold besides the cap: far from the gigabytes of before.
SLACK = 16 * 1024 * 1024


@pytest.fixture
def endless() -> Iterator[Hostile]:
    server = Hostile(lambda method, path: lambda conn: conn.endless(head() + b'{"a": "'))
    yield server
    server.close()


# Regression (issue #29 item 2): an endless Agent Card grew the process past 2 GB.
def test_an_endless_agent_card_stops_at_the_cap(endless: Hostile) -> None:
    with requests.Session() as http, pytest.raises(A2AError, match="larger than"):
        fetch_card(http, endless.url, None, timeout=10)
    assert endless.sent < MAX_BODY_BYTES + SLACK


def _mcp(conn: Conn) -> None:
    """An MCP server whose tool answers never end (its handshake is ordinary)."""
    message = json.loads(conn.body or b"null")
    method = message.get("method") if isinstance(message, dict) else None
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        conn.write(answer(json.dumps(reply).encode()))
    elif method == "tools/list":
        tools = [{"name": "a", "inputSchema": {"type": "object"}}]
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}}
        conn.write(answer(json.dumps(reply).encode()))
    elif method == "tools/call":
        conn.endless(head() + b'{"jsonrpc": "2.0", "id": 1, "result": "')
    else:
        conn.write(answer(b"", 202))


# Regression (issue #29 item 2): an endless MCP-over-HTTP reply did the same.
def test_an_endless_mcp_http_reply_stops_at_the_cap() -> None:
    with Hostile(lambda method, path: _mcp) as server:
        conn = define_local_mcp("f", url=f"{server.url}/mcp", timeout=20).connect()
        try:
            before = server.sent
            with pytest.raises((ToolError, ToolResolutionError), match="larger than"):
                conn.call(LocalToolCall(tool_use_id="tu_1", name="f_a", args={}), timeout=20)
        finally:
            conn.close()
        assert server.sent - before < MAX_BODY_BYTES + SLACK
