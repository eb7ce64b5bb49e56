"""agent_api_app against agentscope-runtime's own Agent API client (its own venv).

Plus raw-HTTP checks of the non-streaming reply, errors, heartbeats and a
client that disconnects mid-stream.
"""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Any

import peerkit
import pytest
import requests

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import Fail, LocalMantyx, ToolCall, Turn

pytestmark = pytest.mark.timeout(90)

needs_agentscope = pytest.mark.skipif(
    not peerkit.AGENTSCOPE_PYTHON.exists(),
    reason="agentscope-runtime venv missing (run tests/peers/make_agentscope_venv.sh)",
)


def _agentscope(url: str, text: str, *flags: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            str(peerkit.AGENTSCOPE_PYTHON),
            str(peerkit.PEERS / "agentapi_client.py"),
            url,
            text,
            *flags,
        ],
        capture_output=True,
        text=True,
        timeout=80,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.fixture
def shout_agent(mantyx_server: LocalMantyx) -> mantyx_sync.Agent:
    @mantyx_sync.local_tool(read_only=True)
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    return mantyx_sync.Agent(mantyx_server.client(), system_prompt="Use tools.", tools=[shout])


@needs_agentscope
def test_agentscope_client_streams_text_and_tool_activity(
    shout_agent: mantyx_sync.Agent, serve_wsgi: Any, mantyx_server: LocalMantyx
) -> None:
    url = serve_wsgi(
        serve.agent_api_app(shout_agent, authenticate=serve.bearer_token("tok-abcdef"))
    ).url
    out = _agentscope(f"{url}/process", "hello agent", "--session", "s-1", "--token", "tok-abcdef")
    events = out["events"]
    assert events[0] == ["response", None, "created"]
    assert events[1] == ["response", None, "in_progress"]
    assert events[-1] == ["response", None, "completed"]
    types = [e[1] for e in events if e[0] == "message" and e[2] == "completed"]
    assert types == ["message", "plugin_call", "plugin_call_output", "message"]
    assert ["content", "text", "in_progress"] in events  # deltas as the run streams
    assert out["status"] == "completed" and out["session_id"] == "s-1"
    assert out["answer"] == "You said: hello agent\nshout → EXAMPLE"
    call, output = out["output"][1], out["output"][2]
    assert call["content"][0]["data"]["name"] == "shout"
    assert json.loads(call["content"][0]["data"]["arguments"]) == {"text": "example"}
    assert output["role"] == "tool" and output["content"][0]["data"]["output"] == "EXAMPLE"
    # The same session_id continues the same MANTYX session.
    _agentscope(f"{url}/process", "again", "--session", "s-1", "--token", "tok-abcdef")
    assert len(mantyx_server.sessions) == 1 and len(mantyx_server.runs) == 2


@needs_agentscope
def test_agentscope_client_sees_a_failed_run(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    mantyx_server.set_model([Fail("model exploded", code="provider_error")])
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="x")
    out = _agentscope(f"{serve_wsgi(serve.agent_api_app(agent)).url}/process", "hi")
    assert out["status"] == "failed"
    assert out["error"]["code"] == "run_failed" and "model exploded" in out["error"]["message"]


