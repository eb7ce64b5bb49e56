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
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, Union, cast

import attrs

from ._base.bounded import NotJSON, decode_json, raw_decode
from ._base.types import TypeVar
from ._models import wire as _wire
from ._models.terminal import (
    CancelledPayload,
    ErrorPayload,
    ModelInfo,
    ResultPayload,
    RunOutcome,
    StructuredOutputInfo,
    TokenUsage,
)
from ._models.wire import ALIASES, RAW
from .errors import MantyxError

if TYPE_CHECKING:
    from ._models.payloads import (
        AssistantDelta,
        AssistantMessage,
        LocalToolResultIn,
        LoopDetected,
        ModelFallback,
        PlanStep,
        PlanTransition,
        Started,
        SupervisorVerdict,
        TaskPlan,
        TaskPlanUpdate,
        ThinkingDelta,
        ToolBudgetExceeded,
        ToolCallEvent,
        ToolFile,
        ToolFiles,
        ToolResultEvent,
    )

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

log: logging.Logger = logging.getLogger(__name__)

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

TERMINAL_TYPES: Final = frozenset({"result", "error", "cancelled"})
"""Event types that end a run; the server closes the stream after one of them."""

_TEXT_TYPES: Final = frozenset({"assistant_delta", "thinking_delta", "assistant_message", "result"})


def envelope_of(data_text: str) -> dict[str, Any]:
    """A frame's ``data:`` text as the JSON object it must be.

    :raises MalformedEvent: it is not JSON, or not an object.
    """
    try:
        envelope = decode_json(data_text)
    except NotJSON as exc:
        raise MalformedEvent(f"data is not JSON ({exc})") from exc
    if not isinstance(envelope, dict):
        raise MalformedEvent(f"data is a JSON {type(envelope).__name__}, not an object")
    return envelope


class MalformedEvent(MantyxError, ValueError):
    """An SSE frame is not a usable event envelope; the message says why.

    The stream logs and skips such frames rather than failing the run.
    """


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


if TYPE_CHECKING:  # at run time, __getattr__ builds the same union from _PAYLOAD_NAMES
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

# Event type -> payload class, in the documented order. Only the classes a run
# reads itself (its tool calls, how it ended) live here; _models.payloads, which
# defines the others, loads with a caller's first ``event.payload`` of them.
_PAYLOAD_NAMES: Final = {
    "started": "Started",
    "assistant_delta": "AssistantDelta",
    "thinking_delta": "ThinkingDelta",
    "assistant_message": "AssistantMessage",
    "tool_call": "ToolCallEvent",
    "tool_result": "ToolResultEvent",
    "local_tool_call": "LocalToolCall",
    "local_tool_result_in": "LocalToolResultIn",
    "loop_detected": "LoopDetected",
    "tool_budget_exceeded": "ToolBudgetExceeded",
    "result": "ResultPayload",
    "error": "ErrorPayload",
    "cancelled": "CancelledPayload",
    "model_fallback": "ModelFallback",
    "supervisor": "SupervisorVerdict",
    "task_plan": "TaskPlanUpdate",
    "tool_files": "ToolFiles",
}
_OWN: Final = frozenset({"LocalToolCall", "ResultPayload", "ErrorPayload", "CancelledPayload"})
_LATER_NAMES: Final = (
    frozenset({*_PAYLOAD_NAMES.values(), "PlanStep", "PlanTransition", "TaskPlan", "ToolFile"})
    - _OWN
)


def _payload_class(event_type: str) -> type[Any] | None:
    try:
        return _CLASSES[event_type]
    except KeyError:
        pass
    name = _PAYLOAD_NAMES.get(event_type)
    if name is None:
        return None
    cls: type[Any] = globals()[name] if name in _OWN else _later(name)
    _CLASSES[event_type] = cls
    return cls


_CLASSES: dict[str, type[Any]] = {}


def _later(name: str) -> Any:
    from ._models import payloads

    return getattr(payloads, name)


def __getattr__(name: str) -> Any:
    # PEP 562: the payload names defined in _models.payloads, and the unions of
    # every payload class and event (the event types', in order, then unknown).
    if name == "EventPayload":
        members = (*map(_payload_class, _PAYLOAD_NAMES), UnknownPayload)
        value: Any = Union[members]  # noqa: UP007
    elif name == "AnyRunEvent":
        literal: Any = Literal
        events = [RunEvent[literal[t], _payload_class(t)] for t in _PAYLOAD_NAMES]  # type: ignore[misc]
        value = Union[tuple([*events, RunEvent[_UnmodelledType, UnknownPayload]])]  # noqa: UP007
    elif name in _LATER_NAMES:
        value = _later(name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


# What a payload class needs to be built at all, when the event lacks it.
_REQUIRED: Final = {"local_tool_call": {"toolUseId": "", "name": ""}}


def structure_payload(event_type: str, data: Mapping[str, Any]) -> EventPayload:
    """The typed payload for an event's ``type`` and ``data``.

    :returns: :class:`UnknownPayload` when the type is unknown; when ``data``
        does not have the documented shape, the type's class with every field
        that reads (logged at warning), so ``event.type`` always says the
        payload's class.
    """
    cls = _payload_class(event_type)
    if cls is None:
        return UnknownPayload(data=dict(data))
    try:
        payload: EventPayload = _wire.structure(data, cls)
    except _wire.WireFormatError as exc:
        # One odd field never costs the others (nor, on a terminal event, how the run ended).
        log.warning("%s event: fields not understood were dropped: %s", event_type, exc)
        required = _REQUIRED.get(event_type, {})
        readable = {k: v for k, v in data.items() if _reads({**required, k: v}, cls)}
        payload = _wire.structure({**required, **readable}, cls)
        if hasattr(payload, "raw"):
            payload = attrs.evolve(cast(Any, payload), raw=dict(data))
    if (
        isinstance(payload, (ResultPayload, ErrorPayload))
        and payload.model is not None
        and not payload.model.reported
    ):
        return attrs.evolve(payload, tokens=None, turns=None, model=None)
    return payload


def _reads(data: Mapping[str, Any], cls: type[Any]) -> bool:
    try:
        _wire.structure(data, cls)
    except _wire.WireFormatError:
        return False
    return True


def _seq_of(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


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
    """The event of this ``type``, typed as a run yields it."""
    return cast("AnyRunEvent", RunEvent(seq=seq, type=event_type, data=data))


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
            # An unknown type passes through as sent (see EventType); no cast: a call per event.
            return RunEvent(seq=raw_seq, type=event_type, data=payload)  # type: ignore[return-value]
        if event_type is None and event and event != "message":
            # "message" is SSE's default event name: it names no type.
            event_type = event
        if not isinstance(event_type, str) or not event_type:
            raise MalformedEvent("no event type")
        seq = _seq_of(raw_seq) if raw_seq is not None else _seq_of(id)
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


if TYPE_CHECKING:  # at run time, __getattr__ builds the same union from _PAYLOAD_NAMES
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


def outcome_of(event: RunEvent) -> RunOutcome | None:
    """How the run ended, when ``event`` ends it; ``None`` for any other event."""
    payload = event.payload if event.is_terminal else None
    if isinstance(payload, (ResultPayload, ErrorPayload, CancelledPayload)):
        return RunOutcome.of(payload)
    return None
