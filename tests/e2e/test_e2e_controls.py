"""The newest run controls end to end on the emulator: plans, fallback, supervisor,
read-only tools, tool-result files, strict structured output."""

from __future__ import annotations

import base64
import threading
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync import Attachment, Plan, RunError, ToolOutput
from mantyx_sync.events import ModelFallback, SupervisorVerdict, ToolFiles
from mantyx_sync.testing import (
    Emit,
    FailResult,
    Faults,
    LocalMantyx,
    Overload,
    PlanUpdate,
    Supervise,
    ToolCall,
    Turn,
)
from mantyx_sync.testing import ToolFiles as ToolFilesStep

SYSTEM = "You are a test agent."
PRIMARY = "platform:cm6abc123"
FALLBACK = "provider:cm6def456"


def test_live_plan_applies_revisions_idempotently(emulator: LocalMantyx) -> None:
    emulator.set_model(
        [
            PlanUpdate([("Read", "in_progress"), ("Write", "pending")], brief="Report"),
            PlanUpdate([("Read", "done"), ("Write", "in_progress")], brief="Report"),
            # A replay of revision 1 (as after a reconnect) and an out-of-date revision.
            PlanUpdate([("Read", "in_progress"), ("Write", "pending")], brief="Report", revision=1),
            Turn("Drafting."),
        ]
    )
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM, plan="auto")
    seen: list[tuple[int | None, list[str]]] = []
    with agent.stream("Write the report") as run:
        for event in run:
            if event.type == "task_plan":
                assert run.plan is not None
                seen.append((run.plan.revision, [s.status for s in run.plan.steps]))
    assert seen == [
        (1, ["in_progress", "pending"]),
        (2, ["done", "in_progress"]),
        (2, ["done", "in_progress"]),  # the replayed revision 1 changed nothing
    ]
    assert run.result is not None and run.result.plan == run.plan
    assert run.result.plan is not None and run.result.plan.brief == "Report"
    assert emulator.requests[0].json["plan"] == "auto"


def test_plan_survives_a_reconnect_replay_and_a_replaced_plans_replay(
    mantyx_server: LocalMantyx,
) -> None:
    mantyx_server.set_model(
        [
            PlanUpdate(["Read", "Write"], brief="First"),
            PlanUpdate([("Read", "done"), ("Write", "in_progress")], brief="First"),
            PlanUpdate([("Outline", "in_progress")], brief="Second", plan_id="plan_2"),
            # The first plan's last revision sent again after the plan was replaced.
            PlanUpdate([("Read", "done"), ("Write", "in_progress")], brief="First", revision=2),
            Turn("Drafting."),
        ]
    )
    # The stream is cut after the third event and resumed with two frames replayed.
    mantyx_server.inject(Faults(drop_after=3, replay_overlap=2))
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, plan=True)
    briefs: list[tuple[str | None, int | None]] = []
    with agent.stream("Write it") as run:
        for event in run:
            if event.type == "task_plan" and run.plan is not None:
                briefs.append((run.plan.brief, run.plan.revision))
    assert briefs == [("First", 1), ("First", 2), ("Second", 1), ("Second", 1)]
    assert run.result is not None and run.result.plan is not None
    assert run.result.plan.plan_id == "plan_2" and run.result.plan.brief == "Second"
    assert sum(1 for e in run.result.events if e.type == "task_plan") == 4  # each seq once


def test_run_plan_is_plan_only(emulator: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True), system_prompt=SYSTEM, plan="required"
    )
    result = agent.run_plan("Migrate the database", steps=["Back up", "Migrate", "Verify"])
    assert result.turns == 0 and result.tokens is not None and result.tokens.total_tokens == 0
    assert result.plan is not None and [s.title for s in result.plan.steps] == [
        "Back up",
        "Migrate",
        "Verify",
    ]
    assert result.plan.brief == "Migrate the database"
    sent = next(r.json for r in emulator.requests if r.path.endswith("/agent-runs"))["plan"]
    assert sent == {"mode": "required", "steps": ["Back up", "Migrate", "Verify"], "planOnly": True}
    with agent.session() as chat:
        planned = chat.run_plan("Plan a trip", brief="Trip")
        assert planned.plan is not None and planned.plan.brief == "Trip" and planned.plan.steps
        chat.run("Hello")
        # The plan-only run is not part of the conversation.
        assert chat.history()[0].content == "Hello"


def test_fallback_mid_session_stays_switched(emulator: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True),
        system_prompt=SYSTEM,
        model_id=PRIMARY,
        fallback_model_id=FALLBACK,
    )
    with agent.session() as chat:
        first = chat.run("one")
        assert first.model is not None and first.model.id == PRIMARY and first.model_fallbacks == ()
        emulator.queue_script([Overload(), Turn("after the switch")])
        second = chat.run("two")
        assert second.text == "after the switch"
        assert second.model_fallbacks == (
            ModelFallback(
                error_class="overloaded",
                model=FALLBACK,
                primary_model_id=PRIMARY,
                fallback_model_id=FALLBACK,
            ),
        )
        assert second.model is not None and second.model.id == FALLBACK
        messages = [e.payload for e in second.events if e.type == "assistant_message"]
        assert [getattr(m, "model", None) for m in messages] == [FALLBACK]
        third = chat.run("three")
        assert (
            third.model is not None and third.model.id == FALLBACK and third.model_fallbacks == ()
        )
        assert chat.info().spec is not None and chat.info().spec["activeModelId"] == FALLBACK


