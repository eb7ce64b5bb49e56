"""OpenTelemetry spans and metrics for runs and the local tool calls they make.

One ``invoke_agent`` CLIENT span per run, one ``execute_tool`` INTERNAL span per
local tool call the SDK runs (a child of its run's span, though it runs on a
pool thread), named and attributed as the OpenTelemetry GenAI semantic
conventions for agents say. OpenTelemetry is optional: nothing here imports it
unless the Client was given a provider, or the application imported
``opentelemetry.trace`` itself (its global provider is then used). Otherwise a
run gets :data:`NO_TRACE`, whose every method does nothing.

Content (prompts, answers, tool arguments and results) is recorded only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true``, and then
through the package's secret redaction.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlsplit

from .._base.redact import redact_text
from .._version import __version__
from ..errors import ArgumentTypeError

if TYPE_CHECKING:
    from ..events import LocalToolCall, RunEvent
    from ..results import RunResult

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["NO_TRACE", "SPAN_EVENT_TYPES", "RunTrace", "Telemetry"]

CAPTURE_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.41.0"
_PROVIDER: Final = "mantyx"
# Tool kinds as the conventions' gen_ai.tool.type names them: a local function
# runs in the application; MCP servers and A2A peers are extensions it calls.
_TOOL_TYPES: Final = {"local": "function", "mcp_local": "extension", "a2a_local": "extension"}
# Events of work the server does for the run: span events, not spans of their own.
SPAN_EVENT_TYPES: Final = frozenset({"tool_call", "model_fallback", "supervisor"})
_EVENT_FIELDS: Final = {
    "tool_call": (("name", "gen_ai.tool.name"), ("toolUseId", "gen_ai.tool.call.id")),
    "model_fallback": (
        ("errorClass", "mantyx.fallback.error_class"),
        ("primaryModelId", "mantyx.fallback.primary_model"),
        ("model", "gen_ai.request.model"),
    ),
    "supervisor": (("action", "mantyx.supervisor.action"), ("phase", "mantyx.supervisor.phase")),
}


def _capture() -> bool:
    return os.environ.get(CAPTURE_ENV, "").strip().lower() == "true"


def _text(value: Any) -> str:
    """``value`` as the text an attribute carries, secrets masked."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return redact_text(text)


class Telemetry:
    """A Client's tracing and metrics: its providers, or the global tracer
    provider once the application has imported OpenTelemetry."""

    def __init__(self, tracer_provider: Any, meter_provider: Any, base_url: str) -> None:
        for name, given, method in (
            ("tracer_provider", tracer_provider, "get_tracer"),
            ("meter_provider", meter_provider, "get_meter"),
        ):
            if given is not None and not callable(getattr(given, method, None)):
                error = ArgumentTypeError(
                    f"Client(): {name} must be an OpenTelemetry {name.title().replace('_', '')}"
                    f" (with {method}()), got {type(given).__name__}"
                )
                error.path = name
                raise error
        self._tracer_provider = tracer_provider
        self._tracer: tuple[Any, Any] | None = None  # (provider, its tracer)
        self._instruments: tuple[Any, Any] | None = None
        if meter_provider is not None:
            meter = meter_provider.get_meter("mantyx_sync", __version__, schema_url=_SCHEMA_URL)
            self._instruments = (
                meter.create_histogram(
                    "gen_ai.client.operation.duration",
                    unit="s",
                    description="GenAI operation duration",
                ),
                meter.create_histogram(
                    "gen_ai.client.token.usage",
                    unit="{token}",
                    description="Number of input and output tokens used",
                ),
            )
        parts = urlsplit(base_url)
        self._server = {
            "server.address": parts.hostname or "",
            "server.port": parts.port or (443 if parts.scheme == "https" else 80),
        }

    def _get_tracer(self) -> Any:
        provider = self._tracer_provider
        if provider is None:
            # Only an application that imported OpenTelemetry can have set it up.
            trace = sys.modules.get("opentelemetry.trace")
            if trace is None:
                return None
            provider = trace.get_tracer_provider()
        cached = self._tracer
        if cached is None or cached[0] is not provider:
            tracer = provider.get_tracer("mantyx_sync", __version__, schema_url=_SCHEMA_URL)
            self._tracer = cached = (provider, tracer)
        return cached[1]

    def start_run(self, body: Mapping[str, Any], session_id: str | None) -> RunTrace:
        """The trace of a run about to be created from ``body`` (:data:`NO_TRACE` when off)."""
        tracer = self._get_tracer()
        if tracer is None and self._instruments is None:
            return NO_TRACE
        return RunTrace(tracer, self._instruments, self._server, body, session_id)


