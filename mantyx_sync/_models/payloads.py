"""Typed payloads of the terminal events and of the progress events of a run.

Public through :mod:`mantyx_sync.events`. Like every payload, each field is
optional and unknown keys are ignored (``raw`` keeps the object as sent).
:class:`RunOutcome` is how a run ended, read from its terminal payload by one
rule; :class:`PlanTracker` applies ``task_plan`` revisions idempotently.

All values are immutable and safe to share between threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from . import wire as _wire
from .wire import ALIASES, RAW

__all__ = [
    "CancelledPayload",
    "ErrorPayload",
    "EventType",
    "ModelFallback",
    "ModelInfo",
    "PlanStep",
    "PlanTracker",
    "PlanTransition",
    "ResultPayload",
    "RunOutcome",
    "StructuredOutputInfo",
    "SupervisorVerdict",
    "TaskPlan",
    "TaskPlanUpdate",
    "TokenUsage",
    "ToolFile",
    "ToolFiles",
]

EventType = Literal[
    # a run's events, each with its payload class (see RunEvent.payload)
    "started",
    "assistant_delta",
    "thinking_delta",
    "assistant_message",
    "tool_call",
    "tool_result",
    "local_tool_call",
    "local_tool_result_in",
    "loop_detected",
    "tool_budget_exceeded",
    "result",
    "error",
    "cancelled",
    "model_fallback",
    "supervisor",
    "task_plan",
    "tool_files",
    # an evaluation's own events (their payload is an UnknownPayload)
    "case_started",
    "case_completed",
    "run_completed",
    "run_error",
    "run_cancelled",
]
"""Every event type this SDK knows: the type of :attr:`mantyx_sync.RunEvent.type`,
so a type checker flags a misspelt comparison (``event.type == "asistant_delta"``).

A type the server adds later still arrives: ``event.type`` is then that
string and ``event.payload`` an :class:`~mantyx_sync.UnknownPayload`.
"""


@attrs.frozen(kw_only=True)
class TokenUsage:
    """Tokens a run consumed.

    ``cached_tokens`` is the part of ``input_tokens`` served from the provider's
    prompt cache and ``reasoning_tokens`` the part of ``output_tokens`` spent
    thinking: both are *subsets*, not additional tokens. Counts the server did
    not report are ``0``; a server that reports no usage at all gives ``None``
    in place of the whole object.
    """

    input_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens`` (subsets are already inside them)."""
        return self.input_tokens + self.output_tokens


@attrs.frozen(kw_only=True)
class ModelInfo:
    """The model that served a run: catalog ``id``, ``provider``, vendor id, effort."""

    id: str | None = None
    provider: str | None = None
    vendor_model_id: str | None = None
    reasoning_effort: str | None = None

    @property
    def reported(self) -> bool:
        """Whether a real model was reported (older servers send an empty
        ``provider``, and their token counts and turns are not real either)."""
        return bool(self.provider)


@attrs.frozen(kw_only=True)
class StructuredOutputInfo:
    """How an output schema was applied to a run, from its terminal event.

    :ivar schema_requested: the run asked for structured output.
    :ivar schema_enforced: the provider constrained the reply to the schema.
    :ivar enforcement_mechanism: ``"native_schema"``, ``"synthetic_tool"`` or ``"none"``.
    :ivar unconstrained_fallback_occurred: best-effort enforcement fell back to an
        unconstrained reply.
    """

    schema_requested: bool | None = None
    schema_enforced: bool | None = None
    enforcement_mechanism: str | None = None
    unconstrained_fallback_occurred: bool | None = None


