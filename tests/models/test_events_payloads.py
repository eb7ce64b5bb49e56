"""Typed payloads: every documented shape (protocol NOTES table), unknown types, cost fields."""

from __future__ import annotations

import logging
import pickle
from typing import Any

import pytest

from mantyx_sync._display.steps import ToolStep, tool_step
from mantyx_sync.events import (
    AssistantDelta,
    AssistantMessage,
    CancelledPayload,
    ErrorPayload,
    LocalToolCall,
    LocalToolResultIn,
    LoopDetected,
    ModelInfo,
    ResultPayload,
    RunEvent,
    Started,
    ThinkingDelta,
    TokenUsage,
    ToolBudgetExceeded,
    ToolCallEvent,
    ToolResultEvent,
    UnknownPayload,
    outcome_of,
)

COST = {
    "tokens": {"inputTokens": 120, "cachedTokens": 100, "reasoningTokens": 7, "outputTokens": 30},
    "turns": 2,
    "model": {
        "id": "openai/gpt-5.5",
        "provider": "openai",
        "vendorModelId": "gpt-5.5",
        "reasoningEffort": "medium",
    },
}


def payload(event_type: str, data: dict[str, Any]) -> Any:
    return RunEvent(seq=1, type=event_type, data=data).payload


def test_simple_payloads() -> None:
    assert payload("started", {}) == Started()
    assert payload("assistant_delta", {"text": "He"}) == AssistantDelta(text="He")
    assert payload("thinking_delta", {"text": "hm"}) == ThinkingDelta(text="hm")
    assert payload("cancelled", {}) == CancelledPayload()
    assert payload("cancelled", {"reason": "user"}) == CancelledPayload(reason="user")
    assert payload("local_tool_result_in", {"toolUseId": "t", "output": "o"}) == (
        LocalToolResultIn(tool_use_id="t", output="o")
    )


def test_assistant_message() -> None:
    message = payload(
        "assistant_message",
        {
            "text": "Here",
            "turn": 0,
            "finishReason": "tool_use",
            "toolCalls": [{"id": "c", "name": "search", "input": {}}],
        },
    )
    assert message == AssistantMessage(
        text="Here",
        turn=0,
        finish_reason="tool_use",
        tool_calls=({"id": "c", "name": "search", "input": {}},),
    )
    assert payload("assistant_message", {"text": "x"}) == AssistantMessage(text="x")


@pytest.mark.parametrize(
    ("data", "success"),
    [
        ({"subtype": "success", "text": "hi"}, True),
        ({"ok": True, "text": "hi"}, True),
        ({"subtype": "error_local_tool_timeout", "error": "late"}, False),
        ({"subtype": "error_max_turns", "ok": True}, False),
        ({"ok": False, "error": "no"}, False),
        ({"text": "neither"}, False),
    ],
)
def test_result_success_shapes(data: dict[str, Any], success: bool) -> None:
    result = payload("result", data)
    assert isinstance(result, ResultPayload)
    assert result.success is success


def test_result_without_cost_fields_has_none() -> None:
    result = payload("result", {"subtype": "success", "text": "hi"})
    assert result.tokens is None and result.turns is None and result.model is None


def test_result_with_cost_fields() -> None:
    result = payload("result", {"subtype": "success", "text": "hi", **COST})
    assert result.tokens == TokenUsage(
        input_tokens=120, cached_tokens=100, reasoning_tokens=7, output_tokens=30
    )
    assert result.tokens.total_tokens == 150
    assert result.turns == 2
    assert result.model == ModelInfo(
        id="openai/gpt-5.5", provider="openai", vendor_model_id="gpt-5.5", reasoning_effort="medium"
    )


@pytest.mark.parametrize("event_type", ["result", "error"])
def test_empty_provider_marks_unreported_cost(event_type: str) -> None:
    data = {
        "tokens": {"inputTokens": 0, "outputTokens": 0},
        "turns": 0,
        "model": {"id": "", "provider": ""},
    }
    parsed = payload(event_type, data)
    assert parsed.tokens is None and parsed.turns is None and parsed.model is None


def test_error_payload() -> None:
    error = payload(
        "error",
        {
            "error": "Model output was truncated",
            "code": "truncation",
            "errorClass": "truncation",
            "finishReason": "max_tokens",
            "partialText": '{"a": ',
            "retryable": False,
            "apiStatus": 400,
            **COST,
        },
    )
    assert isinstance(error, ErrorPayload)
    assert error.error == "Model output was truncated"
    assert error.code == "truncation" and error.error_class == "truncation"
    assert error.finish_reason == "max_tokens"
    assert error.partial_text == '{"a": '
    assert error.retryable is False
    assert error.turns == 2
    assert error.raw["apiStatus"] == 400


