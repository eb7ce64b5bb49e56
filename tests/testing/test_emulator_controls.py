"""The emulator's newest run controls over raw HTTP: 400s, plan-only runs, files echo."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mantyx_sync.testing import Overload, ToolCall, Turn

BASE = {"systemPrompt": "You are a test.", "prompt": "hi"}
LOCAL = {"kind": "local", "name": "calc", "parameters": {"type": "object"}}


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"fallbackModelId": ""}, "fallbackModelId"),
        ({"modelId": "platform:cm6abc123", "fallbackModelId": "platform:cm6abc123"}, "differ"),
        ({"supervisor": "yes"}, "supervisor"),
        ({"supervisor": {"interval": 0}}, "supervisor.interval"),
        ({"supervisor": {"interval": 101}}, "supervisor.interval"),
        ({"supervisor": {"reasoningTrigger": {"chars": 50_001}}}, "chars"),
        ({"supervisor": {"reasoningTrigger": {"ms": 600_001}}}, "ms"),
        ({"supervisor": {"reasoningTrigger": True}}, "reasoningTrigger"),
        ({"plan": "sometimes"}, "plan"),
        ({"plan": {"mode": "always"}}, "plan.mode"),
        ({"plan": {"steps": ["a", ""]}}, "plan.steps"),
        ({"plan": {"planOnly": "yes"}}, "plan.planOnly"),
        ({"outputSchema": {"schema": {"type": "object"}, "enforcement": "hard"}}, "enforcement"),
        ({"tools": [{**LOCAL, "readOnly": "yes"}]}, "readOnly"),
        ({"tools": [{**LOCAL, "retain": 1}]}, "retain"),
    ],
)
def test_bad_controls_are_400(api: Any, change: dict[str, Any], word: str) -> None:
    response = api.post("/agent-runs", {**BASE, **change})
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_request"
    assert word in response.json()["message"]


def test_plan_only_run_has_zero_usage(api: Any) -> None:
    run_id = api.create_run(plan={"planOnly": True, "brief": "Go", "steps": ["A", "B"]})
    events = api.events(run_id)
    assert api.types(events) == ["result"]
    data = events[-1]["data"]
    assert data["plan"] == {
        "brief": "Go",
        "steps": [
            {"id": "s1", "title": "A", "status": "pending"},
            {"id": "s2", "title": "B", "status": "pending"},
        ],
    }
    assert (
        data["turns"] == 0 and data["tokens"]["inputTokens"] == data["tokens"]["outputTokens"] == 0
    )


def test_tool_result_files_are_checked_and_echoed_as_metadata(api: Any) -> None:
    api.server.set_model([ToolCall("calc", {}), Turn("ok")])
    run_id = api.create_run(tools=[LOCAL])
    call = api.server.wait_for_tool_call()
    too_many = [
        {"filename": f"{i}.txt", "mimeType": "text/plain", "data": "eA=="} for i in range(21)
    ]
    bad = api.tool_result(run_id, call["toolUseId"], result="r", files=too_many)
    assert bad.status_code == 400 and "at most 20" in bad.json()["message"]
    data = base64.b64encode(b"abc").decode()
    ok = api.tool_result(
        run_id,
        call["toolUseId"],
        result="r",
        files=[{"filename": "a.txt", "mimeType": "text/plain", "data": data}],
    )
    assert ok.status_code in (200, 204), ok.text
    events = api.events(run_id)
    echo = next(e for e in events if e["type"] == "local_tool_result_in")
    assert echo["data"]["files"] == [
        {"type": "input_file", "filename": "a.txt", "mimeType": "text/plain", "sizeBytes": 3}
    ]


def test_overload_switches_to_the_fallback(api: Any) -> None:
    api.server.set_model([Overload(), Turn("ok")])
    run_id = api.create_run(modelId="platform:cm6abc123", fallbackModelId="provider:cm6def456")
    events = api.events(run_id)
    fallback = next(e for e in events if e["type"] == "model_fallback")["data"]
    assert fallback == {
        "errorClass": "overloaded",
        "model": "provider:cm6def456",
        "primaryModelId": "platform:cm6abc123",
        "fallbackModelId": "provider:cm6def456",
    }
    assert events[-1]["data"]["model"]["id"] == "provider:cm6def456"


def test_only_an_overload_like_failure_switches_to_the_fallback(api: Any) -> None:
    api.server.set_model([Overload("rate_limit"), Turn("never")])
    run_id = api.create_run(modelId="platform:cm6abc123", fallbackModelId="provider:cm6def456")
    events = api.events(run_id)
    assert "model_fallback" not in api.types(events)
    assert events[-1]["type"] == "error" and events[-1]["data"]["errorClass"] == "rate_limit"
    api.server.set_model([Overload("unreachable"), Turn("ok")])
    run_id = api.create_run(modelId="platform:cm6abc123", fallbackModelId="provider:cm6def456")
    assert "model_fallback" in api.types(api.events(run_id))
