"""The :class:`EvalRun` handle: follow an evaluation's stream and answer its case runs' tools.

An evaluation's stream carries flat JSON events with no ``seq``, read by the
same :class:`~mantyx_sync._http.stream.RunStream` as a run's with a flat
parser plugged in. A case run's ``local_tool_call`` (with its ``agentRunId``)
goes to a :class:`~mantyx_sync._engine.executor.ToolExecutor` of that agent
run: the same one-answer-per-``toolUseId`` machinery as an ordinary run.

The stream has no resume, so when it breaks the evaluation is polled: if it is
over, iteration ends with its outcome; otherwise the stream is reopened and
the log of every case run seen so far is read, so a call made while
disconnected is still answered exactly once. (A case run that started and
called a tool entirely while disconnected cannot be found: the evaluation's
detail does not name agent runs. The server times such a call out.)
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final, TypeVar

from .._base.argcheck import checked
from .._base.handout import handed_out
from .._base.types import ReleaseOnce
from .._http.api import Api
from .._http.poster import PostGate, ResultPoster
from .._http.routes import cancel_eval, get_eval, run_stream
from .._http.stream import RunStream, read_backlog
from .._models.evals import EvalRunDetail, EvalRunSummary
from ..errors import ArgumentTypeError, MantyxError, RunCancelledError, RunError
from ..events import EventType, MalformedEvent, RunEvent, envelope_of, event_of
from .calls import note_answer, submit_call
from .executor import ToolActivity, ToolExecutor
from .outcome import Followed
from .resolution import ResolvedTools

if TYPE_CHECKING:
    from ..events import AnyRunEvent

__all__ = ["EvalRun"]

log = logging.getLogger(__name__)
T = TypeVar("T")

# An evaluation's terminal status -> the stream event that ends it.
_TERMINAL_STATUS_EVENT: Final[dict[str, EventType]] = {
    "succeeded": "run_completed",
    "failed": "run_error",
    "cancelled": "run_cancelled",
}
_TERMINAL_EVENTS: Final = frozenset(_TERMINAL_STATUS_EVENT.values())


class _CaseRuns:
    """One tool executor per case agent run (``agentRunId``). Used from the
    stream-reading thread; :meth:`close` from any."""

    def __init__(
        self,
        api: Api,
        tools: ResolvedTools,
        *,
        max_workers: int,
        on_tool: Callable[[ToolActivity], None] | None,
    ) -> None:
        self._api = api
        self._new_executor = functools.partial(
            ToolExecutor,
            tools.registry(),
            max_workers=max_workers,
            default_timeout=api.config.tool_timeout,
            on_tool=on_tool,
        )
        self._lock = threading.Lock()
        self._executors: dict[str, ToolExecutor] = {}
        self._gate = PostGate()
        self._closed = False

    def known(self) -> list[str]:
        with self._lock:
            return list(self._executors)

    def executor(self, agent_run_id: str) -> ToolExecutor | None:
        """Created on first use; ``None`` once closed."""
        with self._lock:
            if self._closed:
                return None
            executor = self._executors.get(agent_run_id)
            if executor is None:
                poster = ResultPoster(self._api, agent_run_id, gate=self._gate)
                label = f"eval case run {agent_run_id}"
                executor = self._new_executor(poster.post, run_label=label)
                self._executors[agent_run_id] = executor
            return executor

    def handle(self, agent_run_id: str, event: RunEvent) -> None:
        executor = self.executor(agent_run_id)
        if executor is None:
            return
        if event.type == "local_tool_call":
            submit_call(executor, event, label=f"eval case run {agent_run_id}")
        else:
            note_answer(executor, event)

    def catch_up(self, agent_run_id: str, settle: float) -> None:
        """Answer the calls in a case run's log that nobody answered."""
        executor = self.executor(agent_run_id)
        if executor is None:
            return
        try:
            backlog = read_backlog(
                self._api, run_stream(agent_run_id), run_id=agent_run_id, quiet=settle
            )
        except MantyxError as exc:
            log.warning("eval case run %s: could not read its log: %s", agent_run_id, exc)
            return
        # Answers first, then calls (an answered call must never run again), as attach_run does.
        for event in backlog:
            note_answer(executor, event)
        if backlog and backlog[-1].is_terminal:
            return
        for event in backlog:
            if event.type == "local_tool_call":
                submit_call(executor, event, label=f"eval case run {agent_run_id}")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            executors = list(self._executors.values())
        self._gate.close()
        for executor in executors:
            executor.shutdown()


