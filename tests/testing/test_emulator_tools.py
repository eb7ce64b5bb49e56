"""Emulator tool round trips: local/a2a_local/mcp_local calls, results, timeouts, cancel."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mantyx_sync.testing import ToolCall, Turn

LOCAL = {
    "kind": "local",
    "name": "read_file",
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "mode": {"type": "string", "enum": ["text", "bin"]},
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array"},
            "opts": {"type": "object"},
            "unused": {"type": "string"},
        },
        "required": ["path", "mode", "n", "x", "flag", "tags", "opts"],
    },
}
A2A = {
    "kind": "a2a_local",
    "name": "hr_agent",
    "agentCard": {
        "name": "Acme HR",
        "url": "https://hr.intranet/a2a",
        "skills": [{"id": "p"}],
        "x-extra": {"kept": True},
    },
}
MCP = {
    "kind": "mcp_local",
    "name": "fs",
    "serverInfo": {"name": "mcp-fs", "version": "0.4.1"},
    "tools": [
        {
            "name": "fs_list",
            "inputSchema": {
                "type": "object",
                "properties": {"dir": {"type": "string"}},
                "required": ["dir"],
            },
        },
        {"name": "fs_stat"},
    ],
}
MCP_NO_INFO = {"kind": "mcp_local", "name": "jira", "tools": [{"name": "jira_get"}]}


def test_local_tool_round_trip_and_echo(api: Any) -> None:
    api.server.set_model(
        [
            Turn("Reading.", tool_calls=[ToolCall("read_file", {"path": "/x"})]),
            Turn(lambda ctx: f"got {ctx.tool_results[0]['result']}"),
        ]
    )
    run_id = api.create_run(tools=[LOCAL])
    call = api.server.wait_for_tool_call()
    assert call == {
        "toolUseId": call["toolUseId"],
        "name": "read_file",
        "args": {"path": "/x"},
        "kind": "local",
    }
    response = api.tool_result(run_id, call["toolUseId"], result="contents")
    assert response.status_code == 200
    assert response.json() == {"ok": True}
    run = api.server.wait_for_run(run_id, status="succeeded")
    events = api.events(run_id)
    assert api.types(events) == [
        "assistant_delta",
        "assistant_message",
        "local_tool_call",
        "local_tool_result_in",
        "assistant_delta",
        "assistant_message",
        "result",
    ]
    assert events[1]["data"]["toolCalls"] == [
        {"id": call["toolUseId"], "name": "read_file", "input": {"path": "/x"}}
    ]
    assert events[3]["data"] == {"toolUseId": call["toolUseId"], "output": "contents"}
    assert events[-1]["data"]["text"] == "got contents"
    assert run.tool_results == {
        call["toolUseId"]: {"toolUseId": call["toolUseId"], "result": "contents"}
    }
    assert run.events == events


def test_second_post_for_same_tool_use_is_404_and_unknown_id_too(api: Any) -> None:
    api.server.set_model(
        [Turn("", tool_calls=[ToolCall("read_file"), ToolCall("read_file")]), Turn("done")]
    )
    run_id = api.create_run(tools=[LOCAL])
    first = api.server.wait_for_tool_call()
    second = api.server.wait_for_tool_call()
    assert first["toolUseId"] != second["toolUseId"]
    assert api.tool_result(run_id, first["toolUseId"], error="nope").status_code == 200
    again = api.tool_result(run_id, first["toolUseId"], result="late")
    assert again.status_code == 404
    assert again.json()["error"] == "unknown_tool_use"
    assert api.tool_result(run_id, "tu_unknown", result="x").status_code == 404
    assert api.server.runs[run_id].status == "running"
    api.tool_result(run_id, second["toolUseId"], result="ok")
    api.server.wait_for_run(run_id, status="succeeded")
    echo = [e["data"] for e in api.events(run_id) if e["type"] == "local_tool_result_in"]
    assert echo == [
        {"toolUseId": first["toolUseId"], "error": "nope"},
        {"toolUseId": second["toolUseId"], "output": "ok"},
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"result": "x"},
        {"toolUseId": "tu_1_1"},
        {"toolUseId": "tu_1_1", "result": "x", "error": "y"},
        {"toolUseId": "tu_1_1", "result": {"structured": True}},
        {"toolUseId": 5, "result": "x"},
        ["not", "an", "object"],
    ],
)
def test_bad_tool_result_bodies_are_400(api: Any, body: Any) -> None:
    api.server.set_model([Turn("", tool_calls=[ToolCall("read_file")]), Turn("x")])
    run_id = api.create_run(tools=[LOCAL])
    api.server.wait_for_tool_call()
    response = api.post(f"/agent-runs/{run_id}/tool-results", body)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_tool_result_for_unknown_run_is_404(api: Any) -> None:
    response = api.tool_result("run_nope", "tu_1", result="x")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_tool_timeout_ends_run_and_late_post_is_409(make_api: Any) -> None:
    api = make_api(
        tool_timeout=0.2, model=[Turn("", tool_calls=[ToolCall("read_file")]), Turn("never")]
    )
    run_id = api.create_run(tools=[LOCAL])
    call = api.server.wait_for_tool_call()
    run = api.server.wait_for_run(run_id, status="failed", timeout=5)
    result = run.events[-1]
    assert result["type"] == "result"
    assert result["data"]["subtype"] == "error_local_tool_timeout"
    assert call["toolUseId"] in result["data"]["error"]
    late = api.tool_result(run_id, call["toolUseId"], result="late")
    assert late.status_code == 409
    assert late.json()["error"] == "run_terminal"
    assert api.get(f"/agent-runs/{run_id}").json()["status"] == "failed"


def test_cancel_while_waiting_on_a_tool(api: Any) -> None:
    api.server.set_model([Turn("", tool_calls=[ToolCall("read_file")]), Turn("never")])
    run_id = api.create_run(tools=[LOCAL])
    call = api.server.wait_for_tool_call()
    response = api.post(f"/agent-runs/{run_id}/cancel")
    assert response.status_code == 200
    assert response.json() == {"ok": True}
    run = api.server.wait_for_run(run_id, status="cancelled", timeout=2)
    assert run.events[-1]["type"] == "cancelled"
    assert run.events[-1]["data"] == {"reason": "user"}
    assert api.post(f"/agent-runs/{run_id}/cancel").status_code == 200
    assert api.tool_result(run_id, call["toolUseId"], result="x").status_code == 409
    assert api.types(api.events(run_id))[-1] == "cancelled"
    assert api.post("/agent-runs/run_nope/cancel").status_code == 404
    assert api.get(f"/agent-runs/{run_id}").json()["status"] == "cancelled"


def test_tool_result_status_204(make_api: Any) -> None:
    api = make_api(
        tool_result_status=204, model=[Turn("", tool_calls=[ToolCall("read_file")]), Turn("x")]
    )
    run_id = api.create_run(tools=[LOCAL])
    call = api.server.wait_for_tool_call()
    response = api.tool_result(run_id, call["toolUseId"], result="ok")
    assert response.status_code == 204
    assert response.content == b""


def test_a2a_and_mcp_local_extras(api: Any) -> None:
    api.server.set_model(
        [
            Turn(
                "",
                tool_calls=[
                    ToolCall("hr_agent", {"message": "pto?"}),
                    ToolCall("fs_list", {"dir": "/"}),
                    ToolCall("jira_get"),
                ],
            ),
            Turn("done"),
        ]
    )
    run_id = api.create_run(tools=[A2A, MCP, MCP_NO_INFO])
    a2a, mcp, jira = (api.server.wait_for_tool_call() for _ in range(3))
    assert a2a["kind"] == "a2a_local"
    assert a2a["agentCard"] == A2A["agentCard"]
    assert mcp["kind"] == "mcp_local"
    assert mcp["mcpServer"] == "fs"
    assert mcp["mcpToolName"] == "fs_list"
    assert mcp["mcpServerInfo"] == {"name": "mcp-fs", "version": "0.4.1"}
    assert jira["mcpServer"] == "jira" and "mcpServerInfo" not in jira
    for call in (a2a, mcp, jira):
        api.tool_result(run_id, call["toolUseId"], result="r")
    api.server.wait_for_run(run_id, status="succeeded")


def test_server_resolved_tools_are_informational(api: Any) -> None:
    api.server.set_model(
        [
            Turn(
                "",
                tool_calls=[
                    ToolCall("web_search", {"q": "x"}),
                    ToolCall("read_file", server_result="forced"),
                ],
            ),
            Turn(lambda ctx: f"{len(ctx.tool_results)} local results"),
        ]
    )
    run_id = api.create_run(tools=[{"kind": "mantyx_plugin", "name": "web_search"}, LOCAL])
    run = api.server.wait_for_run(run_id, status="succeeded")
    events = run.events
    assert api.types(events) == [
        "assistant_message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "assistant_delta",
        "assistant_message",
        "result",
    ]
    assert events[1]["data"] == {"toolUseId": "tu_1_1", "name": "web_search", "input": {"q": "x"}}
    assert events[2]["data"]["ok"] is True
    assert events[2]["data"]["name"] == "web_search"
    assert {"result", "summary"} <= set(events[2]["data"])
    assert events[4]["data"]["result"] == "forced"
    assert events[-1]["data"]["text"] == "0 local results"


def test_forced_kind_and_explicit_id(api: Any) -> None:
    api.server.set_model(
        [Turn("", tool_calls=[ToolCall("ghost", id="call_1", kind="local")]), Turn("x")]
    )
    run_id = api.create_run()
    call = api.server.wait_for_tool_call()
    assert call == {"toolUseId": "call_1", "name": "ghost", "args": {}, "kind": "local"}
    api.tool_result(run_id, "call_1", result="ok")
    api.server.wait_for_run(run_id, status="succeeded")


def test_default_model_calls_only_read_only_tools(api: Any) -> None:
    # Unscripted, only tools declared read-only are called: a local tool with
    # readOnly, an MCP tool whose annotations say readOnlyHint. Tools that may
    # change something (no flag, readOnlyHint false, an A2A peer) are left alone.
    read_only_local = {**LOCAL, "readOnly": True}
    writer = {"kind": "local", "name": "write_file", "parameters": LOCAL["parameters"]}
    mcp = {
        **MCP,
        "tools": [
            {**MCP["tools"][0], "annotations": {"readOnlyHint": True}},
            {"name": "fs_stat", "annotations": {"readOnlyHint": True}},
            {"name": "fs_write", "annotations": {"readOnlyHint": False, "destructiveHint": True}},
            {"name": "fs_mkdir"},
            {"name": "fs_touch", "annotations": {"readOnlyHint": "yes"}},
        ],
    }
    run_id = api.create_run(prompt="check", tools=[read_only_local, writer, A2A, mcp])
    calls = [api.server.wait_for_tool_call() for _ in range(3)]
    by_name = {c["name"]: c for c in calls}
    assert list(by_name) == ["read_file", "fs_list", "fs_stat"]
    assert by_name["read_file"]["args"] == {
        "path": "example",
        "mode": "text",
        "n": 1,
        "x": 1.5,
        "flag": True,
        "tags": [],
        "opts": {},
    }
    assert by_name["fs_list"]["args"] == {"dir": "example"}
    assert by_name["fs_stat"]["args"] == {}
    for call in reversed(calls):
        if call["name"] == "fs_stat":
            api.tool_result(run_id, call["toolUseId"], error="denied")
        else:
            api.tool_result(run_id, call["toolUseId"], result=f"{call['name']} ok")
    run = api.server.wait_for_run(run_id, status="succeeded")
    called = [e["data"]["name"] for e in run.events if e["type"] == "local_tool_call"]
    assert called == ["read_file", "fs_list", "fs_stat"]
    messages = [e["data"]["text"] for e in run.events if e["type"] == "assistant_message"]
    assert messages[0] == "Calling read_file, fs_list, fs_stat."
    assert run.events[-1]["data"]["text"] == (
        "You said: check\nread_file → read_file ok\nfs_list → fs_list ok\nfs_stat → error: denied"
    )


def test_default_model_answers_without_calling_tools_that_may_write(api: Any) -> None:
    run_id = api.create_run(prompt="check", tools=[LOCAL, A2A, MCP])
    run = api.server.wait_for_run(run_id, status="succeeded")
    assert [e for e in run.events if e["type"] == "local_tool_call"] == []
    assert run.events[-1]["data"]["text"] == "You said: check"


def test_a_script_still_calls_any_tool(api: Any) -> None:
    api.server.set_model(
        [
            Turn(tool_calls=[ToolCall("hr_agent", {"message": "hi"}), ToolCall("fs_stat")]),
            Turn("done"),
        ]
    )
    run_id = api.create_run(prompt="check", tools=[A2A, MCP])
    calls = [api.server.wait_for_tool_call() for _ in range(2)]
    assert [c["name"] for c in calls] == ["hr_agent", "fs_stat"]
    for call in calls:
        api.tool_result(run_id, call["toolUseId"], result="ok")
    api.server.wait_for_run(run_id, status="succeeded")


def test_default_model_output_schema_and_thinking(api: Any) -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "temp": {"type": "number"},
            "unit": {"enum": ["C", "F"]},
            "where": {
                "type": "object",
                "properties": {"lat": {"type": "number"}},
                "required": ["lat"],
            },
            "note": {"type": "string"},
        },
        "required": ["city", "temp", "unit", "where"],
    }
    run_id = api.create_run(outputSchema={"schema": schema}, reasoningLevel="high")
    events = api.events(run_id)
    assert events[0] == {
        "seq": 1,
        "type": "thinking_delta",
        "data": {"text": "Thinking about: hello"},
    }
    assert json.loads(events[-1]["data"]["text"]) == {
        "city": "example",
        "temp": 1.5,
        "unit": "C",
        "where": {"lat": 1.5},
    }
    assert events[-1]["data"]["tokens"]["reasoningTokens"] > 0
