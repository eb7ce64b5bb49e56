"""Everything the emulator remembers: runs, sessions, queued scripts, fault plans and requests."""

from __future__ import annotations

import collections
import itertools
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ._catalog import resolve_model
from ._evals import EvalStore
from ._history import FeedbackStore
from ._validation import attachment_metadata
from .faults import Faults, FaultState, RequestFaults
from .model import ModelLike
from .recorder import RecordedRequest
from .runs import EmulatedRun
from .sessions import EmulatedSession, RunOptions

__all__ = ["EmulatorState"]

_T = TypeVar("_T")

# Per-message fields that replace the session's value for one run; metadata is
# merged instead.
_OVERRIDES = (
    "tools",
    "reasoningLevel",
    "outputSchema",
    "loopDetection",
    "toolBudgets",
    "modelId",
    "supervisor",
    "plan",
)


def _input_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    if "prompt" in body:
        return [{"role": "user", "content": body["prompt"]}]
    return [_without_bytes(m) for m in body["messages"]]


def _without_bytes(message: dict[str, Any]) -> dict[str, Any]:
    # History and snapshots keep attachment metadata only, as the server does.
    out = dict(message)
    if isinstance(out.get("attachments"), list):
        out["attachments"] = [attachment_metadata(a) for a in out["attachments"]]
    return out


class EmulatorState:
    """The emulator's memory, shared by the WSGI app and the ``LocalMantyx`` facade.

    Thread-safety: every method may be called from any thread. Lock order is
    run lock → :attr:`cond`; nothing takes a run lock while holding :attr:`cond`.
    """

    def __init__(self, *, model: ModelLike, options: RunOptions) -> None:
        self.cond: threading.Condition = threading.Condition()
        self.options = options
        self.runs: dict[str, EmulatedRun] = {}
        self.sessions: dict[str, EmulatedSession] = {}
        self.feedback: FeedbackStore = FeedbackStore()
        self.evals: EvalStore = EvalStore(self.create_run)
        self.request_faults: RequestFaults = RequestFaults()
        self.requests: list[RecordedRequest] = []  # every request answered, under cond
        self.latest_run: EmulatedRun | None = None
        # The model of every run, the scripts and fault plans of the next ones (FIFO).
        self.model: ModelLike = model
        self.scripts: collections.deque[ModelLike] = collections.deque()
        self.fault_plans: collections.deque[Faults] = collections.deque()
        self._numbers = itertools.count(1)
        self._tool_call_cursor: dict[str, int] = {}
        self.stopped: bool = False

    def _notify(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def create_run(
        self, body: dict[str, Any], session: EmulatedSession | None = None
    ) -> EmulatedRun:
        """Create and start a run from a validated body (and its session, if any)."""
        if session is not None:
            spec = dict(session.spec)
            spec.update((key, body[key]) for key in _OVERRIDES if key in body)
            if "metadata" in body or "metadata" in spec:
                spec["metadata"] = {**spec.get("metadata", {}), **body.get("metadata", {})}
            spec.update((key, body[key]) for key in ("prompt", "messages") if key in body)
            with session.lock:
                history = [dict(m) for m in session.messages]
        else:
            spec, history = dict(body), []
        new_input = _input_messages(body)
        if "messages" in spec:
            spec["messages"] = new_input
        with self.cond:
            number = next(self._numbers)
            model = self.scripts.popleft() if self.scripts else self.model
            faults = self.fault_plans.popleft() if self.fault_plans else Faults()
            run = EmulatedRun(
                run_id=f"run_{number}{secrets.token_hex(4)}",
                number=number,
                spec=spec,
                messages=history + new_input,
                input_messages=new_input,
                model=model,
                model_info=resolve_model(
                    session.active_model_id
                    if session is not None and session.active_model_id
                    else spec.get("modelId")
                ),
                faults=FaultState(faults),
                options=self.options,
                session=session,
                on_change=self._notify,
            )
            self.runs[run.id] = run
            self.latest_run = run
            self.cond.notify_all()
        run.start()
        return run

    def create_session(self, spec: dict[str, Any]) -> EmulatedSession:
        """Create a session from a validated spec."""
        session = EmulatedSession(f"ses_{secrets.token_hex(6)}", spec)
        with self.cond:
            self.sessions[session.id] = session
        return session

    def end_session(self, session: EmulatedSession) -> None:
        """Flip ``session`` to ended and cancel its latest run if still going (idempotent)."""
        with session.lock:
            session.status = "ended"
        with self.cond:
            runs = [run for run in self.runs.values() if run.session_id == session.id]
        if runs:
            runs[-1].cancel()

    def wait_for_run(self, run_id: str | None, status: str | None, timeout: float) -> EmulatedRun:
        """See :meth:`LocalMantyx.wait_for_run`."""

        def reached() -> EmulatedRun | None:
            run = self.runs.get(run_id) if run_id is not None else self.latest_run
            if run is not None and (run.done if status is None else run.status == status):
                return run
            return None

        goal = status or "a terminal status"
        why = f"run {run_id or '(latest)'} did not reach {goal} within {timeout:g}s"
        return self._wait(reached, timeout, why)

    def wait_for_tool_call(self, timeout: float) -> dict[str, Any]:
        """See :meth:`LocalMantyx.wait_for_tool_call` (a call logged twice counts once)."""

        def found() -> dict[str, Any] | None:
            run = self.latest_run
            if run is None:
                return None
            start = self._tool_call_cursor.get(run.id, 0)
            seen = {
                e["data"]["toolUseId"] for e in run.events[:start] if e["type"] == "local_tool_call"
            }
            for index, event in enumerate(run.events[start:], start):
                if event["type"] == "local_tool_call" and event["data"]["toolUseId"] not in seen:
                    self._tool_call_cursor[run.id] = index + 1
                    return dict(event["data"])
            return None

        return self._wait(found, timeout, f"no new local_tool_call within {timeout:g}s")

    def _wait(self, probe: Callable[[], _T | None], timeout: float, why: str) -> _T:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                value = probe()
                if value is not None:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.stopped:
                    raise TimeoutError(why)
                self.cond.wait(remaining)

    def close(self) -> None:
        """Stop every run and wake every waiter (the server is stopping)."""
        with self.cond:
            self.stopped = True
            runs = list(self.runs.values())
            self.cond.notify_all()
        self.evals.close()
        for run in runs:
            run.close()