def test_non_streaming_returns_the_final_response(
    shout_agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    url = serve_wsgi(serve.agent_api_app(shout_agent)).url
    body = {
        "input": [
            {"role": "user", "type": "message", "content": [{"type": "text", "text": "plain"}]}
        ],
        "stream": False,
    }
    reply = requests.post(f"{url}/process", json=body, timeout=30)
    assert reply.headers["Content-Type"] == "application/json"
    final = reply.json()
    assert final["object"] == "response" and final["status"] == "completed"
    assert final["session_id"]  # a new conversation's id
    assert [m["type"] for m in final["output"]] == [
        "message",
        "plugin_call",
        "plugin_call_output",
        "message",
    ]
    assert final["usage"]["output_tokens"] > 0


def test_bad_requests_use_the_error_model(shout_agent: mantyx_sync.Agent, serve_wsgi: Any) -> None:
    url = serve_wsgi(serve.agent_api_app(shout_agent)).url
    json_type = {"Content-Type": "application/json"}
    reply = requests.post(f"{url}/process", data=b"{nope", headers=json_type, timeout=10)
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "invalid_request"
    reply = requests.post(f"{url}/process", json={"input": []}, timeout=10)
    assert reply.status_code == 400 and "user message" in reply.json()["error"]["message"]
    assert requests.get(f"{url}/process", timeout=10).status_code == 405
    assert requests.get(f"{url}/health", timeout=10).json() == {"status": "ok"}


def test_heartbeats_while_a_tool_runs_and_disconnect_cancels(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any
) -> None:
    agent, _, release = slow_agent("")
    app = serve.agent_api_app(agent, heartbeat=0.1)
    url = serve_wsgi(app).url
    body = {
        "input": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
        "session_id": "s-slow",
    }
    try:
        with requests.post(f"{url}/process", json=body, stream=True, timeout=30) as reply:
            seen: list[dict[str, Any]] = []
            for line in reply.iter_lines():
                if line.startswith(b"data: "):
                    seen.append(json.loads(line[6:]))
                if sum(o.get("type") == "heartbeat" for o in seen) >= 2:
                    break
        assert any(o.get("type") == "plugin_call" for o in seen)
        seqs = [o["sequence_number"] for o in seen]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        run = mantyx_server.wait_for_run(status="cancelled", timeout=10)
        assert run.status == "cancelled"
        gate = threading.Event()
        for _ in range(200):
            if not peerkit.threads_named("mantyx-serve"):
                break
            gate.wait(0.05)  # a poll interval, not synchronisation
        assert not peerkit.threads_named("mantyx-serve")
    finally:
        release.set()


def test_define_local_agent_api_round_trips_through_agent_api_app(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    def model(ctx: Any) -> Any:
        if ctx.spec.get("systemPrompt") == "Served.":
            return Turn(f"served saw: {ctx.prompt}")
        if not ctx.tool_results:
            return Turn("", tool_calls=[ToolCall("peer", {"request": "ping"})])
        return Turn(str(ctx.tool_results[-1].get("result")))

    mantyx_server.set_model(model)
    served = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Served.")
    url = serve_wsgi(serve.agent_api_app(served)).url
    peer = mantyx_sync.define_local_agent_api("peer", url)
    caller = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Caller.", tools=[peer])
    assert caller.run("go").text == "served saw: ping"


def _data(lines: Any) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in lines if line.startswith(b"data: ")]


def test_disconnect_frees_the_session_for_its_next_message(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any
) -> None:
    agent, started, release = slow_agent("")
    app = serve.agent_api_app(agent, heartbeat=0.1)
    url = serve_wsgi(app).url
    body = {"input": [{"role": "user", "content": "go"}], "session_id": "s-gone"}
    try:
        with requests.post(f"{url}/process", json=body, stream=True, timeout=30) as reply:
            for line in reply.iter_lines():
                if b'"plugin_call"' in line:
                    break
            assert started.wait(10)
        assert mantyx_server.wait_for_run(status="cancelled", timeout=10).status == "cancelled"
        # The same session_id answers at once: the cancelled turn let go of it.
        mantyx_server.set_model(lambda ctx: Turn("next"))
        body = {"input": [{"role": "user", "content": "again"}], "session_id": "s-gone"}
        with requests.post(f"{url}/process", json=body, stream=True, timeout=30) as reply:
            final = _data(reply.iter_lines())[-1]
        assert final["status"] == "completed" and final["session_id"] == "s-gone"
        (session,) = mantyx_server.sessions.values()
        assert [r.session_id for r in mantyx_server.runs.values()] == [session.id] * 2
    finally:
        release.set()
    assert peerkit.wait_until(lambda: not peerkit.threads_named("mantyx-serve"))
    assert peerkit.wait_until(lambda: not peerkit.threads_named("mantyx-tool"))
    app.close()
    assert session.status == "ended"


def test_lru_eviction_ends_the_session_and_its_run_is_canceled(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any
) -> None:
    agent, started, release = slow_agent("")
    app = serve.agent_api_app(agent, max_sessions=1)
    url = serve_wsgi(app).url
    first = {"input": [{"role": "user", "content": "long"}], "session_id": "s-old"}
    try:
        with requests.post(f"{url}/process", json=first, stream=True, timeout=30) as reply:
            lines = reply.iter_lines()
            for line in lines:
                if b'"plugin_call"' in line:
                    break
            assert started.wait(10)
            old_session = app.conversations.session_id("s-old")
            # A second conversation pushes the first one out: its session is ended
            # on MANTYX, which cancels the run its stream is following.
            mantyx_server.set_model(lambda ctx: Turn("new one"))
            second = {
                "input": [{"role": "user", "content": "hi"}],
                "session_id": "s-new",
                "stream": False,
            }
            final = requests.post(f"{url}/process", json=second, timeout=30).json()
            assert final["status"] == "completed" and final["session_id"] == "s-new"
            rest = _data(lines)
    finally:
        release.set()
    assert rest[-1]["object"] == "response" and rest[-1]["status"] == "canceled"
    assert rest[-1]["session_id"] == "s-old" and rest[-1]["completed_at"] is not None
    assert app.conversations.session_id("s-old") is None and len(app.conversations) == 1
    assert old_session is not None and mantyx_server.sessions[old_session].status == "ended"
    app.close()


def test_request_tools_are_accepted_and_the_agents_own_are_used(
    shout_agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    url = serve_wsgi(serve.agent_api_app(shout_agent)).url
    tool = {
        "type": "function",
        "function": {"name": "other", "description": "x", "parameters": {"type": "object"}},
    }
    body = {"input": [{"role": "user", "content": "hi"}], "tools": [tool], "stream": False}
    final = requests.post(f"{url}/process", json=body, timeout=30).json()
    assert final["status"] == "completed"
    calls = [m for m in final["output"] if m["type"] == "plugin_call"]
    assert [c["content"][0]["data"]["name"] for c in calls] == ["shout"]


def test_unknown_routes_and_methods_use_the_error_model(
    shout_agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    url = serve_wsgi(serve.agent_api_app(shout_agent)).url
    for reply, status in (
        (requests.get(f"{url}/nope", timeout=10), 404),
        (requests.get(f"{url}/process", timeout=10), 405),
    ):
        assert reply.status_code == status
        error = reply.json()["error"]
        assert isinstance(error["code"], str) and isinstance(error["message"], str)


def test_define_local_agent_api_sends_its_headers(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    def model(ctx: Any) -> Any:
        if ctx.spec.get("systemPrompt") == "Served.":
            return Turn(f"served saw: {ctx.prompt}")
        if not ctx.tool_results:
            return Turn("", tool_calls=[ToolCall("peer", {"request": "ping"})])
        last = ctx.tool_results[-1]
        return Turn(str(last.get("result", last.get("error"))))

    mantyx_server.set_model(model)
    served = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Served.")
    url = serve_wsgi(serve.agent_api_app(served, authenticate=serve.bearer_token("tok-right"))).url
    good = mantyx_sync.define_local_agent_api(
        "peer", url, headers={"Authorization": "Bearer tok-right"}
    )
    bad = mantyx_sync.define_local_agent_api(
        "peer", url, headers={"Authorization": "Bearer tok-wrong"}
    )
    run = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Caller.", tools=[good])
    assert run.run("go").text == "served saw: ping"
    refused = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Caller.", tools=[bad])
    text = refused.run("go").text
    assert "HTTP 401" in text and "tok-wrong" not in text


def test_a_session_that_cannot_be_created_is_a_failed_response(
    shout_agent: mantyx_sync.Agent, serve_wsgi: Any, mantyx_server: LocalMantyx
) -> None:
    app = serve.agent_api_app(shout_agent)
    url = serve_wsgi(app).url
    mantyx_server.fail_next("POST", r"/agent-sessions/?$", 400)
    body = {"input": [{"role": "user", "content": "hi"}], "session_id": "s-x"}
    with requests.post(f"{url}/process", json=body, stream=True, timeout=30) as reply:
        objects = _data(reply.iter_lines())
    assert [o["status"] for o in objects] == ["created", "failed"]
    assert objects[-1]["error"]["code"] == "agent_unavailable"
    assert mantyx_server.runs == {} and len(app.conversations) == 0
    final = requests.post(f"{url}/process", json={**body, "stream": False}, timeout=30).json()
    assert final["status"] == "completed" and final["session_id"] == "s-x"


def test_define_local_agent_api_timeout_is_a_tool_error_and_cancels_the_remote_run(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    release = threading.Event()

    @mantyx_sync.local_tool
    def slow() -> str:
        """Wait for the test."""
        release.wait(20)
        return "late"

    def model(ctx: Any) -> Any:
        if ctx.spec.get("systemPrompt") == "Served.":
            return Turn("", tool_calls=[ToolCall("slow")]) if not ctx.tool_results else Turn("x")
        if not ctx.tool_results:
            return Turn("", tool_calls=[ToolCall("peer", {"request": "ping"})])
        return Turn(str(ctx.tool_results[-1].get("error")))

    mantyx_server.set_model(model)
    served = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Served.", tools=[slow])
    url = serve_wsgi(serve.agent_api_app(served, heartbeat=0.1)).url
    peer = mantyx_sync.define_local_agent_api("peer", url, timeout=1)
    caller = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Caller.", tools=[peer])
    try:
        assert "did not finish in time" in caller.run("go").text
        served_run = next(
            r for r in mantyx_server.runs.values() if r.spec["systemPrompt"] == "Served."
        )
        assert mantyx_server.wait_for_run(served_run.id, status="cancelled", timeout=10)
    finally:
        release.set()


def _shapes(process_url: str, text: str) -> dict[tuple[str, str | None], set[str]]:
    """The fields of every streamed object, by (object, content type)."""
    body = {"input": [{"role": "user", "content": [{"type": "text", "text": text}]}]}
    with requests.post(process_url, json=body, stream=True, timeout=30) as reply:
        objects = _data(reply.iter_lines())
    shapes: dict[tuple[str, str | None], set[str]] = {}
    for obj in objects:
        kind = (obj["object"], obj.get("type") if obj["object"] == "content" else None)
        shapes.setdefault(kind, set()).update(obj)
    return shapes


@needs_agentscope
def test_objects_carry_every_field_agentscope_runtime_sends(
    shout_agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    # The reference: a real agentscope-runtime AgentApp calling a tool and answering.
    port = peerkit.free_port()
    script = [str(peerkit.PEERS / "agentscope_app.py"), str(port)]
    with peerkit.http_peer(script, port, python=str(peerkit.AGENTSCOPE_PYTHON)):
        theirs = _shapes(f"http://127.0.0.1:{port}/process", "upper:abc")
    ours = _shapes(f"{serve_wsgi(serve.agent_api_app(shout_agent)).url}/process", "hi")
    assert set(ours) == set(theirs)
    missing = {kind: sorted(fields - ours[kind]) for kind, fields in theirs.items()}
    assert all(not fields for fields in missing.values()), missing
