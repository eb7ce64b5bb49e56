"""mcp_local and a2a_local end to end: real MCP/A2A peers behind runs on the local emulator.

The MCP server is the official Python ``mcp`` server from tests/peers, started
over stdio by the SDK; the A2A peer is the a2a-sdk peer from tests/peers on
127.0.0.1. Child processes are found through /proc (no psutil), so the tests
can check that the SDK really stops the servers it started.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the official MCP server needs the mcp package")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

import peerkit

import mantyx_sync
from mantyx_sync._peers.mcp.client import McpClient
from mantyx_sync.events import LocalToolCall
from mantyx_sync.mcp import LocalMcp, McpConnection
from mantyx_sync.testing import Fail, LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."
PY_SERVER = str(peerkit.PEERS / "mcp_py_server.py")

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _final_with_results(ctx: Any) -> str:
    return " | ".join(
        f"{r['name']}={r.get('result', 'ERR:' + str(r.get('error')))}"
        for r in sorted(ctx.tool_results, key=lambda r: r["toolUseId"])
    )


def _py_mcp(name: str = "py", **kw: Any) -> LocalMcp:
    return mantyx_sync.define_local_mcp(
        name, command=peerkit.PYTHON, args=[PY_SERVER, "stdio"], timeout=20, **kw
    )


def _stdio_children() -> list[int]:
    """Live (not zombie) children of this process running the stdio MCP test server."""
    me = os.getpid()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, ...
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) != me or state == "Z":
            continue
        if PY_SERVER.encode() in argv and b"stdio" in argv:
            found.append(int(entry.name))
    return found


def _posted(server: LocalMantyx, run_id: str) -> dict[str, dict[str, Any]]:
    return {
        r.json["toolUseId"]: r.json
        for r in server.requests
        if r.path.endswith(f"/agent-runs/{run_id}/tool-results")
    }


@pytest.fixture(scope="module")
def a2a_url() -> Iterator[str]:
    try:
        major = int(importlib.metadata.version("a2a-sdk").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        major = 0
    if major < 1:
        pytest.skip('the A2A test peer needs `pip install "a2a-sdk[http-server]>=1"`')
    port = peerkit.free_port()
    with peerkit.http_peer([str(peerkit.PEERS / "a2a_peer.py"), str(port)], port):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def upstream_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every ``tools/call`` the SDK sends to a real MCP server: (upstream name, arguments)."""
    seen: list[tuple[str, dict[str, Any]]] = []
    lock = threading.Lock()
    real = McpClient.call_tool

    def spy(self: McpClient, name: str, arguments: Mapping[str, Any], **kw: Any) -> Any:
        with lock:
            seen.append((name, dict(arguments)))
        return real(self, name, arguments, **kw)

    monkeypatch.setattr(McpClient, "call_tool", spy)
    return seen


