"""Run events: the SSE envelope and one typed payload per documented event type.

Each SSE frame's ``data:`` line is the envelope ``{"seq", "type", "data"}``.
:class:`RunEvent` keeps the envelope as sent; :attr:`RunEvent.payload`
structures ``data`` into the typed payload for its type, once. Servers differ
in the keys they send, so every payload field is optional, unknown keys are
ignored, a field that does not read is dropped (logged) and unknown event types
become :class:`UnknownPayload`: nothing here raises for a shape that is merely
new. All values are immutable and thread-safe.

A run yields :data:`AnyRunEvent`, so a type checker reads ``event.payload``'s
class from ``event.type == "assistant_delta"`` as ``match`` does from the class.

Every payload class is defined here (``mantyx_sync.events.TokenUsage``); the
ones written every day are also ``mantyx_sync.RunEvent``, ``AssistantDelta`` ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, Union, cast

import attrs

from ._base.bounded import raw_decode
from ._base.types import TypeVar
from ._models import wire as _wire
from ._models.frames import MalformedEvent, envelope_of, seq_of, structure_fields
from ._models.wire import ALIASES, RAW

__all__ = [
    "AnyRunEvent",
    "AssistantDelta",
    "AssistantMessage",
    "CancelledPayload",
    "ErrorPayload",
    "EventPayload",
    "EventType",
    "LocalToolCall",
    "LocalToolResultIn",
    "LoopDetected",
    "ModelFallback",
    "ModelInfo",
    "PlanStep",
    "PlanTransition",
    "ResultPayload",
    "RunEvent",
    "Started",
    "StructuredOutputInfo",
    "SupervisorVerdict",
    "TaskPlan",
    "TaskPlanUpdate",
    "ThinkingDelta",
    "TokenUsage",
    "ToolBudgetExceeded",
    "ToolCallEvent",
    "ToolFile",
    "ToolFiles",
    "ToolResultEvent",
    "UnknownPayload",
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
string and ``event.payload`` an :class:`~mantyx_sync.events.UnknownPayload`.
"""

TERMINAL_TYPES: Final = frozenset({"result", "error", "cancelled"})
"""Event types that end a run; the server closes the stream after one of them."""

_TEXT_TYPES: Final = frozenset({"assistant_delta", "thinking_delta", "assistant_message", "result"})


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
class LocalToolCall:
    """``local_tool_call``: the SDK must answer this call.

    :ivar args: the model's arguments (``args``, or ``input`` on servers that use it).
    :ivar kind: ``"local"``, ``"a2a_local"`` or ``"mcp_local"`` (``"local"`` when absent).
    :ivar agent_card: for ``a2a_local``, the Agent Card echoed from the spec.
    :ivar mcp_server: for ``mcp_local``, the ref's server label.
    :ivar mcp_tool_name: for ``mcp_local``, the declared (model-facing) tool name.
    :ivar mcp_server_info: for ``mcp_local``, the ref's ``serverInfo`` when it had one.
    :ivar raw: the event's ``data`` object as sent.
    """

    tool_use_id: str
    name: str
    args: dict[str, Any] = attrs.field(factory=dict, metadata={ALIASES: ("input",)})
    kind: str = "local"
    agent_card: dict[str, Any] | None = None
    mcp_server: str | None = None
    mcp_tool_name: str | None = None
    mcp_server_info: dict[str, Any] | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)


@attrs.frozen(kw_only=True)
class UnknownPayload:
    """An event type this SDK does not model; ``data`` is the payload as sent."""

    data: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True})


if TYPE_CHECKING:  # at run time, __getattr__ builds the same union from _PAYLOADS
    EventPayload = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
        Started,
        AssistantDelta,
        ThinkingDelta,
        AssistantMessage,
        ToolCallEvent,
        ToolResultEvent,
        LocalToolCall,
        LocalToolResultIn,
        LoopDetected,
        ToolBudgetExceeded,
        ResultPayload,
        ErrorPayload,
        CancelledPayload,
        ModelFallback,
        SupervisorVerdict,
        TaskPlanUpdate,
        ToolFiles,
        UnknownPayload,
    ]
    """Every payload :attr:`RunEvent.payload` can return."""


# Event types with an UnknownPayload; a type the server adds later arrives as one.
_UnmodelledType = Literal[
    "case_started", "case_completed", "run_completed", "run_error", "run_cancelled"
]
T = TypeVar("T", bound=str, covariant=True, default=EventType)
P = TypeVar("P", covariant=True, default="EventPayload")