class _FlatFrames:
    """Flat ``{type, ...}`` frames as :class:`RunEvent`, numbered locally. A
    frame repeated word for word on a reopened connection is a replay."""

    def __init__(self) -> None:
        self.count = 0
        self._earlier: set[str] = set()
        self._current: set[str] = set()

    def new_connection(self) -> None:
        self._earlier |= self._current
        self._current = set()

    def parse(
        self, data_text: str, *, event: str | None = None, id: str | None = None
    ) -> AnyRunEvent | None:
        obj = envelope_of(data_text)
        kind = obj.get("type")
        if kind is None and event and event != "message":
            kind = event
        if not isinstance(kind, str) or not kind:
            raise MalformedEvent("no event type")
        if data_text in self._earlier:
            return None
        self._current.add(data_text)
        self.count += 1
        # An unknown type passes through as sent.
        return event_of(self.count, kind, {k: v for k, v in obj.items() if k != "type"})


def _abandon(api: Api, eval_id: str, resources: ReleaseOnce) -> None:
    log.warning("evaluation %s was dropped before it ended without close(); cancelling it", eval_id)
    cancel_eval(api, eval_id, best_effort=True)
    resources.release()


def _weakly(method: Callable[[], T]) -> Callable[[], T | None]:
    ref = weakref.WeakMethod(method)

    def call() -> T | None:
        bound = ref()
        return None if bound is None else bound()

    return call