@attrs.frozen(kw_only=True)
class ResultPayload:
    """``result``: the run ended; :attr:`success` says whether it succeeded.

    :ivar subtype: ``"success"`` or a failure such as ``error_local_tool_timeout``
        (absent on servers that send ``ok`` instead).
    :ivar tokens: usage, ``None`` when the server did not report it.
    :ivar turns: model invocations, ``None`` when not reported.
    :ivar model: the model that served the run, ``None`` when not reported.
    :ivar structured_output: how an output schema was applied.
    :ivar plan: a plan-only run's ``{brief, steps}``, as sent.
    """

    subtype: str | None = None
    ok: bool | None = None
    text: str | None = None
    error: str | None = attrs.field(default=None, metadata={ALIASES: ("message",)})
    tokens: TokenUsage | None = None
    turns: int | None = None
    model: ModelInfo | None = None
    structured_output: StructuredOutputInfo | None = None
    plan: dict[str, Any] | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)

    @property
    def success(self) -> bool:
        """``subtype == "success"``, or ``ok`` is true and there is no subtype."""
        if self.subtype is not None:
            return self.subtype == "success"
        return self.ok is True


@attrs.frozen(kw_only=True)
class ErrorPayload:
    """``error``: the run failed.

    :ivar error: the human-readable message (``error``, or ``message`` on servers that use it).
    :ivar code: machine-readable category (legacy alias of ``error_class``).
    :ivar partial_text: salvage text; for output-schema runs usually broken JSON.
    :ivar retryable: the server's coarse retry hint.
    :ivar api_status: the provider API's HTTP status behind the failure.
    :ivar api_code: the provider API's error code.
    :ivar structured_output: how an output schema was applied.
    """

    error: str | None = attrs.field(default=None, metadata={ALIASES: ("message",)})
    code: str | None = None
    error_class: str | None = None
    finish_reason: str | None = None
    partial_text: str | None = None
    retryable: bool | None = None
    tokens: TokenUsage | None = None
    turns: int | None = None
    model: ModelInfo | None = None
    api_status: int | None = None
    api_code: str | None = None
    structured_output: StructuredOutputInfo | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)


@attrs.frozen(kw_only=True)
class CancelledPayload:
    """``cancelled``: the run was cancelled; ``reason`` when the server gives one."""

    reason: str | None = None


@attrs.frozen(kw_only=True)
class RunOutcome:
    """How a run ended, decided once from its terminal event's typed payload.

    The one rule the run's error, the notebook display, the CLI and the served
    apps all follow.

    :ivar status: ``"succeeded"``, ``"failed"`` or ``"cancelled"``.
    :ivar message: what went wrong (``None`` on success).
    :ivar code: the result's subtype, the error's code, or ``"cancelled"``.
    """

    status: Literal["succeeded", "failed", "cancelled"]
    payload: ResultPayload | ErrorPayload | CancelledPayload
    message: str | None = None
    code: str | None = None

    @classmethod
    def of(cls, payload: ResultPayload | ErrorPayload | CancelledPayload) -> RunOutcome:
        """The outcome a terminal event's ``payload`` says."""
        if isinstance(payload, CancelledPayload):
            reason = f"cancelled ({payload.reason})" if payload.reason else "cancelled"
            return cls(status="cancelled", payload=payload, message=reason, code="cancelled")
        if isinstance(payload, ErrorPayload):
            message = payload.error or "the run failed"
            code = payload.code or payload.error_class
            return cls(status="failed", payload=payload, message=message, code=code)
        if payload.success:
            return cls(status="succeeded", payload=payload)
        message = payload.error or f"the run ended with {payload.subtype or 'no success flag'}"
        return cls(status="failed", payload=payload, message=message, code=payload.subtype)


@attrs.frozen(kw_only=True)
class ModelFallback:
    """``model_fallback``: the primary model failed and the run switched.

    :ivar error_class: why, e.g. ``overloaded``, ``server_error``, ``unreachable``.
    :ivar model: the model now serving the run.
    :ivar primary_model_id: the model that failed.
    :ivar fallback_model_id: the configured fallback.
    """

    error_class: str | None = None
    model: str | None = None
    primary_model_id: str | None = None
    fallback_model_id: str | None = None


