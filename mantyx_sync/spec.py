"""The agent spec, per-message overrides and turn input, checked before anything is sent.

:class:`AgentSpec` is the body of ``POST /agent-runs`` and ``POST /agent-sessions``
(agent-runs §4, wire-protocol §2). :meth:`AgentSpec.build` normalises every
accepted input shape and checks every documented limit that does not need the
tools resolved, raising :class:`~mantyx_sync.errors.SpecError` with the wire
path of the field to fix. :func:`validate_tool_refs` checks the resolved
``tools[]`` entries just before the body is sent.

"Not given" and "given" are kept apart on the wire (wire-protocol §8):
``loop_detection``/``tool_budgets`` left :data:`~mantyx_sync.UNSET` are
omitted so the server defaults apply; ``loop_detection=False`` disables the
guard; ``tool_budgets={}`` clears the server's default budgets and is sent.

The run guards a spec takes (:class:`OutputSchema`, :class:`LoopDetection`,
:class:`ToolBudget`) and their rules live in :mod:`mantyx_sync._models.guards`,
the run controls (:class:`Supervisor`, :class:`Plan`) in
:mod:`mantyx_sync._models.controls`; both are public from here.

All values here are immutable and safe to share between threads.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from ._base.argcheck import checked, checked_init
from ._base.types import UNSET, JSONDict, UnsetType
from ._models import wire as _wire
from ._models.checks import (
    coerce_budgets,
    coerce_metadata,
    coerce_reasoning_level,
    coerce_text,
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
)
from ._models.guards import (
    LoopDetection,
    LoopDetectionArg,
    OutputSchema,
    ToolBudget,
    ToolBudgetsArg,
    coerce_loop_detection,
    coerce_output_schema,
    coerce_tool_budgets,
)
from ._models.wire import OMIT
from ._tools.local_tool import as_local_tool
from .errors import SpecError
from .tools import ClientResolvedTool

__all__ = [
    "AgentSpec",
    "LoopDetection",
    "OutputSchema",
    "Plan",
    "ReasoningTrigger",
    "Supervisor",
    "ToolBudget",
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


@checked_init(SpecError)
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
        fallback = coerce_text(fallback_model_id, "fallbackModelId")
        if fallback is not None and fallback == model_id:
            raise SpecError("must differ from modelId", path="fallbackModelId")
        return cls(
            system_prompt=coerce_text(system_prompt, "systemPrompt"),
            agent_id=coerce_text(agent_id, "agentId"),
            model_id=coerce_text(model_id, "modelId"),
            name=coerce_text(name, "name"),
            tools=_coerce_tools(tools),
            reasoning_level=(
                None if reasoning_level is None else coerce_reasoning_level(reasoning_level)
            ),
            output_schema=coerce_output_schema(output_schema),
            loop_detection=coerce_loop_detection(loop_detection),
            tool_budgets=(
                UNSET
                if tool_budgets is UNSET or tool_budgets is None
                else coerce_tool_budgets(tool_budgets)
            ),
            budgets=None if budgets is None else coerce_budgets(budgets),
            metadata=None if metadata is None else coerce_metadata(metadata),
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

    @checked(SpecError, "AgentSpec.to_body")
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
    :data:`~mantyx_sync.UNSET` (or ``None``) are not sent.
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
                coerce_reasoning_level(reasoning_level) if given(reasoning_level) else UNSET
            ),
            output_schema=OutputSchema.coerce(output_schema) if given(output_schema) else UNSET,
            loop_detection=coerce_loop_detection(loop_detection),
            tool_budgets=coerce_tool_budgets(tool_budgets) if given(tool_budgets) else UNSET,
            metadata=coerce_metadata(metadata) if given(metadata) else UNSET,
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