def test_overload_without_fallback_fails_the_run(emulator: LocalMantyx) -> None:
    emulator.set_model([Overload("server_error")])
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
    with pytest.raises(RunError) as info:
        agent.run("x")
    assert info.value.error_class == "server_error" and info.value.retryable is True


def test_supervisor_verdicts_and_tool_files_are_typed(emulator: LocalMantyx) -> None:
    emulator.set_model(
        [
            Supervise("redirect", "Off track", redirect="Answer the question"),
            ToolFilesStep(
                "chart", [{"filename": "c.png", "mimeType": "image/png", "sizeBytes": 3}]
            ),
            ToolCall("chart", {}, server_result="drawn"),
            Turn("ok"),
        ]
    )
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True),
        system_prompt=SYSTEM,
        supervisor=mantyx_sync.Supervisor(interval=1),
    )
    result = agent.run("x")
    payloads = {e.type: e.payload for e in result.events}
    verdict = payloads["supervisor"]
    assert isinstance(verdict, SupervisorVerdict) and verdict.action == "redirect"
    assert verdict.redirect == "Answer the question"
    files = payloads["tool_files"]
    assert isinstance(files, ToolFiles) and files.files[0].mime_type == "image/png"
    assert [e.type for e in result.events].index("tool_files") < [
        e.type for e in result.events
    ].index("tool_result")
    assert emulator.requests[0].json["supervisor"] == {"interval": 1}


def test_eight_read_only_calls_answered_out_of_order(emulator: LocalMantyx) -> None:
    finished = [threading.Event() for _ in range(8)]
    order: list[int] = []
    lock = threading.Lock()

    @mantyx_sync.local_tool(read_only=True)
    def lookup(index: int) -> str:
        """Look up one shard."""
        # Each call waits for the one after it: they finish in reverse order.
        if index < 7 and not finished[index + 1].wait(10):
            raise RuntimeError("the next call never finished")
        with lock:
            order.append(index)
        finished[index].set()
        return f"shard {index}"

    emulator.set_model(
        [
            Turn("Looking up.", tool_calls=[ToolCall("lookup", {"index": i}) for i in range(8)]),
            Turn(lambda ctx: ", ".join(r["result"] for r in ctx.tool_results)),
        ]
    )
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True), system_prompt=SYSTEM, tools=[lookup], max_workers=8
    )
    result = agent.run("Look everything up")
    assert order == list(range(7, -1, -1))
    # Answers land in whatever order the POSTs arrive; each one exactly once.
    assert sorted(result.text.split(", ")) == [f"shard {i}" for i in range(8)]
    run = emulator.runs[result.run_id]
    assert len(run.tool_results) == 8  # each toolUseId answered exactly once
    assert run.spec["tools"][0]["readOnly"] is True
    posts = [r for r in emulator.requests if r.path.endswith("/tool-results")]
    assert len(posts) == 8


def test_a_retained_result_reaches_later_turns_of_the_session(emulator: LocalMantyx) -> None:
    @mantyx_sync.local_tool(retain=True)
    def profile(user: str) -> str:
        """The user's profile."""
        return f"{user} likes tea " + "x" * 9000

    @mantyx_sync.local_tool
    def weather(city: str) -> str:
        """Today's weather."""
        return f"sunny in {city}"

    def kept(ctx: Any) -> str:
        return "; ".join(f"{r['name']}={len(r['result'].encode())}" for r in ctx.retained)

    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True), system_prompt=SYSTEM, tools=[profile, weather]
    )
    with agent.session() as chat:
        emulator.queue_script(
            [
                Turn(
                    "",
                    tool_calls=[
                        ToolCall("profile", {"user": "ada"}),
                        ToolCall("weather", {"city": "Oslo"}),
                    ],
                ),
                Turn(kept),
            ]
        )
        first = chat.run("Who am I?")
        emulator.queue_script([Turn(kept)])
        second = chat.run("And now?")
    assert first.text == ""  # nothing retained yet while the first run goes on
    assert second.text == "profile=8192"  # only the retain tool's text, cut to 8 KB
    tools = next(r.json for r in emulator.requests if r.path.endswith("/agent-sessions"))
    assert [t.get("retain") for t in tools["tools"]] == [True, None]