@attrs.frozen(kw_only=True)
class SupervisorVerdict:
    """``supervisor``: the supervisor's verdict (observability only).

    :ivar action: ``"on_track"``, ``"redirect"`` or ``"finalize"``.
    :ivar redirect: the instruction given to the model on a redirect.
    :ivar llm_calls: model calls the supervisor has made so far.
    :ivar phase: ``"turn_boundary"`` or ``"reasoning"``.
    :ivar model: the supervising model.
    """

    action: str | None = None
    reason: str | None = None
    redirect: str | None = None
    llm_calls: int | None = None
    phase: str | None = None
    model: str | None = None


@attrs.frozen(kw_only=True)
class PlanStep:
    """One step of a task plan: ``status`` is ``pending``, ``in_progress``, ``done``,
    ``blocked`` or ``skipped``."""

    id: str | None = None
    title: str = ""
    status: str = "pending"


@attrs.frozen(kw_only=True)
class PlanTransition:
    """What changed in a plan revision: ``kind`` (e.g. ``step_started``) and the step."""

    kind: str | None = None
    step_id: str | None = None


@attrs.frozen(kw_only=True)
class TaskPlanUpdate:
    """``task_plan`` (v2): a revision of the run's plan.

    Apply revisions by ``plan_id`` + ``revision`` (see :attr:`mantyx_sync.Run.plan`).
    ``plan`` is the server's canonical snapshot, as sent.
    """

    v: int | None = None
    plan_id: str | None = None
    revision: int | None = None
    mode: str | None = None
    source: str | None = None
    transition: PlanTransition | None = None
    transition_index: int | None = None
    transition_count: int | None = None
    brief: str | None = None
    steps: tuple[PlanStep, ...] = ()
    plan: dict[str, Any] | None = None


@attrs.frozen(kw_only=True)
class TaskPlan:
    """A run's plan: its goal and steps, as of its latest revision.

    :ivar plan_id: the plan (``None`` for a plan-only run's result).
    :ivar revision: the revision applied (``None`` for a plan-only run's result).
    """

    brief: str | None = None
    steps: tuple[PlanStep, ...] = ()
    plan_id: str | None = None
    revision: int | None = None

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> TaskPlan:
        """A plan from a ``{brief, steps[]}`` object (steps as objects or titles)."""
        raw_steps = data.get("steps")
        steps: list[PlanStep] = []
        for index, step in enumerate(raw_steps if isinstance(raw_steps, list) else ()):
            if isinstance(step, str):
                steps.append(PlanStep(id=str(index + 1), title=step))
            elif isinstance(step, Mapping):
                steps.append(_wire.structure(step, PlanStep))
        brief = data.get("brief")
        return cls(brief=brief if isinstance(brief, str) else None, steps=tuple(steps))


@attrs.frozen(kw_only=True)
class ToolFile:
    """A file a server-resolved tool produced (metadata only)."""

    filename: str | None = None
    mime_type: str | None = None
    size_bytes: int | None = None
    storage_key: str | None = None
    url: str | None = None


@attrs.frozen(kw_only=True)
class ToolFiles:
    """``tool_files``: files from a server-resolved tool; precedes its ``tool_result``."""

    name: str | None = None
    files: tuple[ToolFile, ...] = ()
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)


class PlanTracker:
    """The current :class:`TaskPlan` of a run, from its ``task_plan`` events.

    A revision is applied only when it is newer than every revision already
    seen of the same ``planId`` (a new ``planId`` replaces the plan): a
    replayed or out-of-date revision never moves the plan backwards, not even
    one of a plan that has since been replaced. Used by the thread reading the
    run's events; readers of :attr:`plan` see an immutable value.
    """

    def __init__(self) -> None:
        self.plan: TaskPlan | None = None
        self._latest: dict[str | None, int] = {}

    def apply(self, update: TaskPlanUpdate) -> bool:
        """Apply ``update``; ``True`` when it changed the plan."""
        latest = self._latest.get(update.plan_id)
        if update.revision is not None:
            if latest is not None and update.revision <= latest:
                return False
            self._latest[update.plan_id] = update.revision
        self.plan = TaskPlan(
            brief=update.brief,
            steps=update.steps,
            plan_id=update.plan_id,
            revision=update.revision,
        )
        return True
