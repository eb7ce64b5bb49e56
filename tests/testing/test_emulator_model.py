"""Emulator models: script steps, callable models, queued scripts, step semantics."""

from __future__ import annotations

from typing import Any

import pytest

from mantyx_sync.testing import Emit, Fail, FailResult, ModelContext, ToolCall, Turn

LOCAL = {"kind": "local", "name": "calc"}


def test_turn_chunks_thinking_and_finish_reason(api: Any) -> None:
    api.server.set_model(
        [
            Turn(
                "Hello world",
                chunks=["Hel", "lo ", "world"],
                thinking="hmm",
                finish_reason="end_turn",
            )
        ]
    )
    events = api.events(api.create_run())
    assert api.types(events) == [
        "thinking_delta",
        "assistant_delta",
        "assistant_delta",
        "assistant_delta",
        "assistant_message",
        "result",
    ]
    assert events[0]["data"] == {"text": "hmm"}
    assert [e["data"]["text"] for e in events[1:4]] == ["Hel", "lo ", "world"]
    message = events[4]["data"]
    assert message.pop("model")  # the serving model (NEWER.md item 4)
    assert message == {"text": "Hello world", "turn": 0, "finishReason": "end_turn"}
    assert events[5]["data"]["subtype"] == "success"
    assert events[5]["data"]["text"] == "Hello world"


def test_empty_text_turn_emits_no_deltas(api: Any) -> None:
    api.server.set_model([Turn("")])
    events = api.events(api.create_run())
    assert api.types(events) == ["assistant_message", "result"]
    assert events[-1]["data"]["text"] == ""


def test_fail_with_partial_text(api: Any) -> None:
    api.server.set_model(
        [
            Fail(
                "Model output was truncated",
                code="truncation",
                error_class="truncation",
                finish_reason="max_tokens",
                partial_text='{"a": 1',
                retryable=False,
            )
        ]
    )
    run_id = api.create_run()
    events = api.events(run_id)
    assert api.types(events) == ["assistant_message", "error"]
    assert events[0]["data"] == {"text": '{"a": 1', "turn": 0, "finishReason": "max_tokens"}
    error = events[1]["data"]
    assert {
        k: error[k]
        for k in ("error", "code", "errorClass", "finishReason", "partialText", "retryable")
    } == {
        "error": "Model output was truncated",
        "code": "truncation",
        "errorClass": "truncation",
        "finishReason": "max_tokens",
        "partialText": '{"a": 1',
        "retryable": False,
    }
    assert {"tokens", "turns", "model"} <= set(error)
    snapshot = api.get(f"/agent-runs/{run_id}").json()
    assert snapshot["status"] == "failed"
    assert snapshot["finalText"] == '{"a": 1'
    assert snapshot["error"] == "Model output was truncated"
    assert snapshot["failureReason"] == {"errorClass": "truncation", "finishReason": "max_tokens"}


def test_plain_fail_has_only_required_fields(make_api: Any) -> None:
    api = make_api(usage=False, model=[Fail()])
    events = api.events(api.create_run())
    assert events == [{"seq": 1, "type": "error", "data": {"error": "boom", "code": "error"}}]


def test_fail_result(api: Any) -> None:
    api.server.set_model([FailResult("error_max_turns", "too many turns")])
    run_id = api.create_run()
    events = api.events(run_id)
    assert events[-1]["type"] == "result"
    assert events[-1]["data"]["subtype"] == "error_max_turns"
    assert events[-1]["data"]["error"] == "too many turns"
    assert api.server.runs[run_id].status == "failed"


def test_emit_raw_events_and_terminal_emit(api: Any) -> None:
    api.server.set_model(
        [
            Emit("loop_detected", {"consecutiveCount": 3, "hardCutoff": False, "tools": ["calc"]}),
            Emit("tool_budget_exceeded", {"tool": "calc", "maxCalls": 1, "callIndex": 2}),
            Emit("brand_new_type", {"anything": [1, 2]}),
            Emit("cancelled", {"reason": "user"}),
            Turn("never reached"),
        ]
    )
    run_id = api.create_run()
    events = api.events(run_id)
    assert api.types(events) == [
        "loop_detected",
        "tool_budget_exceeded",
        "brand_new_type",
        "cancelled",
    ]
    assert api.server.runs[run_id].status == "cancelled"


@pytest.mark.parametrize(
    ("data", "status"),
    [
        ({"ok": True, "text": "t"}, "succeeded"),
        ({"subtype": "success", "text": "t"}, "succeeded"),
        ({"subtype": "error_x", "error": "e"}, "failed"),
    ],
)
def test_terminal_result_emit_sets_status(api: Any, data: dict[str, Any], status: str) -> None:
    api.server.set_model([Emit("result", data)])
    run_id = api.create_run()
    assert api.server.wait_for_run(run_id).status == status


