"""Emulator sessions: create, read, messages with history and overrides, DELETE."""

from __future__ import annotations

from typing import Any

from mantyx_sync.testing import ModelContext, ToolCall, Turn

SPEC = {
    "systemPrompt": "You are a test.",
    "metadata": {"team": "a", "env": "dev"},
    "reasoningLevel": "low",
}
LOCAL = {"kind": "local", "name": "calc"}


def _session(api: Any, **extra: Any) -> str:
    response = api.post("/agent-sessions", {**SPEC, **extra})
    assert response.status_code == 201, response.text
    session_id: str = response.json()["sessionId"]
    return session_id


def _send(api: Any, session_id: str, **body: Any) -> str:
    response = api.post(f"/agent-sessions/{session_id}/messages", body)
    assert response.status_code == 202, response.text
    assert response.json()["streamUrl"].endswith("/stream")
    run_id: str = response.json()["runId"]
    return run_id


def test_create_and_read_session(api: Any) -> None:
    session_id = _session(api)
    assert session_id.startswith("ses_")
    body = api.get(f"/agent-sessions/{session_id}").json()
    assert body["sessionId"] == session_id
    assert body["status"] == "active"
    assert body["messages"] == []
    assert body["metadata"] == {"team": "a", "env": "dev"}
    assert body["spec"]["systemPrompt"] == "You are a test."
    assert "createdAt" in body
    assert api.server.sessions[session_id].status == "active"


def test_session_create_rejects_prompt_and_bad_spec(api: Any) -> None:
    assert api.post("/agent-sessions", {**SPEC, "prompt": "x"}).status_code == 400
    assert api.post("/agent-sessions", {**SPEC, "messages": []}).status_code == 400
    assert api.post("/agent-sessions", {"metadata": {}}).status_code == 400
    response = api.post("/agent-sessions", {**SPEC, "modelId": "nope"})
    assert response.json()["error"] == "invalid_model"


def test_messages_build_history_and_the_run_sees_it(api: Any) -> None:
    seen: list[ModelContext] = []

    def model(ctx: ModelContext) -> Any:
        seen.append(ctx)
        return Turn(f"answer {len(ctx.messages)}")

    api.server.set_model(model)
    session_id = _session(api)
    first = _send(api, session_id, prompt="one")
    api.server.wait_for_run(first, status="succeeded")
    second = _send(api, session_id, messages=[{"role": "user", "content": "two"}])
    assert api.events(second)[-1]["data"]["text"] == "answer 3"
    assert seen[1].messages == [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "answer 1"},
        {"role": "user", "content": "two"},
    ]
    assert seen[1].prompt == "two"
    body = api.get(f"/agent-sessions/{session_id}").json()
    assert body["messages"] == [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "answer 1"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "answer 3"},
    ]
    snapshot = api.get(f"/agent-runs/{second}").json()
    assert snapshot["sessionId"] == session_id
    assert api.server.runs[second].session_id == session_id


def test_failed_run_is_not_appended(api: Any) -> None:
    api.server.queue_script([Turn("", tool_calls=[ToolCall("calc")])])
    session_id = _session(api, tools=[LOCAL])
    run_id = _send(api, session_id, prompt="x")
    api.server.wait_for_tool_call()
    api.post(f"/agent-runs/{run_id}/cancel")
    api.server.wait_for_run(run_id, status="cancelled")
    assert api.get(f"/agent-sessions/{session_id}").json()["messages"] == []


def test_per_message_overrides_apply_to_one_run(api: Any) -> None:
    session_id = _session(api)
    override = {
        "prompt": "x",
        "metadata": {"env": "prod", "run": "1"},
        "reasoningLevel": "high",
        "tools": [LOCAL],
        "outputSchema": {"schema": {"type": "object"}},
        "loopDetection": False,
        "toolBudgets": {"calc": {"maxCalls": 1}},
    }
    api.server.queue_script([Turn("done")])
    run_id = _send(api, session_id, **override)
    spec = api.server.wait_for_run(run_id).spec
    assert spec["metadata"] == {"team": "a", "env": "prod", "run": "1"}
    assert spec["reasoningLevel"] == "high"
    assert spec["tools"] == [LOCAL]
    assert spec["loopDetection"] is False
    assert spec["systemPrompt"] == "You are a test."
    assert api.get(f"/agent-runs/{run_id}").json()["metadata"]["env"] == "prod"
    plain = _send(api, session_id, prompt="y")
    spec = api.server.wait_for_run(plain).spec
    assert spec["metadata"] == {"team": "a", "env": "dev"}
    assert spec["reasoningLevel"] == "low"
    assert "tools" not in spec
    assert api.server.sessions[session_id].spec == SPEC


def test_message_validation(api: Any) -> None:
    session_id = _session(api)
    path = f"/agent-sessions/{session_id}/messages"
    assert api.post(path, {}).status_code == 400
    assert api.post(path, {"prompt": "a", "messages": []}).status_code == 400
    assert api.post(path, {"prompt": "a", "metadata": {"k": 1}}).status_code == 400
    assert api.post("/agent-sessions/ses_nope/messages", {"prompt": "a"}).status_code == 404


def test_delete_ends_session_and_cancels_in_flight_run(api: Any) -> None:
    api.server.queue_script([Turn("", tool_calls=[ToolCall("calc")]), Turn("never")])
    session_id = _session(api, tools=[LOCAL])
    run_id = _send(api, session_id, prompt="x")
    api.server.wait_for_tool_call()
    response = api.delete(f"/agent-sessions/{session_id}")
    assert response.status_code == 200
    assert response.json() == {"ok": True}
    run = api.server.wait_for_run(run_id, status="cancelled", timeout=2)
    assert run.events[-1]["type"] == "cancelled"
    assert api.get(f"/agent-sessions/{session_id}").json()["status"] == "ended"
    again = api.post(f"/agent-sessions/{session_id}/messages", {"prompt": "more"})
    assert again.status_code == 409
    assert again.json()["error"] == "session_ended"
    assert api.delete(f"/agent-sessions/{session_id}").status_code == 200
    assert api.delete("/agent-sessions/ses_nope").status_code == 404
    assert api.get("/agent-sessions/ses_nope").status_code == 404