@needs_proc
def test_mcp_and_a2a_answers_reach_the_final_text(
    mantyx_server: LocalMantyx, a2a_url: str, upstream_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    pids: list[int] = []

    def record(activity: mantyx_sync.ToolActivity) -> None:
        if activity.phase == "start" and activity.kind == "mcp_local":
            pids.extend(_stdio_children())

    mantyx_server.set_model(
        [
            Turn(
                "Asking both.",
                tool_calls=[
                    ToolCall("py_echo", {"text": "from mcp"}),
                    ToolCall("upper", {"message": "from a2a"}),
                ],
            ),
            Turn(tool_calls=[ToolCall("upper", {"message": "task:again"})]),
            Turn(_final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(
        mantyx_server.client(),
        system_prompt=SYSTEM,
        tools=[_py_mcp(), mantyx_sync.define_local_a2a("upper", url=a2a_url)],
        on_tool=record,
    )
    result = agent.run("go")
    assert result.text == "py_echo=from mcp | upper=FROM A2A | upper=AGAIN"
    assert upstream_calls == [("echo", {"text": "from mcp"})]

    created = next(r.json for r in mantyx_server.requests if r.path.endswith("/agent-runs"))
    kinds = {ref["name"]: ref["kind"] for ref in created["tools"]}
    assert kinds == {"py": "mcp_local", "upper": "a2a_local"}
    mcp_ref = next(ref for ref in created["tools"] if ref["kind"] == "mcp_local")
    assert mcp_ref["serverInfo"]["name"] == "mantyx-test-peer"
    assert "py_get_sum" in [t["name"] for t in mcp_ref["tools"]]
    a2a_ref = next(ref for ref in created["tools"] if ref["kind"] == "a2a_local")
    assert a2a_ref["agentCard"]["name"] == "Upper Echo Agent"

    calls = [e for e in result.events if e.type == "local_tool_call"]
    assert [e.data["kind"] for e in calls] == ["mcp_local", "a2a_local", "a2a_local"]
    assert calls[1].data["agentCard"]["name"] == "Upper Echo Agent"
    # The one-shot run started the stdio server and stopped it when it ended.
    assert len(set(pids)) == 1
    assert peerkit.reaped(pids[0])
    assert _stdio_children() == []


def test_a2a_calls_in_one_run_continue_one_conversation(
    mantyx_server: LocalMantyx, a2a_url: str
) -> None:
    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("peer", {"message": "hello"})]),
            Turn(tool_calls=[ToolCall("peer", {"message": "ctx?"})]),
            Turn(_final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(
        mantyx_server.client(),
        system_prompt=SYSTEM,
        tools=[mantyx_sync.define_local_a2a("peer", url=a2a_url)],
    )
    first, second = agent.run("x").text.split(" | ")
    assert first == "peer=HELLO"
    assert second.startswith("peer=ctx=") and len(second) > len("peer=ctx=")


@needs_proc
def test_one_shot_run_stops_its_server_when_it_fails(mantyx_server: LocalMantyx) -> None:
    pids: list[int] = []

    def record(activity: mantyx_sync.ToolActivity) -> None:
        if activity.phase == "start":
            pids.extend(_stdio_children())

    mantyx_server.set_model([Turn(tool_calls=[ToolCall("py_echo", {"text": "a"})]), Fail("boom")])
    agent = mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[_py_mcp()], on_tool=record
    )
    with pytest.raises(mantyx_sync.RunError):
        agent.run("x")
    assert len(pids) == 1 and peerkit.reaped(pids[0])


@needs_proc
def test_session_keeps_its_mcp_connection_and_closes_it_at_end(
    mantyx_server: LocalMantyx, upstream_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    seen_during_runs: list[list[int]] = []

    def record(activity: mantyx_sync.ToolActivity) -> None:
        if activity.phase == "start":
            seen_during_runs.append(_stdio_children())

    mantyx_server.set_model(
        [Turn(tool_calls=[ToolCall("py_get_sum", {"a": 2, "b": 40})]), Turn(_final_with_results)]
    )
    agent = mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[_py_mcp()], on_tool=record
    )
    assert _stdio_children() == []
    with agent.session() as chat:
        started = _stdio_children()
        assert len(started) == 1  # connected when the session was created
        assert chat.run("first").text == "py_get_sum=42"
        assert _stdio_children() == started  # still running between runs
        assert chat.run("second").text == "py_get_sum=42"
    assert seen_during_runs == [started, started]
    assert upstream_calls == [("get-sum", {"a": 2, "b": 40})] * 2
    assert peerkit.reaped(started[0])
    assert _stdio_children() == []
    assert mantyx_server.sessions[chat.id].status == "ended"


def test_dead_mcp_server_fails_before_anything_is_sent(mantyx_server: LocalMantyx) -> None:
    client = mantyx_server.client()
    exits = mantyx_sync.define_local_mcp(
        "dead", command=peerkit.PYTHON, args=["-c", "import sys; sys.exit(3)"], timeout=10
    )
    with pytest.raises(mantyx_sync.ToolResolutionError) as info:
        mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[exits]).run("x")
    assert "'dead'" in str(info.value)
    missing = mantyx_sync.define_local_mcp("ghost", command="/nonexistent/mcp-server-binary")
    with pytest.raises(mantyx_sync.ToolResolutionError, match="command not found"):
        mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[missing]).run("x")
    with pytest.raises(mantyx_sync.ToolResolutionError):
        mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[exits]).session()
    assert mantyx_server.requests == []


