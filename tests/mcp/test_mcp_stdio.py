"""mcp_local over stdio against the official Python MCP server and a hand-written peer."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import peerkit
import pytest
from peerkit import tool_call

from mantyx_sync.errors import ToolError, ToolResolutionError
from mantyx_sync.mcp import McpConnection, define_local_mcp

PY_SERVER = str(peerkit.PEERS / "mcp_py_server.py")
RAW_PEER = str(peerkit.PEERS / "raw_mcp_peer.py")


def _raw(*args: str, name: str = "raw", timeout: float = 10.0, **kw: object) -> McpConnection:
    return define_local_mcp(
        name,
        command=peerkit.PYTHON,
        args=[RAW_PEER, *args],
        timeout=timeout,
        **kw,  # type: ignore[arg-type]
    ).connect()


@pytest.fixture(scope="module")
def py_stdio() -> Iterator[McpConnection]:
    conn = define_local_mcp(
        "py", command=peerkit.PYTHON, args=[PY_SERVER, "stdio"], timeout=15
    ).connect()
    yield conn
    conn.close()


def test_python_server_catalog_and_names(py_stdio: McpConnection) -> None:
    ref = py_stdio.wire_ref()
    assert ref["serverInfo"]["name"] == "mantyx-test-peer"
    assert py_stdio.tool_names() == [
        "py_echo",
        "py_get_sum",
        "py_fail",
        "py_shout",
        "py_meet",
        "py_roots",
        "py_nap",
    ]
    assert py_stdio.upstream_name("py_get_sum") == "get-sum"
    schema = py_stdio.input_schema("py_get_sum")
    assert schema is not None and set(schema["required"]) == {"a", "b"}


def test_python_server_calls(py_stdio: McpConnection) -> None:
    assert py_stdio.call(tool_call("py_echo", {"text": "hi"}), timeout=10) == "hi"
    assert py_stdio.call(tool_call("py_get_sum", {"a": 2, "b": 3}), timeout=10) == "5"
    # Log and progress notifications before the reply are ignored.
    assert py_stdio.call(tool_call("py_shout", {"text": "abc"}), timeout=10) == "ABC"
    with pytest.raises(ToolError, match="Error executing tool fail"):
        py_stdio.call(tool_call("py_fail", {"message": "boom"}), timeout=10)


def test_server_request_mid_call_is_refused_and_call_completes(py_stdio: McpConnection) -> None:
    reply = py_stdio.call(tool_call("py_roots"), timeout=10)
    assert reply == "roots refused: MCPError: Method not found"


def test_concurrent_calls_overlap_on_one_connection(py_stdio: McpConnection) -> None:
    # `meet` only returns once all three calls are inside the server at once.
    with ThreadPoolExecutor(3) as pool:
        futures = [
            pool.submit(py_stdio.call, tool_call("py_meet", {"key": "s", "count": 3}), timeout=12)
            for _ in range(3)
        ]
        assert [f.result(timeout=15) for f in futures] == ["met s"] * 3


def test_timeout_is_a_tool_error_and_connection_survives(py_stdio: McpConnection) -> None:
    with pytest.raises(ToolError, match="timed out"):
        py_stdio.call(tool_call("py_nap", {"seconds": 30}), timeout=0.3)
    assert py_stdio.call(tool_call("py_echo", {"text": "still"}), timeout=10) == "still"


def test_pagination_and_peer_requests_with_id_zero_and_string() -> None:
    conn = _raw("--page-size", "2", "--tools", "5")
    try:
        assert conn.tool_names() == [
            "raw_t0",
            "raw_t1",
            "raw_t2",
            "raw_t3",
            "raw_t4",
            "raw_probe",
            "raw_die",
            "raw_hang",
            "raw_cancelled",
            "raw_caps",
        ]
        assert conn.wire_ref()["serverInfo"] == {
            "name": "raw-peer",
            "version": "9.9",
            "extra": {"k": 1},
        }
        answers = json.loads(conn.call(tool_call("raw_probe"), timeout=10))
        assert answers["0"] == {"jsonrpc": "2.0", "id": 0, "result": {}}
        assert answers["s-1"]["error"]["code"] == -32601
        assert conn.call(tool_call("raw_t3", {"x": 1}), timeout=10) == 't3:{"x": 1}'
    finally:
        conn.close()


def test_timeout_sends_cancelled_notification() -> None:
    conn = _raw()
    try:
        with pytest.raises(ToolError, match="timed out"):
            conn.call(tool_call("raw_hang"), timeout=0.2)
        cancelled = json.loads(conn.call(tool_call("raw_cancelled"), timeout=10))
        assert len(cancelled) == 1 and isinstance(cancelled[0], int)
    finally:
        conn.close()


def test_initialize_offers_latest_version_and_no_capabilities() -> None:
    conn = _raw()
    try:
        sent = json.loads(conn.call(tool_call("raw_caps"), timeout=10))
        assert sent["protocolVersion"] == "2025-11-25"
        assert sent["capabilities"] == {}
        assert sent["clientInfo"]["name"] == "mantyx-sync"
    finally:
        conn.close()


def test_dead_server_mid_run_fails_fast_and_later_calls_too() -> None:
    conn = _raw()
    try:
        with pytest.raises(ToolError, match="exited with code 7"):
            conn.call(tool_call("raw_die"), timeout=30)
        with pytest.raises(ToolError, match="exited with code 7"):
            conn.call(tool_call("raw_t0"), timeout=30)
    finally:
        conn.close()
    assert not peerkit.threads_named("mantyx-mcp-raw")


def test_too_many_tools_and_tool_filter() -> None:
    with pytest.raises(ToolResolutionError, match="tool_filter"):
        _raw("--tools", "70")
    conn = _raw("--tools", "70", tool_filter=["t1", "t69", "missing"])
    try:
        assert conn.tool_names() == ["raw_t1", "raw_t69"]
    finally:
        conn.close()


def test_missing_command_is_a_clear_resolution_error() -> None:
    definition = define_local_mcp("gone", command="/nonexistent/mcp-server-binary")
    with pytest.raises(ToolResolutionError, match="command not found"):
        definition.connect()


def test_server_exiting_during_listing_leaves_nothing_behind(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    with pytest.raises(ToolResolutionError, match="exited with code 3") as info:
        _raw("--exit-on-list", "--pidfile", str(pidfile), name="half")
    assert "cannot connect" in str(info.value)
    assert peerkit.reaped(int(pidfile.read_text()))
    assert not peerkit.threads_named("mantyx-mcp-half")


def test_unsupported_protocol_version_cleans_up_running_server(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    with pytest.raises(ToolResolutionError, match="protocol version '1999-01-01'"):
        _raw("--version", "1999-01-01", "--pidfile", str(pidfile), name="oldver")
    assert peerkit.reaped(int(pidfile.read_text()))


def test_counter_offer_of_supported_version_is_accepted() -> None:
    conn = _raw("--version", "2025-06-18")
    try:
        assert conn.call(tool_call("raw_t0"), timeout=10) == "t0:{}"
    finally:
        conn.close()


def test_close_kills_a_server_that_ignores_stdin_and_sigterm(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    conn = _raw("--ignore-eof", "--pidfile", str(pidfile), name="stubborn")
    pid = int(pidfile.read_text())
    assert not peerkit.reaped(pid)
    closer = threading.Thread(target=conn.close)
    closer.start()
    closer.join(20)
    assert not closer.is_alive()
    assert peerkit.reaped(pid)
    assert not peerkit.threads_named("mantyx-mcp-stubborn")
    with pytest.raises(ToolError):
        conn.call(tool_call("stubborn_t0"), timeout=1)


def test_env_is_passed_to_the_child() -> None:
    code = (
        "import json,os,sys\n"
        "for line in sys.stdin:\n"
        "    m=json.loads(line)\n"
        "    if 'id' not in m: continue\n"
        "    r={'protocolVersion':'2025-06-18','capabilities':{},"
        "'serverInfo':{'name':os.environ.get('PEER_NAME','?')}} if m['method']=='initialize' "
        "else {'tools':[{'name':'x'}]}\n"
        "    print(json.dumps({'jsonrpc':'2.0','id':m['id'],'result':r}),flush=True)\n"
    )
    conn = define_local_mcp(
        "envy", command=peerkit.PYTHON, args=["-c", code], env={"PEER_NAME": "from-env"}
    ).connect()
    try:
        assert conn.wire_ref()["serverInfo"] == {"name": "from-env"}
    finally:
        conn.close()
