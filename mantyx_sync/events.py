"""Run events: the SSE envelope and one typed payload per documented event type.

Each SSE frame's ``data:`` line is the envelope ``{"seq", "type", "data"}``
(agent-runs §7, wire-protocol §4). :class:`RunEvent` keeps the envelope as
sent; :attr:`RunEvent.payload` structures ``data`` into the typed payload for
its type. Servers differ in the keys they send (see the protocol NOTES), so
every payload field is optional, unknown keys are ignored and unknown event
types become :class:`UnknownPayload`: nothing here raises for a shape that is
merely new.

All values are immutable and safe to share between threads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Union

import attrs

from ._models import wire as _wire
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
    "AssistantDelta",
    "AssistantMessage",
    "CancelledPayload",
    "ErrorPayload",
    "EventPayload",
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

log = logging.getLogger(__name__)

TERMINAL_TYPES: Final = frozenset({"result", "error", "cancelled"})
"""Event types that end a run; the server closes the stream after one of them."""

_TEXT_TYPES: Final = frozenset({"assistant_delta", "thinking_delta", "assistant_message", "result"})


class MalformedEvent(MantyxError, ValueError):
    """An SSE frame is not a usable event envelope; the message says why.

    The stream logs and skips such frames rather than failing the run.
    """


@attrs.frozen(kw_only=True)
class TokenUsage:
    """Tokens a run consumed (NEWER item 17).

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
        """Whether a real model was reported.

        Servers from before the cost fields (NEWER item 17) send an empty
        ``provider``; their token counts and turns are not real either.
        """
        return bool(self.provider)


@attrs.frozen(kw_only=True)
class StructuredOutputInfo:
    """How an output schema was applied to a run (NEWER item 6), from its terminal event.

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
class LocalToolCall:
    """``local_tool_call``: the SDK must answer this call (wire-protocol §4.3).

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
class ResultPayload:
    """``result``: the run ended; :attr:`success` says whether it succeeded.

    :ivar subtype: ``"success"`` or a failure such as ``error_local_tool_timeout``
        (absent on servers that send ``ok`` instead).
    :ivar tokens: usage, ``None`` when the server did not report it.
    :ivar turns: model invocations, ``None`` when not reported.
    :ivar model: the model that served the run, ``None`` when not reported.
    :ivar structured_output: how an output schema was applied (NEWER item 6).
    :ivar plan: a plan-only run's ``{brief, steps}``, as sent.
    """

    subtype: str | None = None
    ok: bool | None = None
    text: str | None = None
    error: str | None = None
    tokens: TokenUsage | None = None
    turns: int | None = None
    model: ModelInfo | None = None
    structured_output: StructuredOutputInfo | None = None
    plan: dict[str, Any] | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)

    @property
    def success(self) -> bool:
        """``subtype == "success"``, or ``ok`` is true and there is no subtype (NOTES.md)."""
        if self.subtype is not None:
            return self.subtype == "success"
        return self.ok is True


@attrs.frozen(kw_only=True)
class ErrorPayload:
    """``error``: the run failed (wire-protocol §4.7).

    :ivar error: the human-readable message.
    :ivar code: machine-readable category (legacy alias of ``error_class``).
    :ivar partial_text: salvage text; for output-schema runs usually broken JSON.
    :ivar retryable: the server's coarse retry hint.
    :ivar api_status: the provider API's HTTP status behind the failure (NEWER item 18).
    :ivar api_code: the provider API's error code.
    :ivar structured_output: how an output schema was applied (NEWER item 6).
    """

    error: str | None = None
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

# Event type -> payload class, in the documented order. Only the classes a
# run reads itself live here; the others (deltas, messages, server-side tool
# activity, guards, plans, model switches, supervisor verdicts, tool files) are
# built only for a caller's ``event.payload``, so _models.payloads, which
# defines them, loads with the first such use.
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
    name = _PAYLOAD_NAMES.get(event_type)
    if name is None:
        return None
    cls: type[Any] = globals()[name] if name in _OWN else _later(name)
    return cls


def _later(name: str) -> Any:
    from ._models import payloads

    return getattr(payloads, name)


def __getattr__(name: str) -> Any:
    # PEP 562: the payload names defined in _models.payloads, and the union of
    # every payload class (the event types', in order, then unknown).
    if name == "EventPayload":
        members = (*map(_payload_class, _PAYLOAD_NAMES), UnknownPayload)
        value: Any = Union[members]  # noqa: UP007
    elif name in _LATER_NAMES:
        value = _later(name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def structure_payload(event_type: str, data: Mapping[str, Any]) -> EventPayload:
    """The typed payload for an event's ``type`` and ``data``.

    :returns: :class:`UnknownPayload` when the type is unknown, or when ``data``
        does not have the documented shape (logged at warning).
    """
    cls = _payload_class(event_type)
    if cls is None:
        return UnknownPayload(data=dict(data))
    try:
        payload: EventPayload = _wire.structure(data, cls)
    except _wire.WireFormatError as exc:
        log.warning("%s event payload not understood, kept as unknown: %s", event_type, exc)
        return UnknownPayload(data=dict(data))
    if (
        isinstance(payload, (ResultPayload, ErrorPayload))
        and payload.model is not None
        and not payload.model.reported
    ):
        return attrs.evolve(payload, tokens=None, turns=None, model=None)
    return payload


_DECODER: Final = json.JSONDecoder()
_JSON_SPACE: Final = " \t\n\r"


def _loads(text: str) -> Any:
    """``json.loads(text)``, minus its per-call overhead in the common case.

    ``raw_decode`` skips the whitespace regexes ``loads`` runs on every frame;
    anything unusual (leading or trailing whitespace, errors) goes through
    ``json.loads`` so results and error messages stay exactly the same.
    """
    try:
        value, end = _DECODER.raw_decode(text)
    except json.JSONDecodeError:
        return json.loads(text)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return json.loads(text)
    return value


def _seq_of(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


@attrs.frozen(kw_only=True)
class RunEvent:
    """One event of a run, as the envelope ``{"seq", "type", "data"}``.

    Build it with :meth:`from_frame`. ``data`` is the payload object as sent;
    :attr:`payload` is its typed form.
    """

    seq: int
    type: str
    data: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_frame(
        cls, data_text: str, *, event: str | None = None, id: str | None = None
    ) -> RunEvent:
        """Parse one SSE frame.

        :param data_text: the frame's ``data:`` text (the JSON envelope).
        :param event: the ``event:`` line, used only when the envelope has no ``type``
            (middleware may strip ``event:`` lines; the envelope is the truth).
        :param id: the ``id:`` line, used only when the envelope has no ``seq``.
        :raises MalformedEvent: the frame is not JSON, not an object, or has no
            usable type or integer seq.
        """
        try:
            envelope = _loads(data_text)
        except json.JSONDecodeError as exc:
            raise MalformedEvent(f"data is not JSON ({exc.msg})") from exc
        if not isinstance(envelope, dict):
            raise MalformedEvent(f"data is a JSON {type(envelope).__name__}, not an object")
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
            return cls(seq=raw_seq, type=event_type, data=payload)
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
        return cls(seq=seq, type=event_type, data=payload)

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
    def payload(self) -> EventPayload:
        """The typed payload (:class:`UnknownPayload` for types this SDK does not model)."""
        return structure_payload(self.type, self.data)

    @property
    def local_tool_call(self) -> LocalToolCall | None:
        """The call, when this is a well-formed ``local_tool_call`` event."""
        payload = self.payload if self.type == "local_tool_call" else None
        return payload if isinstance(payload, LocalToolCall) else None
