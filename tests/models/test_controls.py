"""Fallback model, supervisor, plan, strict output and tool flags: checks and bodies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync import Plan, ReasoningTrigger, SpecError, Supervisor, ToolOutput
from mantyx_sync._engine.outputs import split_output
from mantyx_sync._engine.progress import RunProgress
from mantyx_sync.errors import ToolError
from mantyx_sync.events import (
    AssistantMessage,
    ErrorPayload,
    LocalToolResultIn,
    ModelFallback,
    PlanStep,
    PlanTransition,
    ResultPayload,
    StructuredOutputInfo,
    SupervisorVerdict,
    TaskPlanUpdate,
    ToolFile,
    ToolFiles,
    structure_payload,
)
from mantyx_sync.spec import AgentSpec, MessageOverrides, OutputSchema

SYSTEM = "You are a test."


def body(**kw: Any) -> dict[str, Any]:
    return AgentSpec.build(system_prompt=SYSTEM, **kw).to_body([])


def test_fallback_model_is_sent_and_must_differ() -> None:
    assert body(model_id="a/b", fallback_model_id="c/d")["fallbackModelId"] == "c/d"
    with pytest.raises(SpecError) as info:
        body(model_id="a/b", fallback_model_id="a/b")
    assert info.value.path == "fallback_model_id" and "differ from model_id" in str(info.value)
    with pytest.raises(SpecError, match="non-empty"):
        body(fallback_model_id="")


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        (True, True),
        (False, False),
        (Supervisor(), {}),
        (Supervisor(interval=3, model_id="x/y"), {"interval": 3, "modelId": "x/y"}),
        (Supervisor(reasoning_trigger=False), {"reasoningTrigger": False}),
        (
            Supervisor(reasoning_trigger=ReasoningTrigger(chars=50_000, ms=600_000)),
            {"reasoningTrigger": {"chars": 50_000, "ms": 600_000}},
        ),
        (
            {"interval": 100, "reasoningTrigger": {"ms": 1}},
            {"interval": 100, "reasoningTrigger": {"ms": 1}},
        ),
    ],
)
def test_supervisor_forms(value: Any, wire: Any) -> None:
    assert body(supervisor=value)["supervisor"] == wire


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (Supervisor(interval=0), "supervisor.interval"),
        (Supervisor(interval=101), "supervisor.interval"),
        (Supervisor(model_id=""), "supervisor.model_id"),
        (
            Supervisor(reasoning_trigger=ReasoningTrigger(chars=50_001)),
            "supervisor.reasoning_trigger.chars",
        ),
        (
            Supervisor(reasoning_trigger=ReasoningTrigger(ms=600_001)),
            "supervisor.reasoning_trigger.ms",
        ),
        ({"reasoningTrigger": True}, "supervisor.reasoning_trigger"),
        ({"interval": "5"}, "supervisor.interval"),
        ({"reasoningTrigger": {"chars": "many"}}, "supervisor.reasoning_trigger.chars"),
        ({"every": 3}, "supervisor"),
        ("on", "supervisor"),
    ],
)
def test_supervisor_bounds(value: Any, path: str) -> None:
    with pytest.raises(SpecError) as info:
        body(supervisor=value)
    assert info.value.path == path


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        (True, True),
        ("auto", "auto"),
        ("required", "required"),
        (False, False),
        ("off", "off"),
        (
            Plan(mode="required", brief="Ship it", steps=["a", "b"]),
            {"mode": "required", "brief": "Ship it", "steps": ["a", "b"]},
        ),
        (Plan(plan_only=True), {"planOnly": True}),
        ({"mode": "auto", "planOnly": False}, {"mode": "auto", "planOnly": False}),
    ],
)
def test_plan_forms(value: Any, wire: Any) -> None:
    assert body(plan=value)["plan"] == wire


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("sometimes", "plan"),
        (Plan(mode="always"), "plan.mode"),
        (Plan(steps=["ok", ""]), "plan.steps[1]"),
        (Plan(brief=""), "plan.brief"),
        ({"steps": "one"}, "plan.steps"),
        ({"brief": 3}, "plan.brief"),
        ({"mode": 1}, "plan.mode"),
        ({"planOnly": "yes"}, "plan.plan_only"),
        ({"goal": "x"}, "plan"),
        (3, "plan"),
    ],
)
def test_plan_bounds(value: Any, path: str) -> None:
    with pytest.raises(SpecError) as info:
        body(plan=value)
    assert info.value.path == path


def test_session_turn_overrides_carry_supervisor_and_plan() -> None:
    got = MessageOverrides.build(supervisor=Supervisor(interval=2), plan="required").to_body(None)
    assert got == {"supervisor": {"interval": 2}, "plan": "required"}
    assert MessageOverrides.build(supervisor=False).to_body(None) == {"supervisor": False}
    assert MessageOverrides.build().to_body(None) == {}


def test_output_schema_enforcement() -> None:
    schema = {"type": "object"}
    assert OutputSchema.coerce({"schema": schema, "enforcement": "strict"}).enforcement == "strict"
    assert body(output_schema=OutputSchema(schema=schema, enforcement="best_effort"))[
        "outputSchema"
    ] == {
        "schema": schema,
        "enforcement": "best_effort",
    }
    with pytest.raises(SpecError) as info:
        OutputSchema.coerce(OutputSchema(schema=schema, enforcement="hard"))
    assert info.value.path == "output_schema.enforcement"


def test_agent_accepts_the_controls_without_a_server() -> None:
    agent = mantyx_sync.Agent(
        mantyx_sync.Client("mantyx_x", workspace="w", base_url="http://127.0.0.1:9"),
        system_prompt=SYSTEM,
        model_id="a/b",
        fallback_model_id="c/d",
        supervisor=True,
        plan="auto",
    )
    assert agent.spec.supervisor is True and agent.spec.plan == "auto"
    with pytest.raises(SpecError):
        mantyx_sync.Agent(
            mantyx_sync.Client("mantyx_x", workspace="w", base_url="http://127.0.0.1:9"),
            system_prompt=SYSTEM,
            plan="sometimes",
        )


def test_local_tool_flags_go_on_the_wire() -> None:
    @mantyx_sync.local_tool(read_only=True, retain=True)
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    assert lookup.to_wire()["readOnly"] is True and lookup.to_wire()["retain"] is True
    plain = mantyx_sync.define_local_tool(name="p", execute=lambda a: 1)
    assert "readOnly" not in plain.to_wire() and "retain" not in plain.to_wire()
    assert mantyx_sync.define_local_tool(name="r", execute=lambda a: 1, read_only=True).read_only


# -- payloads -----------------------------------------------------------------


def test_new_payloads_are_typed_and_tolerant() -> None:
    verdict = structure_payload(
        "supervisor",
        {
            "action": "redirect",
            "reason": "r",
            "redirect": "do x",
            "llmCalls": 2,
            "phase": "reasoning",
            "new": 1,
        },
    )
    assert verdict == SupervisorVerdict(
        action="redirect", reason="r", redirect="do x", llm_calls=2, phase="reasoning"
    )
    message = structure_payload("assistant_message", {"text": "t", "model": "openai/gpt-5.5"})
    assert isinstance(message, AssistantMessage) and message.model == "openai/gpt-5.5"
    echo = structure_payload(
        "local_tool_result_in", {"toolUseId": "t", "output": "o", "files": [{"filename": "a.png"}]}
    )
    assert isinstance(echo, LocalToolResultIn) and echo.files == ({"filename": "a.png"},)
    result = structure_payload(
        "result",
        {
            "subtype": "success",
            "text": "{}",
            "structuredOutput": {
                "schemaRequested": True,
                "schemaEnforced": False,
                "enforcementMechanism": "none",
                "unconstrainedFallbackOccurred": True,
            },
        },
    )
    assert isinstance(result, ResultPayload)
    assert result.structured_output == StructuredOutputInfo(
        schema_requested=True,
        schema_enforced=False,
        enforcement_mechanism="none",
        unconstrained_fallback_occurred=True,
    )


def test_fallback_plan_files_and_error_payloads_name_wire_fields_in_snake_case() -> None:
    fallback = structure_payload(
        "model_fallback",
        {
            "errorClass": "overloaded",
            "model": "b/m",
            "primaryModelId": "a/m",
            "fallbackModelId": "b/m",
            "attempts": 3,  # unknown: ignored here, kept in the event's data
        },
    )
    assert fallback == ModelFallback(
        error_class="overloaded", model="b/m", primary_model_id="a/m", fallback_model_id="b/m"
    )
    update = structure_payload(
        "task_plan",
        {
            "v": 2,
            "planId": "p1",
            "revision": 2,
            "mode": "auto",
            "source": "model",
            "transition": {"kind": "step_started", "stepId": "s2"},
            "transitionIndex": 1,
            "transitionCount": 2,
            "brief": "Ship",
            "steps": [
                {"id": "s1", "title": "Build", "status": "done"},
                {"id": "s2", "title": "Test", "status": "in_progress"},
            ],
            "plan": {"brief": "Ship"},
            "future": True,
        },
    )
    assert isinstance(update, TaskPlanUpdate)
    assert (update.v, update.plan_id, update.revision, update.mode) == (2, "p1", 2, "auto")
    assert update.transition == PlanTransition(kind="step_started", step_id="s2")
    assert (update.transition_index, update.transition_count) == (1, 2)
    assert update.steps[1] == PlanStep(id="s2", title="Test", status="in_progress")
    assert update.plan == {"brief": "Ship"}
    files = structure_payload(
        "tool_files",
        {
            "name": "render",
            "files": [
                {"filename": "a.png", "mimeType": "image/png", "sizeBytes": 3, "storageKey": "k"},
                {"filename": "b.pdf", "mimeType": "application/pdf", "url": "https://f.test/b"},
            ],
        },
    )
    assert isinstance(files, ToolFiles) and files.name == "render"
    assert files.files == (
        ToolFile(filename="a.png", mime_type="image/png", size_bytes=3, storage_key="k"),
        ToolFile(filename="b.pdf", mime_type="application/pdf", url="https://f.test/b"),
    )
    error = structure_payload(
        "error",
        {
            "error": "schema refused",
            "errorClass": "structured_output_schema_rejected",
            "apiStatus": 400,
            "apiCode": "invalid_json_schema",
            "structuredOutput": {"schemaRequested": True, "schemaEnforced": False},
        },
    )
    assert isinstance(error, ErrorPayload)
    assert (error.api_status, error.api_code) == (400, "invalid_json_schema")
    assert error.structured_output == StructuredOutputInfo(
        schema_requested=True, schema_enforced=False
    )
    # A field of the wrong type is dropped; the payload keeps its class (event.type says it).
    odd = structure_payload("model_fallback", {"model": ["not", "a", "string"], "errorClass": "x"})
    assert odd == ModelFallback(error_class="x")


def _update(plan_id: str, revision: int, *statuses: str) -> TaskPlanUpdate:
    steps = tuple(PlanStep(id=f"s{i}", title=f"step {i}", status=s) for i, s in enumerate(statuses))
    return TaskPlanUpdate(plan_id=plan_id, revision=revision, brief="b", steps=steps)


def test_plan_tracker_never_goes_backwards() -> None:
    tracker = RunProgress()
    assert tracker.apply(_update("p", 1, "pending", "pending"))
    assert tracker.apply(_update("p", 3, "done", "in_progress"))
    assert not tracker.apply(_update("p", 2, "in_progress", "pending"))  # out of date
    assert not tracker.apply(_update("p", 3, "pending", "pending"))  # replayed
    assert tracker.plan is not None and tracker.plan.revision == 3
    assert [s.status for s in tracker.plan.steps] == ["done", "in_progress"]
    assert tracker.apply(_update("q", 1, "pending"))  # a new plan replaces it
    assert tracker.plan.plan_id == "q"
    # A replay of the replaced plan's last revision does not bring it back.
    assert not tracker.apply(_update("p", 3, "done", "in_progress"))
    assert tracker.plan.plan_id == "q" and tracker.plan.revision == 1
    assert not tracker.apply(_update("q", 1, "done"))
    assert tracker.apply(_update("q", 2, "done"))
    assert [s.status for s in tracker.plan.steps] == ["done"]


def test_progress_reads_plan_only_results_and_fallbacks() -> None:
    progress = RunProgress()
    progress.observe(
        "model_fallback", {"errorClass": "overloaded", "model": "b", "primaryModelId": "a"}
    )
    progress.observe("task_plan", {"planId": "p", "revision": "bad"})  # ignored, logged
    assert [f.model for f in progress.fallbacks] == ["b"] and progress.plan is None
    plan = progress.final_plan(
        {"brief": "go", "steps": [{"id": "1", "title": "A", "status": "pending"}, "B"]}
    )
    assert plan is not None and plan.brief == "go" and [s.title for s in plan.steps] == ["A", "B"]


# -- tool-result files ----------------------------------------------------------


def test_tool_output_files_are_encoded(tmp_path: Path) -> None:
    file = tmp_path / "r.csv"
    file.write_text("a,b\n")
    text, files = split_output(
        ToolOutput(
            {"n": 1}, files=[file, mantyx_sync.Attachment.from_bytes(b"x", filename="x.txt")]
        )
    )
    assert text == '{"n": 1}'
    assert files is not None and [f["filename"] for f in files] == ["r.csv", "x.txt"]
    assert files[0] == {"filename": "r.csv", "mimeType": "text/csv", "data": "YSxiCg=="}
    assert split_output("plain") == ("plain", None)
    assert split_output(ToolOutput("no files")) == ("no files", None)


@pytest.mark.parametrize(
    ("files", "match"),
    [
        (
            [mantyx_sync.Attachment.from_bytes(b"x", filename=f"{i}.txt") for i in range(21)],
            "at most 20",
        ),
        (
            [
                mantyx_sync.Attachment.from_bytes(b"\0" * 3_000_000, filename=f"{i}.pdf")
                for i in range(2)
            ],
            "5000000",
        ),
        ([mantyx_sync.Attachment.from_url("https://x.test/a.png")], "not an inline file"),
        (iter(["a.txt"]), "not an inline file"),  # an iterator's items are not checked early
        ([Path("/nonexistent/a.txt")], "could not be attached"),
    ],
)
def test_tool_output_limits_become_tool_errors(files: list[Any], match: str) -> None:
    with pytest.raises(ToolError, match=match):
        split_output(ToolOutput("r", files=files))


# -- wrong types, caught where the value is written (issue 15, fix 2) --------------


@pytest.mark.parametrize(
    ("build", "name", "expected"),
    [
        (lambda: Supervisor(interval="5"), "interval", "int | None"),
        (lambda: Supervisor(model_id=3), "model_id", "str | None"),
        (lambda: Supervisor(reasoning_trigger=True), "reasoning_trigger", "ReasoningTrigger"),
        (lambda: ReasoningTrigger(chars=1.5), "chars", "int | None"),
        (lambda: ReasoningTrigger(ms="1s"), "ms", "int | None"),
        (lambda: Plan(mode=True), "mode", "str | None"),
        (lambda: Plan(brief=["b"]), "brief", "str | None"),
        (lambda: Plan(steps="one step"), "steps", "Iterable[str]"),
        (lambda: Plan(steps=[1, 2]), "steps", "Iterable[str]"),
        (lambda: Plan(plan_only="yes"), "plan_only", "bool | None"),
        (lambda: ToolOutput("r", files="a.txt"), "files", "Iterable[Attachment | Path]"),
        (lambda: ToolOutput("r", files=["a.txt"]), "files", "Iterable[Attachment | Path]"),
        (lambda: ToolOutput("r", files=3), "files", "Iterable[Attachment | Path]"),
    ],
)
def test_control_values_refuse_wrong_types_when_built(build: Any, name: str, expected: str) -> None:
    with pytest.raises(SpecError) as info:
        build()
    assert info.value.path == name
    assert f"{name} must be" in str(info.value) and expected in str(info.value)


def test_control_values_of_the_right_types_still_build(tmp_path: Path) -> None:
    file = tmp_path / "a.txt"
    file.write_text("x")
    assert Supervisor(interval=5, model_id="m", reasoning_trigger=False).interval == 5
    assert Plan(steps=("a", "b"), plan_only=False).steps == ("a", "b")
    assert Plan(steps=(s for s in ["a"])).steps == ("a",)
    assert ToolOutput({"n": 1}, files=[file]).files == (file,)
