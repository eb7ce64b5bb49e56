"""The agent spec and per-message overrides, checked before anything is sent.

The spec keywords are declared once, in :class:`SpecKeywords` (those a session
message may also give in :class:`OverrideKeywords`): their names, types and
docs serve :class:`~mantyx_sync.Agent`, :meth:`AgentSpec.build`,
:meth:`~Sessions.create`, sessions and the command line.
``loop_detection``/``tool_budgets`` left :data:`~mantyx_sync.UNSET` are not
sent, so the server's defaults apply.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar

import attrs

from ._base.types import JSONDict
from ._models import wire as _wire
from ._models.checks import (
    coerce_budgets,
    coerce_metadata,
    coerce_reasoning_level,
    coerce_text,
    validate_tool_refs,
)
from ._models.wire import OMIT
from .controls import (
    Plan,
    PlanArg,
    ReasoningTrigger,
    Supervisor,
    SupervisorArg,
    coerce_plan,
    coerce_supervisor,
    control_wire,
)
from .errors import ArgumentTypeError, SpecError
from .guards import (
    LoopDetection,
    LoopDetectionArg,
    OutputSchema,
    ToolBudget,
    ToolBudgetsArg,
    coerce_tool_budgets,
)
from .local_tools import as_local_tool
from .tools import ClientResolvedTool, ToolLike
from .types import UNSET, UnsetType

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

__all__ = [
    "AgentSpec",
    "LoopDetection",
    "OutputSchema",
    "OverrideKeywords",
    "Plan",
    "ReasoningTrigger",
    "SpecKeywords",
    "Supervisor",
    "ToolBudget",
]

_Documented = TypeVar("_Documented", bound=Callable[..., Any])


def keyword_docs(keywords: type) -> Callable[[_Documented], _Documented]:
    """Append the docstring of ``keywords`` (one of the keyword declarations
    below) to the decorated class's or function's, so ``help()`` shows each
    keyword where it is taken while its text is written once."""

    def decorate(target: _Documented) -> _Documented:
        docs = [inspect.cleandoc(doc) for doc in (target.__doc__, keywords.__doc__) if doc]
        target.__doc__ = "\n\n".join(docs) or None
        return target

    return decorate


class OverrideKeywords(TypedDict, total=False):
    """These spec keywords may also be given to a session message, for its one run:

    :param tools: what the agent may call: server-resolved references
        (:class:`MantyxTool`, :class:`PluginTool`, :class:`A2ATool`,
        :class:`McpTool`), local tools (:func:`define_local_tool`, functions
        decorated with :func:`local_tool`, or plain typed functions) and
        :func:`define_local_mcp` / :func:`define_local_a2a` definitions, which
        are connected when a run or session starts and closed when it ends.
    :param reasoning_level: ``"off"``, ``"low"``, ``"medium"``, ``"high"`` or
        0-100, passed through unchanged.
    :param output_schema: the shape of the answer: an :class:`OutputSchema`,
        ``{"schema": ..., "name": ...}`` or a bare JSON Schema.
    :param loop_detection: ``False`` turns the loop guard off; a
        :class:`LoopDetection` or mapping sets its thresholds; ``None`` (or
        not given) keeps the server's defaults.
    :param tool_budgets: tool name -> ``int``, :class:`ToolBudget` or
        ``{"maxCalls": n}``; ``{}`` clears the server's default budgets;
        ``None`` (or not given) keeps them.
    :param metadata: up to 16 string key/values to filter runs by.
    :param supervisor: ``True`` (on, server defaults), ``False`` or a
        :class:`Supervisor`.
    :param plan: ``True``/``"auto"``, ``"required"``, ``False``/``"off"`` or a
        :class:`Plan`.
    """

    tools: Iterable[ToolLike]
    reasoning_level: str | int | None
    output_schema: OutputSchema | Mapping[str, Any] | None
    loop_detection: LoopDetectionArg
    tool_budgets: ToolBudgetsArg
    metadata: Mapping[str, str] | None
    supervisor: SupervisorArg
    plan: PlanArg


@keyword_docs(OverrideKeywords)
class SpecKeywords(OverrideKeywords, total=False):
    """The agent's spec keywords, each optional. Give ``system_prompt`` or
    ``agent_id``: with neither, every run must bring a non-empty system
    message, and a session is refused.

    :param system_prompt: the agent's instructions.
    :param agent_id: run a stored workspace agent instead.
    :param model_id: a catalog id or shorthand; the workspace default when omitted.
    :param name: a label for observability.
    :param budgets: passed through, e.g. ``{"maxToolTurns": 32}``.
    :param fallback_model_id: the model to switch to when ``model_id`` is
        overloaded or unreachable; must differ from it.
    """

    system_prompt: str | None
    agent_id: str | None
    model_id: str | None
    name: str | None
    budgets: Mapping[str, Any] | None
    fallback_model_id: str | None


def _coerce_tools(value: Any, path: str = "tools") -> tuple[Any, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"must be a list of tools, got {type(value).__name__}", path=path)
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
    # Names are known now (an MCP server's tools only once it is reached): a
    # clash or a bad name fails here, where the spec is written, not at run().
    validate_tool_refs([_known_ref(tool) for tool in tools], connected=False)
    return tuple(tools)


def _known_ref(tool: Any) -> dict[str, Any]:
    """What a tool's ``tools[]`` entry is known to hold before anything is
    connected: its kind and model-facing name (an MCP server's label), and the
    headers of a server-resolved peer."""
    ref = {"kind": getattr(tool, "kind", None), "name": getattr(tool, "name", None)}
    headers = getattr(tool, "headers", None)
    if ref["kind"] in ("a2a", "mcp") and headers is not None:
        ref["headers"] = dict(headers)
    return ref


# How each spec keyword's value is checked and normalised; each takes ``path=``,
# the keyword itself, so a message names the argument the caller wrote.
_COERCE: dict[str, Callable[..., Any]] = {
    "system_prompt": coerce_text,
    "agent_id": coerce_text,
    "model_id": coerce_text,
    "name": coerce_text,
    "tools": _coerce_tools,
    "reasoning_level": coerce_reasoning_level,
    "output_schema": OutputSchema.coerce,
    "loop_detection": LoopDetection.coerce,
    "tool_budgets": coerce_tool_budgets,
    "budgets": coerce_budgets,
    "metadata": coerce_metadata,
    "fallback_model_id": coerce_text,
    "supervisor": coerce_supervisor,
    "plan": coerce_plan,
}


def _coerced(fields: Mapping[str, Any], keywords: type) -> dict[str, Any]:
    """The ``keywords`` given in ``fields``, checked and normalised; ``None`` is not given.

    :raises SpecError: a keyword is not one of ``keywords`` (a call a type
        checker cannot see, through ``**dict``) or its value breaks a rule.
    """
    unknown = sorted(set(fields) - set(keywords.__annotations__))
    if unknown:
        raise SpecError(
            f"unknown spec field(s): {', '.join(unknown)} "
            f"(expected one of: {', '.join(sorted(keywords.__annotations__))})"
        )
    return {
        name: _COERCE[name](value, path=name)
        for name, value in fields.items()
        if value is not None and value is not UNSET
    }


def _controls_wire(supervisor: Any, plan: Any) -> JSONDict:
    # The converter omits the controls: each has a wire form of its own.
    given = {"supervisor": supervisor, "plan": plan}
    return {key: control_wire(v) for key, v in given.items() if v is not None and v is not UNSET}


def typed_output(output_type: Any) -> OutputSchema | None:
    """The :class:`OutputSchema` derived from an ``output_type`` class (a
    dataclass, an attrs class, a ``TypedDict`` or a pydantic model); ``None``
    for ``None`` or ``str`` (the reply as text).

    :raises ArgumentTypeError: ``output_type`` is not such a class.
    """
    if output_type is None or output_type is str:
        return None
    from ._tools.output import output_schema_of  # schema derivation loads on first use

    return OutputSchema.coerce({"schema": output_schema_of(output_type)}, path="output_type")


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
    @keyword_docs(SpecKeywords)
    def build(cls, **fields: Unpack[SpecKeywords]) -> AgentSpec:
        """Normalise and check a spec.

        :raises SpecError: the first rule broken, naming the argument.
        """
        given = _coerced(fields, SpecKeywords)
        fallback = given.get("fallback_model_id")
        if fallback is not None and fallback == given.get("model_id"):
            raise SpecError("must differ from model_id", path="fallback_model_id")
        return cls(**given)

    @property
    def instructed(self) -> bool:
        """Whether the spec says who the agent is: a ``system_prompt`` or an ``agent_id``.

        A run of a spec with neither is valid only when its messages include a
        non-empty system message; :func:`turn_input` checks that.
        """
        return self.system_prompt is not None or self.agent_id is not None

    def check_session(self) -> None:
        """Refuse to create a session (``POST /agent-sessions``) from a spec without instructions.

        The server requires ``system_prompt`` unless ``agent_id`` is set when a
        session is created; the newer rule that a system message may stand in
        for both applies to a run's input, which a session's creation has none of.

        :raises SpecError: neither ``system_prompt`` nor ``agent_id`` is set.
        """
        if not self.instructed:
            raise SpecError(
                "required unless agent_id is set when creating a session; a system message "
                "only stands in for both in a one-off run (pass system_prompt= or agent_id=)",
                path="system_prompt",
            )

    def replace(self, **overrides: Unpack[SpecKeywords]) -> AgentSpec:
        """A copy with ``overrides`` applied, validated like :meth:`build`.

        :raises SpecError: an override breaks a rule, or names no spec field.
        """
        current = {name: getattr(self, name) for name in SpecKeywords.__annotations__}
        return AgentSpec.build(**{**current, **overrides})

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
        out.update(_controls_wire(self.supervisor, self.plan))
        return out


@attrs.frozen(kw_only=True)
class MessageOverrides:
    """Per-message overrides for a session turn.

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
    def build(cls, **fields: Unpack[OverrideKeywords]) -> MessageOverrides:
        """Normalise and check overrides with the same rules as :meth:`AgentSpec.build`;
        a keyword given as ``None`` is not sent.

        :raises SpecError: the first rule broken, naming the argument.
        """
        return cls(**_coerced(fields, OverrideKeywords))

    def to_body(self, tool_refs: Sequence[Mapping[str, Any]] | None) -> JSONDict:
        """The camelCase fields to merge into the message body.

        :param tool_refs: the resolved refs of :attr:`tools`; ``tools`` is sent only
            when this is not ``None``.
        """
        body = _wire.unstructure(self)
        if tool_refs is not None:
            body["tools"] = [dict(ref) for ref in tool_refs]
        body.update(_controls_wire(self.supervisor, self.plan))
        return body