def test_error_payload_minimal() -> None:
    error = payload("error", {"error": "boom"})
    assert error == ErrorPayload(error="boom", raw={"error": "boom"})
    assert error.tokens is None


def test_local_tool_call_args() -> None:
    call = payload("local_tool_call", {"toolUseId": "tu", "name": "read", "args": {"p": 1}})
    assert call == LocalToolCall(
        tool_use_id="tu",
        name="read",
        args={"p": 1},
        raw={"toolUseId": "tu", "name": "read", "args": {"p": 1}},
    )
    assert call.kind == "local"


def test_local_tool_call_input_fallback() -> None:
    call = payload("local_tool_call", {"toolUseId": "tu", "name": "read", "input": {"p": 2}})
    assert call.args == {"p": 2}


def test_local_tool_call_args_win_over_input() -> None:
    data = {"toolUseId": "tu", "name": "r", "args": {"a": 1}, "input": {"b": 2}}
    assert payload("local_tool_call", data).args == {"a": 1}


def test_local_tool_call_without_args() -> None:
    assert payload("local_tool_call", {"toolUseId": "tu", "name": "r"}).args == {}


def test_local_tool_call_a2a_local() -> None:
    card = {"name": "Acme HR", "url": "https://hr.intranet.acme/a2a", "skills": []}
    call = payload(
        "local_tool_call",
        {
            "toolUseId": "tu_y",
            "name": "hr",
            "args": {"message": "When?"},
            "kind": "a2a_local",
            "agentCard": card,
        },
    )
    assert call.kind == "a2a_local"
    assert call.agent_card == card
    assert call.args == {"message": "When?"}


def test_local_tool_call_mcp_local() -> None:
    call = payload(
        "local_tool_call",
        {
            "toolUseId": "tu_z",
            "name": "fs_read_file",
            "args": {"path": "/etc/hosts"},
            "kind": "mcp_local",
            "mcpServer": "fs",
            "mcpToolName": "fs_read_file",
            "mcpServerInfo": {"name": "mcp-server-filesystem", "version": "0.4.1"},
            "annotations": {"readOnlyHint": True},
        },
    )
    assert (call.kind, call.mcp_server, call.mcp_tool_name) == ("mcp_local", "fs", "fs_read_file")
    assert call.mcp_server_info == {"name": "mcp-server-filesystem", "version": "0.4.1"}
    assert call.raw["annotations"] == {"readOnlyHint": True}
    assert call.agent_card is None


def test_local_tool_call_accessor() -> None:
    event = RunEvent(seq=1, type="local_tool_call", data={"toolUseId": "t", "name": "n"})
    assert event.local_tool_call == LocalToolCall(
        tool_use_id="t", name="n", raw={"toolUseId": "t", "name": "n"}
    )
    assert RunEvent(seq=1, type="assistant_delta", data={"text": "x"}).local_tool_call is None
    # No toolUseId: cannot be answered, so it is not a usable call.
    assert RunEvent(seq=1, type="local_tool_call", data={"name": "n"}).local_tool_call is None


@pytest.mark.parametrize(
    "data",
    [
        {"toolUseId": "tu_a", "name": "github_search", "result": "..."},
        {"toolUseId": "tu_a", "name": "github_search", "ok": True, "summary": "3 repos"},
    ],
)
def test_tool_result_shapes_pass_through(data: dict[str, Any]) -> None:
    result = payload("tool_result", data)
    assert isinstance(result, ToolResultEvent)
    assert result.raw == data
    assert result.tool_use_id == "tu_a"
    assert result.result == data.get("result")
    assert result.ok == data.get("ok")
    assert result.summary == data.get("summary")


def test_tool_result_structured_result_kept() -> None:
    result = payload("tool_result", {"toolUseId": "t", "result": {"rows": [1]}})
    assert result.result == {"rows": [1]}


def test_tool_call_event() -> None:
    call = payload("tool_call", {"toolUseId": "t", "name": "web_search", "input": {"q": "x"}})
    assert isinstance(call, ToolCallEvent)
    assert call.input == {"q": "x"}


def test_guard_events() -> None:
    assert payload(
        "loop_detected", {"consecutiveCount": 3, "hardCutoff": False, "tools": ["recall"]}
    ) == LoopDetected(consecutive_count=3, hard_cutoff=False, tools=("recall",))
    assert payload(
        "tool_budget_exceeded", {"tool": "recall", "maxCalls": 4, "callIndex": 5}
    ) == ToolBudgetExceeded(tool="recall", max_calls=4, call_index=5)