# Event type -> payload class, in the documented order.
_PAYLOADS: Final[dict[str, type[Any]]] = {
    "started": Started,
    "assistant_delta": AssistantDelta,
    "thinking_delta": ThinkingDelta,
    "assistant_message": AssistantMessage,
    "tool_call": ToolCallEvent,
    "tool_result": ToolResultEvent,
    "local_tool_call": LocalToolCall,
    "local_tool_result_in": LocalToolResultIn,
    "loop_detected": LoopDetected,
    "tool_budget_exceeded": ToolBudgetExceeded,
    "result": ResultPayload,
    "error": ErrorPayload,
    "cancelled": CancelledPayload,
    "model_fallback": ModelFallback,
    "supervisor": SupervisorVerdict,
    "task_plan": TaskPlanUpdate,
    "tool_files": ToolFiles,
}


def __getattr__(name: str) -> Any:
    # PEP 562: the unions of every payload class and of every event (the event
    # types', in order, then unknown), built on first use.
    if name == "EventPayload":
        value: Any = Union[tuple([*_PAYLOADS.values(), UnknownPayload])]  # noqa: UP007
    elif name == "AnyRunEvent":
        generic: Any = RunEvent
        literal: Any = Literal
        events = [generic[literal[t], cls] for t, cls in _PAYLOADS.items()]
        value = Union[tuple([*events, generic[_UnmodelledType, UnknownPayload]])]  # noqa: UP007
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def structure_payload(event_type: str, data: Mapping[str, Any]) -> EventPayload:
    """The typed payload for an event's ``type`` and ``data``.

    :returns: :class:`UnknownPayload` when the type is unknown; when ``data``
        does not have the documented shape, the type's class with every field
        that reads (logged at warning), so ``event.type`` always says the
        payload's class.
    """
    cls = _PAYLOADS.get(event_type)
    if cls is None:
        return UnknownPayload(data=dict(data))
    payload: EventPayload = structure_fields(event_type, data, cls)
    if (
        isinstance(payload, (ResultPayload, ErrorPayload))
        and payload.model is not None
        and not payload.model.reported
    ):
        return attrs.evolve(payload, tokens=None, turns=None, model=None)
    return payload


def exact_call(data: Mapping[str, Any]) -> LocalToolCall | None:
    """The local call in ``data`` when every field reads, else ``None`` (a call
    to answer with a problem rather than run). The documented shapes are built
    by the class's plain path (a few µs), without cattrs."""
    try:
        return _wire.structure(data, LocalToolCall)
    except _wire.WireFormatError:
        return None


_UNBUILT: Any = object()  # RunEvent's payload, until it is asked for


def event_of(seq: int, event_type: str, data: dict[str, Any]) -> AnyRunEvent:
    """The event of this ``type``, typed as a run yields it (the same as
    ``RunEvent(seq=, type=, data=)``, in a third of the time: once per event)."""
    event = _new_event(RunEvent)
    _set_seq(event, seq)
    _set_type(event, event_type)
    _set_data(event, data)
    _set_payload(event, _UNBUILT)
    return event


