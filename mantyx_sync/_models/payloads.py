"""Typed payloads a run builds only when asked: deltas, messages, server-side
tool activity, guard events, plans, model switches, supervisor verdicts, tool files.

Public through :mod:`mantyx_sync.events`, which imports this module with the
first ``event.payload`` of such an event (a run reads only its tool calls and
its terminal event itself). Every field is optional and unknown keys are
ignored (``raw`` keeps the object as sent). Values are immutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from . import wire as _wire
from .wire import ALIASES, RAW

__all__ = [
    "AssistantDelta",
    "AssistantMessage",
    "LocalToolResultIn",
    "LoopDetected",
    "ModelFallback",
    "PlanStep",
    "PlanTransition",
    "Started",
    "SupervisorVerdict",
    "TaskPlan",
    "TaskPlanUpdate",
    "ThinkingDelta",
    "ToolBudgetExceeded",
    "ToolCallEvent",
    "ToolFile",
    "ToolFiles",
    "ToolResultEvent",
]


@attrs.frozen(kw_only=True)
class Started:
    """``started``: the run is running (only some servers send it)."""


@attrs.frozen(kw_only=True)
class AssistantDelta:
    """``assistant_delta``: a chunk of streamed assistant text (chunking is arbitrary)."""

    text: str = ""


@attrs.frozen(kw_only=True)
class ThinkingDelta:
    """``thinking_delta``: a chunk of reasoning text; not part of the answer."""

    text: str = ""


@attrs.frozen(kw_only=True)
class AssistantMessage:
    """``assistant_message``: the complete assistant text of one turn.

    :ivar turn: 0-based turn index (``None`` on servers that omit it).
    :ivar finish_reason: canonical lowercase stop reason, e.g. ``max_tokens``.
    :ivar tool_calls: the tool calls the model made on this turn, as sent.
    :ivar model: the model that produced this turn (after a fallback, the fallback).
    """

    text: str = ""
    turn: int | None = None
    finish_reason: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    model: str | None = None


@attrs.frozen(kw_only=True)
class ToolCallEvent:
    """``tool_call``: MANTYX is running a server-resolved tool (informational).

    :ivar input: the tool's arguments (``input``, or ``args`` on servers that use it).
    """

    tool_use_id: str | None = None
    name: str | None = None
    input: Any = attrs.field(default=None, metadata={ALIASES: ("args",)})
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)


@attrs.frozen(kw_only=True)
class ToolResultEvent:
    """``tool_result``: a server-resolved tool finished (informational).

    Servers send either ``result`` or ``ok`` + ``summary`` (some ``isError``);
    whatever was sent is here and, untouched, in ``raw``.
    """

    tool_use_id: str | None = None
    name: str | None = None
    result: Any = None
    ok: bool | None = None
    summary: Any = None
    is_error: bool | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)


@attrs.frozen(kw_only=True)
class LocalToolResultIn:
    """``local_tool_result_in``: the server's echo of a tool result the SDK posted.

    :ivar files: metadata of the files sent with the result (never their bytes).
    """

    tool_use_id: str | None = None
    output: str | None = None
    error: str | None = None
    files: tuple[dict[str, Any], ...] = ()


@attrs.frozen(kw_only=True)
class LoopDetected:
    """``loop_detected``: the loop guard nudged (or, ``hard_cutoff``, stopped) the model."""

    consecutive_count: int | None = None
    hard_cutoff: bool | None = None
    tools: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class ToolBudgetExceeded:
    """``tool_budget_exceeded``: a call to ``tool`` past its ``max_calls`` was intercepted."""

    tool: str | None = None
    max_calls: int | None = None
    call_index: int | None = None


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
