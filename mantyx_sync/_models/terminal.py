"""Typed payloads of the events that end a run, which every run reads, and
:class:`RunOutcome`, how the run ended. Public through :mod:`mantyx_sync.events`;
each field is optional and unknown keys are ignored (``raw`` keeps the object as
sent). Values are immutable.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from .wire import ALIASES, RAW

__all__ = [
    "CancelledPayload",
    "ErrorPayload",
    "ModelInfo",
    "ResultPayload",
    "RunOutcome",
    "StructuredOutputInfo",
    "TokenUsage",
]


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