@attrs.frozen(kw_only=True)
class RunEvent(Generic[T, P]):
    """One event of a run, as the envelope ``{"seq", "type", "data"}``.

    Build it with :meth:`from_frame`. ``data`` is the payload object as sent;
    :attr:`payload` is its typed form. A run yields :data:`AnyRunEvent`:
    ``RunEvent[Literal["assistant_delta"], AssistantDelta]`` and so on, so a
    type checker reads the payload's class from a check of ``event.type``.
    A bare ``RunEvent`` is ``RunEvent[EventType, EventPayload]``.
    """

    seq: int
    type: T
    data: dict[str, Any] = attrs.field(factory=dict)
    # The payload once built (a cached_property's __getattr__ would slow every read;
    # an unset slot would raise, and catching that costs more than the building).
    _payload: P = attrs.field(init=False, default=_UNBUILT, repr=False, eq=False, hash=False)

    def __reduce__(self) -> tuple[Any, ...]:
        return (event_of, (self.seq, self.type, self.data))

    @classmethod
    def from_frame(
        cls, data_text: str, *, event: str | None = None, id: str | None = None
    ) -> AnyRunEvent:
        """Parse one SSE frame.

        :param data_text: the frame's ``data:`` text (the JSON envelope).
        :param event: the ``event:`` line, used only when the envelope has no ``type``
            (middleware may strip ``event:`` lines; the envelope is the truth).
        :param id: the ``id:`` line, used only when the envelope has no ``seq``.
        :raises MalformedEvent: the frame is not JSON, not an object, or has no
            usable type or integer seq.
        """
        # json.loads' own wrapper costs as much as the decoding of a small event:
        # a whole object is taken as it is, anything else gets envelope_of's words.
        try:
            envelope, end = raw_decode(data_text)
        except (ValueError, RecursionError):
            end = -1
        if end != len(data_text) or type(envelope) is not dict:
            envelope = envelope_of(data_text)
        event_type = envelope.get("type")
        raw_seq = envelope.get("seq")
        payload = envelope.get("data")
        # The documented shape, checked with exact types (the per-event path).
        if (
            type(event_type) is str
            and event_type
            and type(raw_seq) is int
            and type(payload) is dict
        ):
            # An unknown type passes through as sent (see EventType).
            return event_of(raw_seq, event_type, payload)
        if event_type is None and event and event != "message":
            # "message" is SSE's default event name: it names no type.
            event_type = event
        if not isinstance(event_type, str) or not event_type:
            raise MalformedEvent("no event type")
        seq = seq_of(raw_seq) if raw_seq is not None else seq_of(id)
        if seq is None:
            raise MalformedEvent(f"{event_type} event has no integer seq")
        if payload is None:
            payload = {}
        if not isinstance(payload, dict):
            raise MalformedEvent(f"{event_type} event data is not an object")
        return event_of(seq, event_type, payload)

    @property
    def is_terminal(self) -> bool:
        """Whether this event ends the run (``result``, ``error`` or ``cancelled``)."""
        return self.type in TERMINAL_TYPES

    @property
    def text(self) -> str | None:
        """The text of an assistant/thinking delta, assistant message or result, else ``None``."""
        if self.type not in _TEXT_TYPES:
            return None
        value = self.data.get("text")
        return value if isinstance(value, str) else None

    @property
    def payload(self) -> P:
        """The typed payload (:class:`UnknownPayload` for types this SDK does not
        model), built on first use and kept."""
        payload = self._payload
        if payload is _UNBUILT:
            payload = cast("P", structure_payload(self.type, self.data))
            object.__setattr__(self, "_payload", payload)
        return payload

    @property
    def local_tool_call(self) -> LocalToolCall | None:
        """The call, when this is a well-formed ``local_tool_call`` event."""
        return exact_call(self.data) if self.type == "local_tool_call" else None


# What RunEvent's attrs-made __init__ does, without its Python frame and its
# five calls through object.__setattr__: each slot set by its own descriptor.
_new_event = RunEvent.__new__
_set_seq, _set_type, _set_data, _set_payload = (
    RunEvent.__dict__[field].__set__ for field in ("seq", "type", "data", "_payload")
)

if TYPE_CHECKING:  # at run time, __getattr__ builds the same union from _PAYLOADS
    # One member per event type: comparing ``event.type`` narrows ``event.payload``.
    AnyRunEvent = Union[  # noqa: UP007
        RunEvent[Literal["started"], Started],
        RunEvent[Literal["assistant_delta"], AssistantDelta],
        RunEvent[Literal["thinking_delta"], ThinkingDelta],
        RunEvent[Literal["assistant_message"], AssistantMessage],
        RunEvent[Literal["tool_call"], ToolCallEvent],
        RunEvent[Literal["tool_result"], ToolResultEvent],
        RunEvent[Literal["local_tool_call"], LocalToolCall],
        RunEvent[Literal["local_tool_result_in"], LocalToolResultIn],
        RunEvent[Literal["loop_detected"], LoopDetected],
        RunEvent[Literal["tool_budget_exceeded"], ToolBudgetExceeded],
        RunEvent[Literal["result"], ResultPayload],
        RunEvent[Literal["error"], ErrorPayload],
        RunEvent[Literal["cancelled"], CancelledPayload],
        RunEvent[Literal["model_fallback"], ModelFallback],
        RunEvent[Literal["supervisor"], SupervisorVerdict],
        RunEvent[Literal["task_plan"], TaskPlanUpdate],
        RunEvent[Literal["tool_files"], ToolFiles],
        RunEvent[_UnmodelledType, UnknownPayload],
    ]
    """An event as a run yields it: :class:`RunEvent` typed by its ``type``."""


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


def outcome_of(event: RunEvent) -> RunOutcome | None:
    """How the run ended, when ``event`` ends it; ``None`` for any other event."""
    payload = event.payload if event.is_terminal else None
    if isinstance(payload, (ResultPayload, ErrorPayload, CancelledPayload)):
        return RunOutcome.of(payload)
    return None
