"""mcp_local over Streamable HTTP: the official Python server in SSE, JSON and
stateless modes, plus a recording server for the exact HTTP behaviour."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import peerkit
import pytest
from fake_http_mcp import FakeHttpMcp
from peerkit import tool_call

from mantyx_sync._base.sse import read_events
from mantyx_sync.errors import ToolError, ToolResolutionError
from mantyx_sync.mcp import define_local_mcp


def test_python_server_over_http(py_http_url: str) -> None:
    conn = define_local_mcp("web", url=py_http_url, timeout=15).connect()
    try:
        assert conn.wire_ref()["serverInfo"]["name"] == "mantyx-test-peer"
        assert "web_get_sum" in conn.tool_names()
        assert conn.call(tool_call("web_get_sum", {"a": 20, "b": 22}), timeout=10) == "42"
        assert conn.call(tool_call("web_shout", {"text": "hey"}), timeout=10) == "HEY"
        with pytest.raises(ToolError, match="Error executing tool fail"):
            conn.call(tool_call("web_fail", {"message": "x"}), timeout=10)
        # roots/list arrives on the GET stream (or is impossible when stateless):
        # either way the call completes instead of hanging.
        roots = conn.call(tool_call("web_roots"), timeout=10)
        assert roots.startswith("roots refused:")
        with ThreadPoolExecutor(3) as pool:
            futures = [
                pool.submit(
                    conn.call,
                    tool_call("web_meet", {"key": py_http_url, "count": 3}),
                    timeout=12,
                )
                for _ in range(3)
            ]
            assert [f.result(timeout=15) for f in futures] == [f"met {py_http_url}"] * 3
        with pytest.raises(ToolError, match="timed out"):
            conn.call(tool_call("web_nap", {"seconds": 30}), timeout=0.3)
        assert conn.call(tool_call("web_echo", {"text": "ok"}), timeout=10) == "ok"
    finally:
        conn.close()
    assert not peerkit.threads_named("mantyx-mcp-web")


def test_session_headers_ping_answer_and_delete(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mantyx_sync")
    secret = "Bearer tok-0123456789-secret"
    with FakeHttpMcp() as fake:
        conn = define_local_mcp("rec", url=fake.url, headers={"Authorization": secret}).connect()
        assert conn.tool_names() == ["rec_do_it"]
        assert conn.call(tool_call("rec_do_it", {"n": 1}), timeout=10) == 'did {"n": 1}'
        conn.close()
        records = list(fake.records)
    init = records[0]
    assert init["body"]["method"] == "initialize"
    assert init["session"] is None and init["version"] is None
    assert init["accept"] == "application/json, text/event-stream"
    session = records[1]["session"]
    assert session
    after = records[1:]
    assert all(r["session"] == session for r in after)
    assert all(r["version"] == "2025-11-25" for r in after)
    assert all(r["auth"] == secret for r in records)
    posted = [r["body"] for r in after if r["verb"] == "POST"]
    assert {"jsonrpc": "2.0", "id": 0, "result": {}} in posted  # our answer to the server's ping
    assert records[-1]["verb"] == "DELETE"
    assert "tok-0123456789" not in caplog.text


def test_404_reinitialises_once_and_retries() -> None:
    with FakeHttpMcp() as fake:
        conn = define_local_mcp("rec", url=fake.url).connect()
        try:
            first_session = fake.records[-1]["session"]
            fake.expire_sessions()
            assert conn.call(tool_call("rec_do_it", {"n": 2}), timeout=10) == 'did {"n": 2}'
            inits = [
                r for r in fake.records if r["body"] and r["body"].get("method") == "initialize"
            ]
            assert len(inits) == 2
            assert fake.records[-1]["session"] not in (None, first_session)
        finally:
            conn.close()


def test_unreachable_url_is_a_resolution_error() -> None:
    port = peerkit.free_port()
    definition = define_local_mcp("nobody", url=f"http://127.0.0.1:{port}/mcp", timeout=5)
    with pytest.raises(ToolResolutionError, match="cannot connect") as info:
        definition.connect()
    assert "ConnectionError" in str(info.value)
    assert not peerkit.threads_named("mantyx-mcp-nobody")


def test_sse_parser_handles_split_chunks_comments_and_crlf() -> None:
    chunks = [
        b": ping\r\n\r\nev",
        b'ent: message\r\ndata: {"a":',
        b" 1}\r\n\r\n",
        b"data: x\ndata: y\n\n",
    ]
    events = [(e.event, e.data) for e in read_events(chunks)]
    assert events == [("message", '{"a": 1}'), ("message", "x\ny")]
