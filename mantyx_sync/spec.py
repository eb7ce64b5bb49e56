"""The agent spec, per-message overrides and turn input, checked before anything is sent.

:class:`AgentSpec` is the body of ``POST /agent-runs`` and ``POST /agent-sessions``
(agent-runs §4, wire-protocol §2). :meth:`AgentSpec.build` normalises every
accepted input shape and checks every documented limit that does not need the
tools resolved, raising :class:`~mantyx_sync.errors.SpecError` with the wire
path of the field to fix. :func:`validate_tool_refs` checks the resolved
``tools[]`` entries just before the body is sent.

"Not given" and "given" are kept apart on the wire (wire-protocol §8):
``loop_detection``/``tool_budgets`` left :data:`~mantyx_sync._base.types.UNSET` are
omitted so the server defaults apply; ``loop_detection=False`` disables the
guard; ``tool_budgets={}`` clears the server's default budgets and is sent.

All values here are immutable and safe to share between threads.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, Union

import attrs

from ._base.argcheck import checked_init
from ._base.limits import (
    LOOP_THRESHOLD_MAX,
    OUTPUT_SCHEMA_MAX_BYTES,
    OUTPUT_SCHEMA_NAME_RE,
    TOOL_BUDGET_KEY_MAX,
    TOOL_BUDGET_MAX_CALLS,
    TOOL_BUDGETS_MAX_ENTRIES,
)
from ._base.types import UNSET, JSONDict, UnsetType
from ._models import wire as _wire
from ._models.checks import (
    REASONING_LEVELS,
    _check_int,
    _coerce_budgets,
    _coerce_metadata,
    _coerce_reasoning_level,
    _coerce_text,
    _is_int,
    _json_size,
    turn_input,
    validate_tool_refs,
)
from ._models.controls import (
    Plan,
    PlanArg,
    ReasoningTrigger,
    Supervisor,
    SupervisorArg,
    coerce_plan,
    coerce_supervisor,
    control_wire,
    plan_only,
)
from ._models.wire import OMIT
from ._tools.local_tool import as_local_tool
from .errors import SpecError
from .tools import ClientResolvedTool

__all__ = [
    "REASONING_LEVELS",
    "SPEC_FIELDS",
    "AgentSpec",
    "LoopDetection",
    "MessageOverrides",
    "OutputSchema",
    "Plan",
    "ReasoningTrigger",
    "Supervisor",
    "ToolBudget",
    "plan_only",
    "turn_input",
    "validate_tool_refs",
]

# The AgentSpec.build arguments: a facade passing them through leaves their
# types to build's own checks, whose messages name the wire field.
SPEC_FIELDS: Final = (
    "system_prompt",
    "agent_id",
    "model_id",
    "name",
    "tools",
    "reasoning_level",
    "output_schema",
    "loop_detection",
    "tool_budgets",
    "budgets",
    "metadata",
)

# wire-protocol §8.1: the server's thresholds when a field is omitted.
_DEFAULT_CONSECUTIVE: Final = 3
_DEFAULT_HARD_CUTOFF: Final = 6
_ENFORCEMENTS: Final = ("best_effort", "strict")


@checked_init(SpecError)
@attrs.frozen(kw_only=True)
class OutputSchema:
    """A JSON Schema the final reply must satisfy (agent-runs §4.5, wire-protocol §7).

    :ivar schema: the JSON Schema; its root must describe a JSON object.
    :ivar name: provider-facing identifier (server default ``"output"``).
    :ivar enforcement: ``"best_effort"`` (the server default: the schema is
        asked for, and a model that cannot be constrained answers unconstrained)
        or ``"strict"`` (the run fails with ``structured_output_schema_rejected``,
        ``structured_output_not_supported`` or ``structured_output_not_enforced``
        rather than answer unconstrained); NEWER item 6.
    """

    schema: dict[str, Any]
    name: str | None = None
    enforcement: str | None = None

    @classmethod
    def coerce(cls, value: Any, *, path: str = "outputSchema") -> OutputSchema:
        """Accept an :class:`OutputSchema`, the wire shape ``{"schema", "name"?}`` or a
        bare JSON Schema object, and check the documented limits.

        :raises SpecError: what to fix, with the field path.
        """
        if isinstance(value, OutputSchema):
            result = value
        elif isinstance(value, Mapping) and "schema" in value:
            result = _wire.structure_input(value, cls, path=path)
        elif isinstance(value, Mapping):
            result = cls(schema=dict(value))
        else:
            raise SpecError(
                "must be a JSON Schema object or {'schema': ..., 'name': ...}, "
                f"got {type(value).__name__}",
                path=path,
            )
        result._check(path)
        return result

    def _check(self, path: str) -> None:
        if not isinstance(self.schema, Mapping):
            raise SpecError(
                f"must be a JSON object, got {type(self.schema).__name__}", path=f"{path}.schema"
            )
        root_type = self.schema.get("type")
        if root_type is not None and root_type != "object":
            raise SpecError(
                f"the root must describe a JSON object (type 'object'), got type {root_type!r}",
                path=f"{path}.schema.type",
            )
        name: Any = self.name
        valid_name = isinstance(name, str) and OUTPUT_SCHEMA_NAME_RE.match(name)
        if name is not None and not valid_name:
            raise SpecError(
                "must be 1-64 characters from a-z, A-Z, 0-9, '_' and '-'", path=f"{path}.name"
            )
        enforcement: Any = self.enforcement
        if enforcement is not None and enforcement not in _ENFORCEMENTS:
            raise SpecError(
                f"must be 'best_effort' or 'strict', got {enforcement!r}",
                path=f"{path}.enforcement",
            )
        size = _json_size(_wire.unstructure(self), path)
        if size > OUTPUT_SCHEMA_MAX_BYTES:
            raise SpecError(
                f"serializes to {size} bytes; the limit is {OUTPUT_SCHEMA_MAX_BYTES}", path=path
            )


@attrs.frozen(kw_only=True)
class LoopDetection:
    """Loop-guard thresholds (wire-protocol §8.1); ``None`` keeps the server default.

    ``consecutive_threshold`` (≥ 2, default 3) identical tool batches in a row
    nudge the model; ``hard_cutoff_threshold`` (≥ 3, default 6, and greater than
    the consecutive threshold) force it to finish. Both are at most 100. Pass
    ``loop_detection=False`` to a spec to disable the guard instead.
    """

    consecutive_threshold: int | None = None
    hard_cutoff_threshold: int | None = None

    @classmethod
    def coerce(cls, value: Any, *, path: str = "loopDetection") -> LoopDetection | Literal[False]:
        """Accept ``False``, a :class:`LoopDetection` or a mapping in either key style.

        :raises SpecError: what to fix, with the field path.
        """
        if value is False:
            return False
        if isinstance(value, LoopDetection):
            result = value
        elif isinstance(value, Mapping):
            result = _wire.structure_input(value, cls, path=path)
        else:
            raise SpecError(
                f"must be False, a LoopDetection or a mapping, got {type(value).__name__}",
                path=path,
            )
        result._check(path)
        return result

    def _check(self, path: str) -> None:
        consecutive, hard = self.consecutive_threshold, self.hard_cutoff_threshold
        if consecutive is not None:
            _check_int(consecutive, f"{path}.consecutiveThreshold", low=2, high=LOOP_THRESHOLD_MAX)
        if hard is not None:
            _check_int(hard, f"{path}.hardCutoffThreshold", low=3, high=LOOP_THRESHOLD_MAX)
        effective_consecutive = _DEFAULT_CONSECUTIVE if consecutive is None else consecutive
        effective_hard = _DEFAULT_HARD_CUTOFF if hard is None else hard
        if effective_hard <= effective_consecutive:
            if hard is None:
                message = (
                    f"consecutiveThreshold ({consecutive}) must be below the default "
                    f"hardCutoffThreshold ({_DEFAULT_HARD_CUTOFF}); set hardCutoffThreshold too"
                )
                where = f"{path}.consecutiveThreshold"
            elif consecutive is None:
                message = (
                    f"hardCutoffThreshold ({hard}) must be greater than the default "
                    f"consecutiveThreshold ({_DEFAULT_CONSECUTIVE})"
                )
                where = f"{path}.hardCutoffThreshold"
            else:
                message = (
                    f"hardCutoffThreshold ({hard}) must be greater than "
                    f"consecutiveThreshold ({consecutive})"
                )
                where = f"{path}.hardCutoffThreshold"
            raise SpecError(message, path=where)


@attrs.frozen(kw_only=True)
class ToolBudget:
    """A per-run call cap for one tool (wire-protocol §8.2); ``0`` disables the tool."""

    max_calls: int

    def _check(self, path: str) -> None:
        _check_int(self.max_calls, f"{path}.maxCalls", low=0, high=TOOL_BUDGET_MAX_CALLS)


def _coerce_tool_budgets(value: Any, path: str = "toolBudgets") -> dict[str, ToolBudget]:
    if not isinstance(value, Mapping):
        raise SpecError(
            f"must be a mapping of tool name to budget, got {type(value).__name__}", path=path
        )
    if len(value) > TOOL_BUDGETS_MAX_ENTRIES:
        raise SpecError(
            f"has {len(value)} entries; the limit is {TOOL_BUDGETS_MAX_ENTRIES}", path=path
        )
    out: dict[str, ToolBudget] = {}
    for key, budget in value.items():
        where = f"{path}[{key!r}]"
        if not isinstance(key, str) or not 1 <= len(key) <= TOOL_BUDGET_KEY_MAX:
            raise SpecError(
                f"tool names must be strings of 1-{TOOL_BUDGET_KEY_MAX} characters", path=where
            )
        if isinstance(budget, ToolBudget):
            entry = budget
        elif _is_int(budget):
            entry = ToolBudget(max_calls=budget)
        elif isinstance(budget, Mapping):
            entry = _wire.structure_input(budget, ToolBudget, path=where)
        else:
            raise SpecError(
                f"must be an int, a ToolBudget or {{'maxCalls': n}}, got {type(budget).__name__}",
                path=where,
            )
        entry._check(where)
        out[key] = entry
    return out


def _coerce_tools(value: Any, path: str = "tools") -> tuple[Any, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise SpecError(f"must be a list of tools, got {type(value).__name__}", path=path)
    tools = list(value)
    for index, tool in enumerate(tools):
        if callable(getattr(tool, "to_wire", None)) or isinstance(tool, ClientResolvedTool):
            continue
        if inspect.isfunction(tool) or inspect.ismethod(tool):
            # A plain typed function is a local tool, as if decorated with @local_tool;
            # derived once here, not on every run.
            tools[index] = as_local_tool(tool)
            continue
        hint = (
            " (plain dicts are not accepted: use MantyxTool, PluginTool, A2ATool, McpTool, "
            "a local tool, or a local MCP/A2A definition)"
            if isinstance(tool, Mapping)
            else ""
        )
        raise SpecError(
            f"is a {type(tool).__name__}, not a tool: expected a function, an object with "
            f"to_wire() or a client-resolved tool with connect(){hint}",
            path=f"{path}[{index}]",
        )
    return tuple(tools)


def _coerce_loop_detection(value: Any) -> LoopDetection | Literal[False] | UnsetType:
    # None reads as "not given": the server default applies.
    if value is UNSET or value is None:
        return UNSET
    return LoopDetection.coerce(value)


def _coerce_output_schema(value: Any) -> OutputSchema | None:
    return None if value is None else OutputSchema.coerce(value)


LoopDetectionArg = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
    LoopDetection, Literal[False], Mapping[str, Any], UnsetType, None
]
"""What ``loop_detection`` accepts."""
ToolBudgetsArg = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
    Mapping[str, Union[ToolBudget, int, Mapping[str, Any]]], UnsetType, None  # noqa: UP007
]
"""What ``tool_budgets`` accepts."""


@attrs.frozen(kw_only=True)
class AgentSpec:
    """An agent definition: the body of ``POST /agent-runs`` minus the turn input.

    Build it with :meth:`build`, change it with :meth:`replace`; both validate.

    Usage::

        spec = AgentSpec.build(system_prompt="You are terse.", model_id="openai/gpt-5.5",
                               loop_detection=False, tool_budgets={"recall": 2})
        body = {**spec.to_body(tool_refs), **turn_input(prompt="Hi")}
    """

    system_prompt: str | None = None
    agent_id: str | None = None
    model_id: str | None = None
    name: str | None = None
    tools: tuple[Any, ...] = attrs.field(default=(), metadata={OMIT: True})
    reasoning_level: str | int | None = None
    output_schema: OutputSchema | None = None
    loop_detection: LoopDetection | Literal[False] | UnsetType = UNSET
    tool_budgets: dict[str, ToolBudget] | UnsetType = UNSET
    budgets: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None
    fallback_model_id: str | None = None
    supervisor: bool | Supervisor | None = attrs.field(default=None, metadata={OMIT: True})
    plan: bool | str | Plan | None = attrs.field(default=None, metadata={OMIT: True})

    @classmethod
    def build(
        cls,
        *,
        system_prompt: str | None = None,
        agent_id: str | None = None,
        model_id: str | None = None,
        name: str | None = None,
        tools: Iterable[Any] = (),
        reasoning_level: str | int | None = None,
        output_schema: OutputSchema | Mapping[str, Any] | None = None,
        loop_detection: LoopDetectionArg = UNSET,
        tool_budgets: ToolBudgetsArg = UNSET,
        budgets: Mapping[str, Any] | None = None,
        metadata: Mapping[str, str] | None = None,
        fallback_model_id: str | None = None,
        supervisor: SupervisorArg = None,
        plan: PlanArg = None,
    ) -> AgentSpec:
        """Normalise and check a spec.

        :param system_prompt: the instructions; without it or ``agent_id`` each
            run needs a non-empty system message (see :attr:`instructed`).
        :param agent_id: run a persisted workspace agent (agent-runs §4.1).
        :param model_id: a catalog id or shorthand; the server default when omitted.
        :param name: observability label.
        :param tools: tool references (``MantyxTool``, ``PluginTool``, ``A2ATool``,
            ``McpTool``, local tools) and client-resolved definitions (local MCP/A2A).
        :param reasoning_level: ``"off"``/``"low"``/``"medium"``/``"high"`` or 0-100,
            passed through unchanged.
        :param output_schema: an :class:`OutputSchema`, ``{"schema", "name"?}`` or a
            bare JSON Schema.
        :param loop_detection: ``False`` disables the loop guard; a
            :class:`LoopDetection` or mapping sets thresholds; omitted (or ``None``)
            keeps the server defaults.
        :param tool_budgets: tool name → ``int`` / :class:`ToolBudget` /
            ``{"maxCalls": n}``; ``{}`` clears the server's defaults; omitted (or
            ``None``) keeps them.
        :param budgets: passed through, e.g. ``{"maxToolTurns": 32}``.
        :param metadata: up to 16 string key/values for filtering runs.
        :param fallback_model_id: a model to switch to when ``model_id`` is
            overloaded or unreachable (NEWER item 4); must differ from ``model_id``.
        :param supervisor: ``True`` (server defaults), ``False`` or a :class:`Supervisor`.
        :param plan: ``True``/``"auto"``, ``"required"``, ``False``/``"off"`` or a :class:`Plan`.
        :raises SpecError: the first rule broken, with its wire path.
        """
        fallback = _coerce_text(fallback_model_id, "fallbackModelId")
        if fallback is not None and fallback == model_id:
            raise SpecError("must differ from modelId", path="fallbackModelId")
        return cls(
            system_prompt=_coerce_text(system_prompt, "systemPrompt"),
            agent_id=_coerce_text(agent_id, "agentId"),
            model_id=_coerce_text(model_id, "modelId"),
            name=_coerce_text(name, "name"),
            tools=_coerce_tools(tools),
            reasoning_level=(
                None if reasoning_level is None else _coerce_reasoning_level(reasoning_level)
            ),
            output_schema=_coerce_output_schema(output_schema),
            loop_detection=_coerce_loop_detection(loop_detection),
            tool_budgets=(
                UNSET
                if tool_budgets is UNSET or tool_budgets is None
                else _coerce_tool_budgets(tool_budgets)
            ),
            budgets=None if budgets is None else _coerce_budgets(budgets),
            metadata=None if metadata is None else _coerce_metadata(metadata),
            fallback_model_id=fallback,
            supervisor=None if supervisor is None else coerce_supervisor(supervisor),
            plan=None if plan is None else coerce_plan(plan),
        )

    @property
    def instructed(self) -> bool:
        """Whether the spec says who the agent is: a ``systemPrompt`` or an ``agentId``.

        A run of a spec with neither is valid only when its messages include a
        non-empty system message (NEWER item 3); :func:`turn_input` checks that.
        """
        return self.system_prompt is not None or self.agent_id is not None

    def check_session(self) -> None:
        """Refuse to create a session (``POST /agent-sessions``) from a spec without instructions.

        The protocol requires ``systemPrompt`` unless ``agentId`` is set when a
        session is created; the newer rule that a system message may stand in
        for both applies to a run's input, which a session's creation has none of.

        :raises SpecError: neither ``system_prompt`` nor ``agent_id`` is set.
        """
        if not self.instructed:
            raise SpecError(
                "required unless agentId is set when creating a session; a system message "
                "only stands in for both in a one-off run (pass system_prompt= or agent_id=)",
                path="systemPrompt",
            )

    def replace(self, **overrides: Any) -> AgentSpec:
        """A copy with ``overrides`` applied, validated like :meth:`build`.

        :raises SpecError: an override breaks a rule, or names no spec field.
        """
        names = {a.name for a in attrs.fields(AgentSpec)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise SpecError(f"unknown spec field(s): {', '.join(unknown)}")
        current = {name: getattr(self, name) for name in names}
        current.update(overrides)
        return AgentSpec.build(**current)

    def to_body(self, tool_refs: Sequence[Mapping[str, Any]]) -> JSONDict:
        """The camelCase request body, with ``tools`` set to the resolved ``tool_refs``.

        ``None`` fields are omitted, as are ``loopDetection``/``toolBudgets`` when
        not given; ``False`` and ``{}`` are sent.
        """
        body = _wire.unstructure(self)
        out: JSONDict = {}
        for key in ("name", "agentId", "systemPrompt", "modelId", "reasoningLevel"):
            if key in body:
                out[key] = body.pop(key)
        out["tools"] = [dict(ref) for ref in tool_refs]
        out.update(body)
        if self.supervisor is not None:
            out["supervisor"] = control_wire(self.supervisor)
        if self.plan is not None:
            out["plan"] = control_wire(self.plan)
        return out


@attrs.frozen(kw_only=True)
class MessageOverrides:
    """Per-message overrides for a session turn (wire-protocol §2.2, §8.4).

    Each given field replaces the session default for that one run; fields left
    :data:`~mantyx_sync._base.types.UNSET` (or ``None``) are not sent.
    """

    tools: tuple[Any, ...] | UnsetType = attrs.field(default=UNSET, metadata={OMIT: True})
    reasoning_level: str | int | UnsetType = UNSET
    output_schema: OutputSchema | UnsetType = UNSET
    loop_detection: LoopDetection | Literal[False] | UnsetType = UNSET
    tool_budgets: dict[str, ToolBudget] | UnsetType = UNSET
    metadata: dict[str, str] | UnsetType = UNSET
    supervisor: bool | Supervisor | UnsetType = attrs.field(default=UNSET, metadata={OMIT: True})
    plan: bool | str | Plan | UnsetType = attrs.field(default=UNSET, metadata={OMIT: True})

    @classmethod
    def build(
        cls,
        *,
        tools: Iterable[Any] | UnsetType | None = UNSET,
        reasoning_level: str | int | UnsetType | None = UNSET,
        output_schema: OutputSchema | Mapping[str, Any] | UnsetType | None = UNSET,
        loop_detection: LoopDetectionArg = UNSET,
        tool_budgets: ToolBudgetsArg = UNSET,
        metadata: Mapping[str, str] | UnsetType | None = UNSET,
        supervisor: SupervisorArg | UnsetType = UNSET,
        plan: PlanArg | UnsetType = UNSET,
    ) -> MessageOverrides:
        """Normalise and check overrides with the same rules as :meth:`AgentSpec.build`.

        :raises SpecError: the first rule broken, with its wire path.
        """

        def given(value: Any) -> bool:
            return value is not UNSET and value is not None

        return cls(
            tools=_coerce_tools(tools) if given(tools) else UNSET,
            reasoning_level=(
                _coerce_reasoning_level(reasoning_level) if given(reasoning_level) else UNSET
            ),
            output_schema=OutputSchema.coerce(output_schema) if given(output_schema) else UNSET,
            loop_detection=_coerce_loop_detection(loop_detection),
            tool_budgets=_coerce_tool_budgets(tool_budgets) if given(tool_budgets) else UNSET,
            metadata=_coerce_metadata(metadata) if given(metadata) else UNSET,
            supervisor=coerce_supervisor(supervisor) if given(supervisor) else UNSET,
            plan=coerce_plan(plan) if given(plan) else UNSET,
        )

    def to_body(self, tool_refs: Sequence[Mapping[str, Any]] | None) -> JSONDict:
        """The camelCase fields to merge into the message body.

        :param tool_refs: the resolved refs of :attr:`tools`; ``tools`` is sent only
            when this is not ``None``.
        """
        body = _wire.unstructure(self)
        if tool_refs is not None:
            body["tools"] = [dict(ref) for ref in tool_refs]
        if not isinstance(self.supervisor, UnsetType):
            body["supervisor"] = control_wire(self.supervisor)
        if not isinstance(self.plan, UnsetType):
            body["plan"] = control_wire(self.plan)
        return body