def test_bare_tool_call_step_is_a_one_call_turn(api: Any) -> None:
    api.server.set_model([ToolCall("calc", {"x": 1}), Turn("ok")])
    run_id = api.create_run(tools=[LOCAL])
    call = api.server.wait_for_tool_call()
    assert call["args"] == {"x": 1}
    api.tool_result(run_id, call["toolUseId"], result="2")
    events = api.server.wait_for_run(run_id, status="succeeded").events
    assert events[0] == {
        "seq": 1,
        "type": "assistant_message",
        "data": {
            "text": "",
            "turn": 0,
            "model": "platform:cm6abc123",
            "toolCalls": [{"id": call["toolUseId"], "name": "calc", "input": {"x": 1}}],
        },
    }
    assert events[-2]["data"]["turn"] == 1


def test_script_that_runs_out_fails_visibly(api: Any) -> None:
    api.server.set_model([Emit("loop_detected", {})])
    run = api.server.wait_for_run(api.create_run(), status="failed")
    assert run.events[-1]["type"] == "error"
    assert "script" in run.events[-1]["data"]["error"]


def test_script_is_replayed_for_every_run(api: Any) -> None:
    api.server.set_model([Turn("same")])
    first, second = api.create_run(), api.create_run()
    assert api.events(first)[-1]["data"]["text"] == "same"
    assert api.events(second)[-1]["data"]["text"] == "same"


def test_queue_script_is_fifo_and_one_shot(api: Any) -> None:
    api.server.set_model([Turn("model")])
    api.server.queue_script([Turn("one")])
    api.server.queue_script([Turn("two")])
    texts = [api.events(api.create_run())[-1]["data"]["text"] for _ in range(3)]
    assert texts == ["one", "two", "model"]


def test_callable_model_sees_context(api: Any) -> None:
    seen: list[ModelContext] = []

    def model(ctx: ModelContext) -> Any:
        seen.append(ctx)
        if ctx.turn == 0:
            return Turn("calling", tool_calls=[ToolCall("calc", {"e": "1+1"})])
        result = ctx.tool_results[0]
        return Turn(f"{result['name']}={result['result']}")

    api.server.set_model(model)
    run_id = api.create_run(prompt="add", tools=[LOCAL], metadata={"k": "v"})
    call = api.server.wait_for_tool_call()
    api.tool_result(run_id, call["toolUseId"], result="2")
    run = api.server.wait_for_run(run_id, status="succeeded")
    assert run.events[-1]["data"]["text"] == "calc=2"
    assert [c.turn for c in seen] == [0, 1]
    assert seen[0].prompt == "add"
    assert seen[0].run_id == run_id
    assert seen[0].messages == [{"role": "user", "content": "add"}]
    assert seen[0].spec["metadata"] == {"k": "v"}
    assert seen[1].tool_results == [{"toolUseId": call["toolUseId"], "name": "calc", "result": "2"}]
    assert seen[1].tool_calls == [
        {"toolUseId": call["toolUseId"], "name": "calc", "args": {"e": "1+1"}, "kind": "local"}
    ]


def test_model_that_raises_fails_the_run(api: Any) -> None:
    def model(ctx: ModelContext) -> Any:
        raise ValueError("model bug")

    api.server.set_model(model)
    run = api.server.wait_for_run(api.create_run(), status="failed")
    assert run.events[-1]["type"] == "error"
    assert "model bug" in run.events[-1]["data"]["error"]
    assert run.events[-1]["data"]["code"] == "worker_error"


def test_ids_are_unique_per_run(api: Any) -> None:
    api.server.set_model([Turn("", tool_calls=[ToolCall("calc"), ToolCall("calc")]), Turn("x")])
    ids = []
    for _ in range(2):
        run_id = api.create_run(tools=[LOCAL])
        for _ in range(2):
            call = api.server.wait_for_tool_call()
            ids.append(call["toolUseId"])
            api.tool_result(run_id, call["toolUseId"], result="r")
        api.server.wait_for_run(run_id, status="succeeded")
    assert len(set(ids)) == 4
    assert ids[:2] == ["tu_1_1", "tu_1_2"]


def test_wait_helpers_time_out(api: Any) -> None:
    with pytest.raises(TimeoutError):
        api.server.wait_for_run(timeout=0.05)
    with pytest.raises(TimeoutError):
        api.server.wait_for_tool_call(timeout=0.05)
    api.server.set_model([Turn("x")])
    run_id = api.create_run()
    assert api.server.wait_for_run(run_id).status == "succeeded"
    with pytest.raises(TimeoutError):
        api.server.wait_for_run(run_id, status="cancelled", timeout=0.05)
