"""Per-run and per-session state: the event log, tool-call waits, cancel, timeouts.

Each run executes in its own daemon thread from creation, whether or not a
client is streaming; a local tool call blocks that thread until every call of
the turn is answered, the tool timeout passes, or the run is cancelled. Who
answers a tool call, and the event data of calls and answers, is :mod:`._tool_calls`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from .._base.argcheck import checked
from ._catalog import resolve_model
from ._controls import CONTROL_STEPS, plan_only_result, play_control, structured_output_info
from ._tool_calls import answer_of, describe_call, retained
from .faults import FaultState
from .model import (
    TERMINAL_TYPES,
    Emit,
    Fail,
    FailResult,
    ModelContext,
    ModelLike,
    ToolCall,
    Turn,
    chunk_text,
    step_source,
)
from .sessions import EmulatedSession, RunOptions

__all__ = ["EmulatedRun"]

log: logging.Logger = logging.getLogger(__name__)


class _RunEnded(Exception):
    """Unwinds the worker thread once the run is terminal or the server stops."""


def _given(**fields: Any) -> dict[str, Any]:
    """The ``fields`` that are not ``None``."""
    return {name: value for name, value in fields.items() if value is not None}


class EmulatedRun:
    """One run: its spec, its event log and the worker thread producing it.

    Public attributes (read them; do not change them): :attr:`id`, :attr:`spec`,
    :attr:`status` (``queued``/``running``/``succeeded``/``failed``/``cancelled``),
    :attr:`events` (envelope dicts ``{seq, type, data}``), :attr:`tool_results`
    (``toolUseId`` → first accepted POST body), :attr:`session_id`,
    :attr:`stream_connections`.

    Thread-safety: everything that changes happens under :attr:`cond`; the
    lists only ever grow, so readers may index them without the lock.
    """

    def __init__(
        self,
        *,
        run_id: str,
        number: int,
        spec: dict[str, Any],
        messages: list[dict[str, Any]],
        input_messages: list[dict[str, Any]],
        model: ModelLike,
        model_info: dict[str, Any],
        faults: FaultState,
        options: RunOptions,
        session: EmulatedSession | None,
        on_change: Callable[[], None],
    ) -> None:
        self.id = run_id
        self.number = number
        self.spec = spec
        self.session_id: str | None = session.id if session is not None else None
        self.status: str = "queued"
        self.created_at: float = time.time()
        self.completed_at: float | None = None
        self.events: list[dict[str, Any]] = []
        self.frames: list[bytes] = []
        self.tool_results: dict[str, dict[str, Any]] = {}
        self.stream_connections = 0
        self.final_text: str | None = None
        self.error: str | None = None
        self.failure_reason: dict[str, Any] | None = None
        self.tokens: dict[str, int] | None = None
        self.turns: int | None = None
        self.model: dict[str, Any] | None = None
        self.cond: threading.Condition = threading.Condition()
        self.done: bool = False
        self.closed: bool = False
        self.faults = faults
        self._model_like = model
        self._model_info = model_info
        self._options = options
        self._session = session
        self._on_change = on_change
        self._messages = messages
        self._input_messages = input_messages
        self._pending: dict[str, dict[str, Any]] = {}
        self._results_in: list[dict[str, Any]] = []
        self._calls_made: list[dict[str, Any]] = []
        self._call_counter = 0
        self._model_turns = 0
        self._plan_revisions: dict[str, int] = {}
        self._switched = session is not None and session.active_model_id is not None
        self._turn = 0
        self._chars_out = 0
        self._chars_thinking = 0
        self._thread = threading.Thread(target=self._work, name=f"mantyx-run-{run_id}", daemon=True)

    def start(self) -> None:
        """Start executing the run in its worker thread."""
        self._thread.start()

    def _append(self, kind: str, data: dict[str, Any]) -> None:
        if self.done or self.closed:
            raise _RunEnded
        seq = len(self.events) + 1
        self.events.append({"seq": seq, "type": kind, "data": data})
        faults = self.faults.faults
        envelope = {"seq": seq, "type": kind, "data": data}
        if faults.no_event_field_in_data:
            del envelope["type"]
        text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
        event_line = "" if faults.strip_event_lines else f"event: {kind}\n"
        self.frames.append(f"id: {seq}\n{event_line}data: {text}\n\n".encode())
        if faults.unknown_event_after == seq and kind not in TERMINAL_TYPES:
            self._append("mystery_event", {"x": 1})

    @property
    def model_id(self) -> str | None:
        """The catalog id of the model now serving the run."""
        value = self._model_info.get("id")
        return value if isinstance(value, str) else None

    @checked(TypeError)
    def emit_event(self, kind: str, data: dict[str, Any]) -> None:
        """Log one non-terminal event (used by the control steps)."""
        self._emit(kind, data)

    @checked(TypeError)
    def overload(self, error_class: str, *, covered: bool = True) -> bool:
        """The serving model failed: fall back if configured and the failure is one a
        fallback covers (``covered``), else fail the run.

        :returns: ``True`` when the run ended.
        """
        fallback = self.spec.get("fallbackModelId")
        primary = self.model_id
        if isinstance(fallback, str) and covered and not self._switched:
            self._model_info = resolve_model(fallback)
            self._switched = True
            if self._session is not None:
                with self._session.lock:
                    self._session.active_model_id = fallback
            self._emit(
                "model_fallback",
                {
                    "errorClass": error_class,
                    "model": self.model_id,
                    "primaryModelId": primary,
                    "fallbackModelId": fallback,
                },
            )
            return False
        message = f"model {primary} is unavailable ({error_class})"
        self._fail(Fail(message, code=error_class, error_class=error_class, retryable=True))
        return True

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        with self.cond:
            self._append(kind, data)
            self.cond.notify_all()

    def _finish(self, kind: str, data: dict[str, Any], status: str, **fields: Any) -> bool:
        """Log the terminal event and settle the snapshot; ``False`` if already ended."""
        with self.cond:
            if self.done or self.closed:
                return False
            if kind != "cancelled":
                info = structured_output_info(self.spec)
                if info is not None:
                    data.setdefault("structuredOutput", info)
                if "tokens" in data:
                    data.setdefault("model", dict(self._model_info))
                elif self._options.usage:
                    self._add_usage(data)
            self._append(kind, data)
            self.done = True
            self.status = status
            self.completed_at = time.time()
            self._pending.clear()
            for name, value in fields.items():
                setattr(self, name, value)
            if self._options.usage and kind != "cancelled":
                self.tokens, self.turns, self.model = data["tokens"], data["turns"], data["model"]
            if status == "succeeded" and self._session is not None and "plan" not in data:
                # Before anyone is woken: a waiter may send the next message at once.
                with self._session.lock:
                    self._session.messages.extend(self._input_messages)
                    self._session.messages.append({"role": "assistant", "content": self.final_text})
                    self._session.retained.extend(retained(self.spec, self._results_in))
                    self._session.last_interaction_at = time.time()
            self.cond.notify_all()
            self._on_change()
        log.debug("run %s ended: %s", self.id, status)
        return True

    def _add_usage(self, data: dict[str, Any]) -> None:
        chars_in = sum(len(str(m.get("content", ""))) for m in self._messages)
        chars_in += len(str(self.spec.get("systemPrompt", "")))
        turns = max(self._model_turns, 1)
        reasoning = self._chars_thinking // 4
        data["tokens"] = {
            "inputTokens": turns * (12 + chars_in // 4),
            "cachedTokens": 0,
            "reasoningTokens": reasoning,
            "outputTokens": 1 + self._chars_out // 4 + reasoning,
        }
        data["turns"] = turns
        data["model"] = dict(self._model_info)

    def cancel(self) -> None:
        """Cancel (idempotent): logs the terminal ``cancelled`` event at once."""
        self._finish("cancelled", {"reason": "user"}, "cancelled")

    def close(self) -> None:
        """The server is stopping: wake every waiter so threads and streams end."""
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def post_tool_result(self, body: dict[str, Any]) -> str:
        """Apply a validated tool-result body: ``accepted``, ``terminal`` or ``unknown``."""
        tool_use_id = body["toolUseId"]
        with self.cond:
            if self.done or self.closed:
                return "terminal"
            call = self._pending.pop(tool_use_id, None)
            if call is None:
                return "unknown"
            self.tool_results[tool_use_id] = body
            echo, data = answer_of(call["name"], body)
            self._results_in.append(echo)
            self._append("local_tool_result_in", data)
            self.cond.notify_all()
            return "accepted"

    def snapshot(self) -> dict[str, Any]:
        """The ``GET /agent-runs/{id}`` body."""
        with self.cond:
            return {
                "id": self.id,
                "runId": self.id,
                "status": self.status,
                "finalText": self.final_text,
                "error": self.error,
                "failureReason": self.failure_reason,
                "spec": self.spec,
                "metadata": self.spec.get("metadata") or {},
                "sessionId": self.session_id,
                "tokens": self.tokens,
                "turns": self.turns,
                "model": self.model,
            }

    def _context(self) -> ModelContext:
        with self.cond:
            results, calls = list(self._results_in), list(self._calls_made)
        last_message: dict[str, Any] = next(
            (m for m in reversed(self._messages) if m.get("role") == "user"), {}
        )
        last_user = last_message.get("content", "")
        return ModelContext(
            run_id=self.id,
            prompt=str(self.spec.get("prompt", last_user)),
            messages=[dict(m) for m in self._messages],
            spec=self.spec,
            tool_results=results,
            tool_calls=calls,
            turn=self._turn,
            attachments=[dict(a) for a in last_message.get("attachments") or ()],
            retained=[dict(r) for r in self._session.retained] if self._session else [],
        )

    def _work(self) -> None:
        try:
            with self.cond:
                if self.done or self.closed:
                    return
                self.status = "running"
                self._on_change()
            if self._options.started_event:
                self._emit("started", {})
            plan_result = plan_only_result(self.spec, self._context().prompt)
            if plan_result is not None:
                # A plan-only run: no model turn, zero tokens, not added to the session.
                self._finish("result", plan_result, "succeeded", final_text="")
                return
            next_step = step_source(self._model_like)
            while True:
                ctx = self._context()
                step = next_step(ctx)
                if isinstance(step, ToolCall):
                    step = Turn(tool_calls=(step,))
                if isinstance(step, Turn):
                    self._model_turns += 1
                    if self._play_turn(step, ctx):
                        return
                    self._turn += 1
                elif isinstance(step, CONTROL_STEPS):
                    if play_control(self, step, self._plan_revisions):
                        return
                elif isinstance(step, Emit):
                    if step.type in TERMINAL_TYPES:
                        self._finish_raw(step)
                        return
                    self._emit(step.type, dict(step.data))
                else:
                    if isinstance(step, (Fail, FailResult)):
                        self._model_turns += 1
                    else:
                        message = "emulator script ended without a final answer"
                        step = Fail(message, code="script_exhausted")
                    self._fail(step)
                    return
        except _RunEnded:
            return
        except Exception as exc:
            log.exception("emulated model of run %s raised", self.id)
            message = f"emulator model raised {type(exc).__name__}: {exc}"
            self._finish(
                "error", {"error": message, "code": "worker_error"}, "failed", error=message
            )

    def _finish_raw(self, step: Emit) -> None:
        data = dict(step.data)
        if step.type == "cancelled":
            self._finish("cancelled", data, "cancelled")
        elif step.type == "result" and (
            data.get("subtype") == "success" or ("subtype" not in data and data.get("ok"))
        ):
            self._finish("result", data, "succeeded", final_text=data.get("text"))
        else:
            self._finish(step.type, data, "failed", error=data.get("error"))

    def _fail(self, step: Fail | FailResult) -> None:
        if isinstance(step, FailResult):
            reason: dict[str, Any] = {"subtype": step.subtype}
            data = {**reason, "error": step.error}
            self._finish("result", data, "failed", error=step.error, failure_reason=reason)
            return
        if step.partial_text is not None:
            message = {"text": step.partial_text, "turn": self._turn}
            self._chars_out += len(step.partial_text)
            self._emit("assistant_message", {**message, **_given(finishReason=step.finish_reason)})
        reason = _given(errorClass=step.error_class, finishReason=step.finish_reason)
        extra = _given(partialText=step.partial_text, retryable=step.retryable)
        data = {"error": step.error, "code": step.code, **reason, **extra}
        self._finish(
            "error",
            data,
            "failed",
            error=step.error,
            final_text=step.partial_text,
            failure_reason=reason or None,
        )

    def _play_turn(self, step: Turn, ctx: ModelContext) -> bool:
        """Emit one turn; ``True`` when it was the final answer."""
        text = step.text(ctx) if callable(step.text) else step.text
        chunks = list(step.chunks) if step.chunks is not None else chunk_text(text)
        calls = [self._describe_call(call) for call in step.tool_calls]
        message = {"text": text, "turn": ctx.turn, "model": self.model_id}
        message.update(_given(finishReason=step.finish_reason))
        if calls:
            message["toolCalls"] = [
                {"id": c["toolUseId"], "name": c["name"], "input": c["args"]} for c in calls
            ]
        self._chars_out += len(text)
        with self.cond:
            if step.thinking:
                self._chars_thinking += len(step.thinking)
                self._append("thinking_delta", {"text": step.thinking})
            for chunk in chunks:
                self._append("assistant_delta", {"text": chunk})
            self._append("assistant_message", message)
            self.cond.notify_all()
        if not calls:
            shape = {"ok": True} if self._options.result_shape == "ok" else {"subtype": "success"}
            self._finish("result", {**shape, "text": text}, "succeeded", final_text=text)
            return True
        local = [c for c in calls if c["local"]]
        for call in calls:
            if not call["local"]:
                self._server_call(call)
        if local:
            self._call_and_wait(local)
        return False

    def _describe_call(self, call: ToolCall) -> dict[str, Any]:
        self._call_counter += 1
        tool_use_id = call.id or f"tu_{self.number}_{self._call_counter}"
        return describe_call(self.spec, call, tool_use_id)

    def _server_call(self, call: dict[str, Any]) -> None:
        result = call["server_result"]
        if result is None:
            result = f"server result of {call['name']}"
        base = {"toolUseId": call["toolUseId"], "name": call["name"]}
        with self.cond:
            self._append("tool_call", {**base, "input": call["args"]})
            self._append(
                "tool_result", {**base, "result": result, "ok": True, "summary": result[:80]}
            )
            if call.get("mocked"):
                # A mocked tool's answer reaches the model like a client's answer would.
                self._results_in.append({**base, "result": result})
            self.cond.notify_all()

    def _call_and_wait(self, calls: list[dict[str, Any]]) -> None:
        timeout = self._options.tool_timeout
        deadline = time.monotonic() + timeout
        with self.cond:
            for call in calls:
                data = {
                    k: v for k, v in call.items() if k not in ("local", "server_result", "mocked")
                }
                # Register before logging so a fast client's POST can never miss it.
                self._pending[call["toolUseId"]] = data
                self._calls_made.append({k: data[k] for k in ("toolUseId", "name", "args", "kind")})
                self._append("local_tool_call", data)
                if self.faults.faults.duplicate_tool_calls:
                    self._append("local_tool_call", data)
            self.cond.notify_all()
            self._on_change()
            ids = [call["toolUseId"] for call in calls]
            while True:
                if self.done or self.closed:
                    raise _RunEnded
                if not any(i in self._pending for i in ids):
                    return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.cond.wait(remaining)
            waiting = ", ".join(i for i in ids if i in self._pending)
            message = f"Timed out after {timeout:g}s waiting for local tool result ({waiting})"
            self._fail(FailResult("error_local_tool_timeout", message))
        raise _RunEnded