def test_handler_returning_files(emulator: LocalMantyx) -> None:
    @mantyx_sync.local_tool
    def chart(city: str) -> ToolOutput:
        """Draw a chart."""
        return ToolOutput(
            f"chart of {city}", files=[Attachment.from_bytes(b"\x89PNG", filename="c.png")]
        )

    @mantyx_sync.local_tool
    def too_many(n: int) -> ToolOutput:
        """Return too many files."""
        return ToolOutput(
            "x", files=[Attachment.from_bytes(b"x", filename=f"{i}.txt") for i in range(n)]
        )

    emulator.set_model(
        [
            Turn(
                "",
                tool_calls=[ToolCall("chart", {"city": "Oslo"}), ToolCall("too_many", {"n": 21})],
            ),
            Turn("done"),
        ]
    )
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True), system_prompt=SYSTEM, tools=[chart, too_many]
    )
    result = agent.run("x")
    echoes = {e.data["toolUseId"]: e for e in result.events if e.type == "local_tool_result_in"}
    posts = {
        r.json["toolUseId"]: r.json for r in emulator.requests if r.path.endswith("/tool-results")
    }
    chart_id = next(i for i, p in posts.items() if p.get("result") == "chart of Oslo")
    assert posts[chart_id]["files"] == [
        {
            "filename": "c.png",
            "mimeType": "image/png",
            "data": base64.b64encode(b"\x89PNG").decode(),
        }
    ]
    assert echoes[chart_id].payload.files == (  # type: ignore[union-attr]
        {"type": "input_file", "filename": "c.png", "mimeType": "image/png", "sizeBytes": 4},
    )
    other = next(p for i, p in posts.items() if i != chart_id)
    assert "files" not in other and "at most 20" in other["error"]


def test_files_of_a_call_answered_with_an_error_are_dropped_with_a_warning(
    emulator: LocalMantyx, caplog: pytest.LogCaptureFixture
) -> None:
    @mantyx_sync.local_tool
    def chart(city: str) -> ToolOutput:
        """Draw a chart."""
        # The result cannot be written as JSON: the model gets an error, not the files.
        return ToolOutput(object(), files=[Attachment.from_bytes(b"\x89PNG", filename="c.png")])

    emulator.set_model([Turn("", tool_calls=[ToolCall("chart", {"city": "Oslo"})]), Turn("ok")])
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM, tools=[chart])
    with caplog.at_level("WARNING", logger="mantyx_sync"):
        agent.run("x")
    [post] = [r.json for r in emulator.requests if r.path.endswith("/tool-results")]
    assert "files" not in post and "result" not in post and "TypeError" in post["error"]
    assert any("1 file(s) dropped" in r.getMessage() for r in caplog.records)


def test_strict_output_success_and_failure(emulator: LocalMantyx) -> None:
    schema = mantyx_sync.OutputSchema(
        schema={"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        enforcement="strict",
    )
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True), system_prompt=SYSTEM, output_schema=schema
    )
    result = agent.run("x")
    assert result.structured_output is not None and result.structured_output.schema_enforced is True
    assert result.structured_output.enforcement_mechanism == "native_schema"
    assert emulator.requests[0].json["outputSchema"]["enforcement"] == "strict"
    failure: dict[str, Any] = {
        "error": "the provider rejected the schema",
        "code": "structured_output_schema_rejected",
        "errorClass": "structured_output_schema_rejected",
        "apiStatus": 400,
        "apiCode": "invalid_json_schema",
        "structuredOutput": {
            "schemaRequested": True,
            "schemaEnforced": False,
            "enforcementMechanism": "none",
            "unconstrainedFallbackOccurred": False,
        },
    }
    emulator.set_model([Emit("error", failure)])
    with pytest.raises(RunError) as info:
        agent.run("y")
    error = info.value
    assert error.error_class == "structured_output_schema_rejected"
    assert (error.api_status, error.api_code) == (400, "invalid_json_schema")
    assert error.structured_output is not None and error.structured_output.schema_enforced is False


def test_session_controls_at_creation_and_per_turn(emulator: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
    with agent.session(supervisor=True, plan=Plan(mode="auto")) as chat:
        chat.run("a", supervisor=False, plan="required")
    created = next(r.json for r in emulator.requests if r.path.endswith("/agent-sessions"))
    assert created["supervisor"] is True and created["plan"] == {"mode": "auto"}
    message = next(r.json for r in emulator.requests if r.path.endswith("/messages"))
    assert message["supervisor"] is False and message["plan"] == "required"


def test_bad_controls_raise_before_sending(emulator: LocalMantyx) -> None:
    client = emulator.client(in_memory=True)
    with pytest.raises(mantyx_sync.SpecError):
        mantyx_sync.Agent(
            client, system_prompt=SYSTEM, supervisor=mantyx_sync.Supervisor(interval=0)
        )
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
    with agent.session() as chat:
        emulator.clear_requests()
        with pytest.raises(mantyx_sync.SpecError, match="plan"):
            chat.run("a", plan="maybe")
        assert not any(r.path.endswith("/messages") for r in emulator.requests)


def test_a_failed_result_carries_structured_output_on_the_error(
    emulator: LocalMantyx,
) -> None:
    emulator.set_model([FailResult("error_max_turns", "too many turns")])
    schema = mantyx_sync.OutputSchema(schema={"type": "object"}, enforcement="strict")
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True), system_prompt=SYSTEM, output_schema=schema
    )
    with pytest.raises(RunError) as info:
        agent.run("x")
    assert info.value.code == "error_max_turns"
    assert info.value.structured_output is not None
    assert info.value.structured_output.schema_requested is True