class RunTrace:
    """One run's span and metrics, from before the run is created to its end.

    Thread-safety: :meth:`tool` is entered on pool threads, everything else on
    the caller's; :meth:`end` may run on a finalizer's thread and ends once.
    """

    def __init__(
        self,
        tracer: Any,
        instruments: tuple[Any, Any] | None,
        server: Mapping[str, Any],
        body: Mapping[str, Any],
        session_id: str | None,
    ) -> None:
        self._tracer = tracer
        self._instruments = instruments
        self._capture = _capture()
        self._started = time.monotonic()
        self._ending = threading.Lock()
        name = body.get("name")
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": _PROVIDER,
            **server,
        }
        if isinstance(name, str) and name:
            attributes["gen_ai.agent.name"] = name
        model = body.get("modelId")
        if isinstance(model, str) and model:
            attributes["gen_ai.request.model"] = model
        if session_id is not None:
            attributes["gen_ai.conversation.id"] = session_id
        self._metric_attributes = {
            key: attributes[key]
            for key in ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model")
            if key in attributes
        } | dict(server)
        self._span: Any = None
        self._context: Any = None
        if tracer is not None:
            from opentelemetry import trace

            span_name = (
                f"invoke_agent {name}" if "gen_ai.agent.name" in attributes else "invoke_agent"
            )
            self._span = tracer.start_span(
                span_name, kind=trace.SpanKind.CLIENT, attributes=attributes
            )
            self._context = trace.set_span_in_context(self._span)
            if self._capture:
                self._span.set_attribute("gen_ai.input.messages", _text(_input_messages(body)))

    def headers(self) -> dict[str, str]:
        """The propagation headers (W3C ``traceparent``) naming this run's span."""
        if self._span is None:
            return {}
        from opentelemetry import propagate

        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=self._context)
        return carrier

    def note(self, event: RunEvent) -> None:
        """A span event for work the server did for the run (server-side tool
        calls, model fallbacks, supervisor verdicts)."""
        if self._span is None:
            return
        data = event.data
        attributes = {
            attribute: data[key]
            for key, attribute in _EVENT_FIELDS[event.type]
            if isinstance(data.get(key), (str, int, float, bool))
        }
        attributes["mantyx.event.seq"] = event.seq
        self._span.add_event(f"mantyx.{event.type}", attributes=attributes)

    def run_tool(
        self, call: LocalToolCall, kind: str, run: Callable[[LocalToolCall, T], R], arg: T
    ) -> R:
        """``run(call, arg)`` inside the ``execute_tool`` span of ``call``, current
        on this (pool) thread while it runs, so spans the handler opens nest under it."""
        if self._span is None:
            return run(call, arg)
        from opentelemetry import trace

        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.provider.name": _PROVIDER,
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.tool_use_id,
            "gen_ai.tool.type": _TOOL_TYPES.get(kind, "extension"),
        }
        if self._capture:
            attributes["gen_ai.tool.call.arguments"] = _text(call.args)
        with self._tracer.start_as_current_span(
            f"execute_tool {call.name}",
            context=self._context,
            kind=trace.SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                value = run(call, arg)
            except BaseException as exc:
                _set_error(span, type(exc).__qualname__, exc)
                raise
            if self._capture:
                span.set_attribute("gen_ai.tool.call.result", _text(value))
            return value

    def end(
        self,
        result: RunResult | None = None,
        *,
        error_type: str | None = None,
        error: BaseException | None = None,
    ) -> None:
        """End the run's span (once): with ``result``'s tokens, and as failed
        when ``error_type`` is given."""
        if not self._ending.acquire(blocking=False):
            return
        tokens = result.tokens if result is not None else None
        if self._span is not None:
            span = self._span
            if result is not None:
                span.set_attribute("mantyx.run.id", result.run_id)
                if tokens is not None:
                    span.set_attribute("gen_ai.usage.input_tokens", tokens.input_tokens)
                    span.set_attribute("gen_ai.usage.output_tokens", tokens.output_tokens)
                if self._capture and result.text:
                    span.set_attribute(
                        "gen_ai.output.messages", _text(_output_messages(result.text))
                    )
            if error_type is not None:
                _set_error(span, error_type, error)
            span.end()
        if self._instruments is not None:
            duration, usage = self._instruments
            attributes = dict(self._metric_attributes)
            if error_type is not None:
                attributes["error.type"] = error_type
            duration.record(time.monotonic() - self._started, attributes=attributes)
            if tokens is not None:
                for kind, count in (
                    ("input", tokens.input_tokens),
                    ("output", tokens.output_tokens),
                ):
                    usage.record(count, attributes={**attributes, "gen_ai.token.type": kind})

    def run_id(self, run_id: str) -> None:
        """Name the run on its span as soon as the server has answered."""
        if self._span is not None:
            self._span.set_attribute("mantyx.run.id", run_id)


class _NoTrace(RunTrace):
    """A run traced by nobody: every method returns at once."""

    def __init__(self) -> None:
        self._span = None
        self._instruments = None

    def end(self, *args: Any, **kwargs: Any) -> None:
        pass


NO_TRACE: Final[RunTrace] = _NoTrace()
"""The trace of every run while neither tracing nor metrics are on."""


def _set_error(span: Any, error_type: str, error: BaseException | None) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    description = redact_text(str(error)) if error is not None else error_type
    span.set_status(Status(StatusCode.ERROR, description))


def _input_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The run's input in the conventions' message shape (text parts; a file
    part names its type, never its bytes)."""
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
    messages = []
    for message in body.get("messages") or ():
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        pieces = [content] if isinstance(content, str) else content or ()
        parts = []
        for piece in pieces:
            if isinstance(piece, str):
                parts.append({"type": "text", "content": piece})
            elif isinstance(piece, Mapping) and isinstance(piece.get("text"), str):
                parts.append({"type": "text", "content": piece["text"]})
            elif isinstance(piece, Mapping):
                parts.append({"type": str(piece.get("type") or "file")})
        messages.append({"role": str(message.get("role") or "user"), "parts": parts})
    return messages


def _output_messages(text: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": text}],
            "finish_reason": "stop",
        }
    ]