def test_unknown_type_passes_through() -> None:
    data = {"v": 2, "planId": "p1", "steps": []}
    assert payload("memory_compacted", data) == UnknownPayload(data=data)


def test_extra_keys_never_break_a_known_type() -> None:
    assert payload("assistant_delta", {"text": "x", "model": {"id": "m"}}) == AssistantDelta(
        text="x"
    )


def test_malformed_known_payload_keeps_its_class_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # event.type says the payload's class (a type checker narrows on it): an
    # odd field is dropped, never the class.
    with caplog.at_level(logging.WARNING, logger="mantyx_sync.events"):
        parsed = payload("assistant_delta", {"text": 5})
        call = payload("local_tool_call", {"name": 5, "args": {"x": 1}})
    assert parsed == AssistantDelta()
    assert "assistant_delta" in caplog.text
    assert call == LocalToolCall(
        tool_use_id="", name="", args={"x": 1}, raw={"name": 5, "args": {"x": 1}}
    )


def test_the_payload_is_built_once_per_event() -> None:
    event = RunEvent.from_frame('{"seq": 1, "type": "assistant_delta", "data": {"text": "hi"}}')
    assert event.payload is event.payload == AssistantDelta(text="hi")
    assert event == RunEvent(seq=1, type="assistant_delta", data={"text": "hi"})
    copied = pickle.loads(pickle.dumps(event))  # a result's events travel between processes
    assert copied == event and copied.payload == event.payload


def test_terminal_payload_keeps_what_reads_and_drops_only_the_odd_field(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = {"subtype": "error_x", "error": "late", "tokens": {"inputTokens": "12"}, "turns": 2}
    with caplog.at_level(logging.WARNING, logger="mantyx_sync.events"):
        parsed = payload("result", data)
    assert parsed == ResultPayload(subtype="error_x", error="late", turns=2, raw=data)
    assert "inputTokens" in caplog.text
    odd = {"error": "boom", "retryable": "yes", "code": 7}
    assert payload("error", odd) == ErrorPayload(error="boom", raw=odd)
    assert payload("cancelled", {"reason": {"by": "user"}}) == CancelledPayload()


@pytest.mark.parametrize(
    ("event_type", "data", "expected"),
    [
        ("result", {"subtype": "success"}, ("succeeded", None, None)),
        ("result", {"ok": True}, ("succeeded", None, None)),
        ("result", {"subtype": "success", "ok": False}, ("succeeded", None, None)),
        ("result", {"subtype": "error_max_turns", "ok": True}, ("failed", None, "error_max_turns")),
        ("result", {"ok": False, "message": "no"}, ("failed", "no", None)),
        ("result", {}, ("failed", "the run ended with no success flag", None)),
        ("error", {"errorClass": "overloaded"}, ("failed", "the run failed", "overloaded")),
        ("error", {"message": "m", "code": "c"}, ("failed", "m", "c")),
        ("cancelled", {"reason": "user"}, ("cancelled", "cancelled (user)", "cancelled")),
    ],
)
def test_run_outcome_of_terminal_events(
    event_type: str, data: dict[str, Any], expected: tuple[str, str | None, str | None]
) -> None:
    outcome = outcome_of(RunEvent(seq=1, type=event_type, data=data))
    assert outcome is not None
    status, message, code = expected
    if status == "failed" and message is None:
        message = f"the run ended with {code}"
    assert (outcome.status, outcome.message, outcome.code) == (status, message, code)
    assert outcome.payload == payload(event_type, data)
    assert outcome_of(RunEvent(seq=1, type="assistant_delta", data={"text": "x"})) is None


def test_tool_steps_read_calls_and_answers_alike() -> None:
    def step(event_type: str, data: dict[str, Any]) -> Any:
        return tool_step(RunEvent(seq=1, type=event_type, data=data))

    local = step("local_tool_call", {"toolUseId": "a", "name": "n", "input": {"x": 1}})
    assert local == ToolStep(tool_use_id="a", name="n", done=False, args={"x": 1})
    server = step("tool_call", {"toolUseId": "b", "name": "s", "args": {"q": 2}})
    assert server == ToolStep(tool_use_id="b", name="s", done=False, args={"q": 2})
    assert step("local_tool_result_in", {"toolUseId": "a", "error": "bad"}) == ToolStep(
        tool_use_id="a", name=None, done=True, ok=False, outcome="bad"
    )
    answered = step("tool_result", {"toolUseId": "b", "name": "s", "ok": True, "summary": "3"})
    assert (answered.ok, answered.outcome) == (True, "3")
    assert step("tool_result", {"toolUseId": "b", "result": "r", "isError": True}).ok is False
    assert step("tool_call", {"name": "no id"}) is None
    assert step("assistant_delta", {"text": "x"}) is None
