"""define_local_agent_api: a MANTYX agent delegating to a real agentscope-runtime AgentApp."""

from __future__ import annotations

from typing import Any

import pytest
from peerkit import tool_call

import mantyx_sync
from mantyx_sync import SpecError, ToolError, define_local_agent_api
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

pytestmark = pytest.mark.timeout(90)


def _results(mantyx_server: LocalMantyx) -> list[dict[str, Any]]:
    return [
        body
        for run in sorted(mantyx_server.runs.values(), key=lambda r: r.number)
        for body in run.tool_results.values()
    ]


def _ask(request: str) -> list[Any]:
    return [
        Turn("", tool_calls=[ToolCall("helper", {"request": request})]),
        Turn(lambda ctx: str(ctx.tool_results[-1].get("result", ctx.tool_results[-1]))),
    ]


def test_answer_with_remote_tool_calls_summarised(
    mantyx_server: LocalMantyx, agentscope_url: str
) -> None:
    helper = define_local_agent_api(
        "helper", agentscope_url, description="Upper-cases things.", headers={"X-Key": "sekrit-99"}
    )
    mantyx_server.set_model(_ask("upper:abc"))
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Delegate.", tools=[helper])
    result = agent.run("please")
    assert result.text == 'ABC\n\n[remote tool calls]\n- upper({"text": "abc"}) → ABC'
    ref = next(iter(mantyx_server.runs.values())).spec["tools"][0]
    assert ref["kind"] == "local" and ref["name"] == "helper"
    assert ref["description"] == "Upper-cases things."
    assert ref["parameters"]["required"] == ["request"]
    assert "sekrit-99" not in repr(helper)


def test_one_session_id_per_mantyx_session_and_per_run(
    mantyx_server: LocalMantyx, agentscope_url: str
) -> None:
    helper = define_local_agent_api("helper", f"{agentscope_url}/process")
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Delegate.", tools=[helper])
    with agent.session() as chat:
        mantyx_server.set_model(_ask("first"))
        assert chat.run("one").text == "echo: first"
        mantyx_server.set_model(_ask("history?"))
        assert chat.run("two").text == "first | history?"
    # A one-shot run is a new remote conversation.
    mantyx_server.set_model(_ask("history?"))
    assert agent.run("three").text == "history?"


def test_remote_failure_is_a_tool_error(mantyx_server: LocalMantyx, agentscope_url: str) -> None:
    helper = define_local_agent_api("helper", agentscope_url)
    mantyx_server.set_model(_ask("fail:the disk is full"))
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Delegate.", tools=[helper])
    agent.run("go")
    (answer,) = _results(mantyx_server)
    assert "result" not in answer
    assert "the remote agent failed" in answer["error"] and "the disk is full" in answer["error"]


def test_unreachable_endpoint_is_a_tool_error() -> None:
    conn = define_local_agent_api("helper", "http://127.0.0.1:9/", timeout=5).connect()
    try:
        with pytest.raises(ToolError, match="cannot reach the Agent API endpoint"):
            conn.call(tool_call("helper", {"request": "hi"}), timeout=5)
        with pytest.raises(ToolError, match="request"):
            conn.call(tool_call("helper"), timeout=5)
    finally:
        conn.close()


def test_bad_definitions_fail_before_anything_is_sent() -> None:
    with pytest.raises(SpecError, match="name"):
        define_local_agent_api("bad name", "http://x")
    with pytest.raises(SpecError, match="url"):
        define_local_agent_api("ok", "ftp://x")
    with pytest.raises(SpecError, match="timeout"):
        define_local_agent_api("ok", "http://x", timeout=0)
    with pytest.raises(SpecError, match="header"):
        define_local_agent_api("ok", "http://x", headers={"A": 1})  # type: ignore[dict-item]


def test_calls_within_one_run_continue_one_remote_conversation(
    mantyx_server: LocalMantyx, agentscope_url: str
) -> None:
    helper = define_local_agent_api("helper", agentscope_url)
    mantyx_server.set_model(
        [
            Turn("", tool_calls=[ToolCall("helper", {"request": "first"})]),
            Turn("", tool_calls=[ToolCall("helper", {"request": "history?"})]),
            Turn(lambda ctx: str(ctx.tool_results[-1].get("result"))),
        ]
    )
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Delegate.", tools=[helper])
    assert agent.run("go").text == "first | history?"