@handed_out("client.evals.start() returns one")
class EvalRun(Followed):
    """A live evaluation: iterate it for its events, :meth:`wait` for the outcome.

    While you iterate, every ``local_tool_call`` of every case run is answered
    on a thread pool, each exactly once. Iteration yields each event as a
    :class:`~mantyx_sync.RunEvent` (numbered locally; progress events pass
    through as the server sent them) and ends after ``run_completed``; after
    ``run_error`` or ``run_cancelled`` the next step raises
    :class:`~mantyx_sync.RunError` / :class:`~mantyx_sync.RunCancelledError`.

    Leaving a ``with`` block (or :meth:`close`) before the end cancels the
    evaluation (best effort); so does dropping an unfinished handle, when it
    is garbage-collected.

    Thread-safety: iterate from one thread; :meth:`cancel` and :meth:`close`
    from any.
    """

    def __init__(
        self,
        api: Api,
        eval_id: str,
        stream_path: str,
        *,
        tools: ResolvedTools,
        max_workers: int,
        on_tool: Callable[[ToolActivity], None] | None = None,
        settle: float = 0.5,
    ) -> None:
        self.id: str = eval_id
        self._api = api
        self._settle = settle
        self._cases = _CaseRuns(api, tools, max_workers=max_workers, on_tool=on_tool)
        self._frames = _FlatFrames()
        # Events are numbered here, so a reopened stream asks for those after
        # the last one seen; a break first polls whether the evaluation is over.
        # Callbacks held weakly: the stream is reachable from the finalizer's
        # arguments and must not keep this handle alive.
        self._stream = RunStream(
            api,
            stream_path,
            run_id=eval_id,
            parse=self._frames.parse,
            terminal=_TERMINAL_EVENTS,
            on_open=_weakly(self._on_open),
            on_break=_weakly(self._poll),
            busy=lambda: True,  # a quiet evaluation is polled, never given up on
            follows="evaluation",
        )
        self._resources = ReleaseOnce(self._stream.close, self._cases.close, tools.close)
        self._finalizer = weakref.finalize(self, _abandon, api, eval_id, self._resources)
        self._finalizer.atexit = False
        self._connections = 0
        self._events: list[AnyRunEvent] = []
        self._failure: RunError | None = None
        self._done = False

    def __repr__(self) -> str:
        return (
            f"<EvalRun {self.id} {'done' if self._done else 'running'}, {len(self._events)} events>"
        )

    @property
    def case_run_ids(self) -> tuple[str, ...]:
        """The agent runs of the cases seen so far (``agentRunId``)."""
        return tuple(self._cases.known())

    def iterate(self) -> Iterator[AnyRunEvent]:
        """The events as they come (the same as iterating the handle)."""
        return self

    def __next__(self) -> AnyRunEvent:
        if self._done:
            self._release()
            if self._failure is not None:
                raise self._failure
            raise StopIteration
        try:
            event = next(self._stream)  # StopIteration once closed
        except KeyboardInterrupt:
            self.close()
            raise
        except MantyxError:
            self._release()
            raise
        self._handle(event)
        return event

    @checked(ArgumentTypeError)
    def wait(self, on_event: Callable[[AnyRunEvent], None] | None = None) -> EvalRunDetail:
        """Follow the evaluation to its end and return its results (``GET /eval-runs/{id}``).

        :raises RunError: the evaluation failed (``RunCancelledError``: it was cancelled).
        :raises StreamError: the stream broke and the evaluation could not be followed.
        """
        for event in self:
            if on_event is not None:
                on_event(event)
        return EvalRunDetail.from_wire(get_eval(self._api, self.id) or {})

    def cancel(self) -> None:
        """Ask the server to cancel the evaluation (its stream then ends)."""
        cancel_eval(self._api, self.id)

    def close(self) -> None:
        """Stop following; an evaluation still going is cancelled (best effort)."""
        first = self._finalizer.detach() is not None
        if first and not self._done:
            cancel_eval(self._api, self.id, best_effort=True)
        self._release()

    def _on_open(self) -> None:
        self._frames.new_connection()
        self._connections += 1
        if self._connections > 1:
            # Calls made while we were away are only in the case runs' own logs.
            for agent_run_id in self._cases.known():
                self._cases.catch_up(agent_run_id, self._settle)

    def _poll(self) -> AnyRunEvent | None:
        """The stream broke: the terminal event if the evaluation is over."""
        try:
            summary = EvalRunSummary.from_wire(get_eval(self._api, self.id) or {})
        except MantyxError as exc:
            log.debug("evaluation %s: poll failed: %s", self.id, exc)
            return None
        if not summary.done or summary.status is None:
            return None
        log.debug("evaluation %s ended (%s) while the stream was down", self.id, summary.status)
        self._frames.count += 1
        kind = _TERMINAL_STATUS_EVENT[summary.status]
        return event_of(self._frames.count, kind, {**summary.raw, "polled": True})

    def _handle(self, event: AnyRunEvent) -> None:
        self._events.append(event)
        agent_run_id = event.data.get("agentRunId")
        if isinstance(agent_run_id, str) and agent_run_id:
            # Any event makes its case run known, for catch_up after a break.
            self._cases.handle(agent_run_id, event)
        elif event.type == "local_tool_call":
            log.warning(
                "evaluation %s: a local_tool_call without agentRunId cannot be answered", self.id
            )
        if event.type in _TERMINAL_EVENTS:
            self._finish(event)

    def _finish(self, event: RunEvent) -> None:
        self._done = True
        data = event.data
        message = data.get("error") or data.get("message")
        text = message if isinstance(message, str) else None
        if event.type == "run_cancelled":
            self._failure = RunCancelledError(
                f"evaluation {self.id} was cancelled", run_id=self.id, code="cancelled"
            )
        elif event.type == "run_error":
            self._failure = RunError(
                f"evaluation {self.id} failed: {text or 'no reason given'}",
                run_id=self.id,
                code=data.get("code") if isinstance(data.get("code"), str) else None,
            )
        self._release()

    def _release(self) -> None:
        if self._done:
            self._finalizer.detach()
        self._resources.release()