@needs_proc
def test_unreachable_a2a_peer_fails_before_anything_is_sent_and_closes_mcp(
    mantyx_server: LocalMantyx,
) -> None:
    # The MCP server connects first; the A2A failure must stop it again.
    nobody = f"http://127.0.0.1:{peerkit.free_port()}"
    agent = mantyx_sync.Agent(
        mantyx_server.client(),
        system_prompt=SYSTEM,
        tools=[_py_mcp(), mantyx_sync.define_local_a2a("nobody", url=nobody, timeout=5)],
    )
    with pytest.raises(mantyx_sync.ToolResolutionError, match="'nobody'"):
        agent.run("x")
    assert mantyx_server.requests == []
    assert _stdio_children() == []


def test_dashed_upstream_name_is_dispatched_through_the_name_map(
    mantyx_server: LocalMantyx, upstream_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("calc_get_sum", {"a": 20, "b": 22})]),
            Turn(_final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(
        mantyx_server.client(),
        system_prompt=SYSTEM,
        tools=[_py_mcp("calc", tool_filter=["get-sum"])],
    )
    result = agent.run("x")
    assert result.text == "calc_get_sum=42"
    call = next(e for e in result.events if e.type == "local_tool_call")
    assert call.data["mcpToolName"] == "calc_get_sum" and call.data["mcpServer"] == "calc"
    assert upstream_calls == [("get-sum", {"a": 20, "b": 22})]
    created = next(r.json for r in mantyx_server.requests if r.path.endswith("/agent-runs"))
    assert [t["name"] for t in created["tools"][0]["tools"]] == ["calc_get_sum"]


def test_invalid_mcp_args_are_answered_without_calling_the_server(
    mantyx_server: LocalMantyx, upstream_calls: list[tuple[str, dict[str, Any]]]
) -> None:
    mantyx_server.set_model(
        [
            Turn(
                tool_calls=[
                    ToolCall("py_get_sum", {"a": "two", "b": 3}),
                    ToolCall("py_echo", {}),
                    ToolCall("py_echo", {"text": "valid"}),
                    ToolCall("py_fail", {"message": "nope"}),
                ]
            ),
            Turn(_final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[_py_mcp()])
    run = agent.start("x")
    result = run.wait()
    posted = _posted(mantyx_server, run.id)
    assert "invalid arguments" in posted["tu_1_1"]["error"]
    assert "invalid arguments" in posted["tu_1_2"]["error"]
    assert posted["tu_1_3"]["result"] == "valid"
    # An isError result from the server (mcp hides the exception text itself).
    assert "Error executing tool fail" in posted["tu_1_4"]["error"]
    # Only the valid calls reached the server.
    assert sorted(upstream_calls) == [("echo", {"text": "valid"}), ("fail", {"message": "nope"})]
    assert result.text.startswith("py_get_sum=ERR:invalid arguments")


def test_mcp_local_calls_carry_their_server_and_are_routed_by_it(
    mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:
    routed: list[tuple[str, str | None, str | None]] = []
    lock = threading.Lock()
    real = McpConnection.call

    def spy(self: McpConnection, call: LocalToolCall, *, timeout: float | None) -> str:
        with lock:
            routed.append((self.name, call.mcp_server, call.name))
        return real(self, call, timeout=timeout)

    monkeypatch.setattr(McpConnection, "call", spy)
    mantyx_server.set_model(
        [
            Turn(
                tool_calls=[
                    ToolCall("alpha_echo", {"text": "a"}),
                    ToolCall("beta_echo", {"text": "b"}),
                    # Declared by no ref: the emulator labels it with its own name,
                    # so only routing by mcpServer reaches the "alpha" connection.
                    ToolCall("alpha", {"text": "c"}, kind="mcp_local"),
                ]
            ),
            Turn(_final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[_py_mcp("alpha"), _py_mcp("beta")]
    )
    result = agent.run("x")
    calls = {e.data["toolUseId"]: e.data for e in result.events if e.type == "local_tool_call"}
    assert {k: (c["kind"], c["mcpServer"]) for k, c in calls.items()} == {
        "tu_1_1": ("mcp_local", "alpha"),
        "tu_1_2": ("mcp_local", "beta"),
        "tu_1_3": ("mcp_local", "alpha"),
    }
    assert sorted(routed) == [
        ("alpha", "alpha", "alpha"),
        ("alpha", "alpha", "alpha_echo"),
        ("beta", "beta", "beta_echo"),
    ]
    assert result.text.split(" | ")[:2] == ["alpha_echo=a", "beta_echo=b"]
    assert "unknown tool 'alpha' on MCP server 'alpha'" in result.text


def test_parallel_mcp_calls_overlap_on_one_server(mantyx_server: LocalMantyx) -> None:
    # "meet" returns only once all four calls are inside the server at the same time.
    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("py_meet", {"key": "k", "count": 4}) for _ in range(4)]),
            Turn(_final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[_py_mcp()])
    assert agent.run("x").text == " | ".join(["py_meet=met k"] * 4)


def test_slow_mcp_tool_times_out_and_the_run_goes_on(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model(
        [
            Turn(
                tool_calls=[
                    ToolCall("py_nap", {"seconds": 30}),
                    ToolCall("py_echo", {"text": "ok"}),
                ]
            ),
            Turn(tool_calls=[ToolCall("py_echo", {"text": "after"})]),
            Turn(_final_with_results),
        ]
    )
    client = mantyx_server.client(tool_timeout=0.5)
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[_py_mcp()])
    nap, echo, after = agent.run("x").text.split(" | ")
    assert nap.startswith("py_nap=ERR:") and "timed out" in nap
    assert (echo, after) == ("py_echo=ok", "py_echo=after")


def test_failed_a2a_task_reaches_the_model_as_an_error(
    mantyx_server: LocalMantyx, a2a_url: str
) -> None:
    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("peer", {"message": "fail:no budget left"})]),
            Turn(tool_calls=[ToolCall("peer", {})]),
            Turn(_final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(
        mantyx_server.client(),
        system_prompt=SYSTEM,
        tools=[mantyx_sync.define_local_a2a("peer", url=a2a_url)],
    )
    failed, missing = agent.run("x").text.split(" | ")
    assert failed.startswith("peer=ERR:") and "no budget left" in failed
    assert missing.startswith("peer=ERR:") and "message" in missing


@needs_proc
def test_resumed_session_reconnects_its_mcp_server(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model(
        [Turn(tool_calls=[ToolCall("py_get_sum", {"a": 1, "b": 2})]), Turn(_final_with_results)]
    )
    client = mantyx_server.client()
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[_py_mcp()])
    first = agent.session()
    try:
        assert first.run("one").text == "py_get_sum=3"
        # As another process would: same definitions, its own server process.
        with client.sessions.resume(first.id, tools=[_py_mcp()]) as resumed:
            assert len(_stdio_children()) == 2
            assert resumed.run("two").text == "py_get_sum=3"
        assert len(_stdio_children()) == 1
    finally:
        first.end()
    assert _stdio_children() == []
    messages = [r for r in mantyx_server.requests if r.path.endswith(f"{first.id}/messages")]
    assert len(messages) == 2


@needs_proc
def test_leaving_a_stream_early_stops_the_server_mid_call(mantyx_server: LocalMantyx) -> None:
    started = threading.Event()
    pids: list[int] = []

    def record(activity: mantyx_sync.ToolActivity) -> None:
        if activity.phase == "start":
            pids.extend(_stdio_children())
            started.set()

    mantyx_server.set_model([Turn(tool_calls=[ToolCall("py_nap", {"seconds": 30})]), Turn("never")])
    agent = mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[_py_mcp()], on_tool=record
    )
    with agent.stream("x") as run:
        for event in run:
            if event.type == "local_tool_call":
                break
        assert started.wait(10)
    assert len(pids) == 1 and peerkit.reaped(pids[0])
    assert mantyx_server.wait_for_run(run.id, status="cancelled", timeout=5).status == "cancelled"
