"""What :class:`~mantyx_sync.evals.EvalRun` follows an evaluation with: its case
runs' tools, and its flat frames.

An evaluation's stream carries flat JSON events with no ``seq``, read by the
same :class:`~mantyx_sync._http.stream.RunStream` as a run's with a flat
parser plugged in (:class:`FlatFrames`). A case run's ``local_tool_call`` (with
its ``agentRunId``) goes to a :class:`~mantyx_sync._engine.executor.ToolExecutor`
of that agent run (:class:`CaseRuns`): the same one-answer-per-``toolUseId``
machinery as an ordinary run.

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
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeVar

from .._base.types import ReleaseOnce
from .._http.api import Api
from .._http.poster import PostGate, ResultPoster
from .._http.routes import cancel_eval, run_stream
from .._http.stream import read_backlog
from .._models.frames import MalformedEvent, envelope_of
from ..errors import MantyxError
from ..events import EventType, RunEvent, event_of
from ..tools import ToolActivity
from .calls import note_answer, submit_call
from .executor import ToolExecutor
from .resolution import ResolvedTools

if TYPE_CHECKING:
    from ..events import AnyRunEvent

__all__ = [
    "TERMINAL_EVENTS",
    "TERMINAL_STATUS_EVENT",
    "CaseRuns",
    "FlatFrames",
    "abandon",
    "weakly",
]

# The evaluation module's logger, for what its handle does.
log = logging.getLogger("mantyx_sync.evals")
T = TypeVar("T")

# An evaluation's terminal status -> the stream event that ends it.
TERMINAL_STATUS_EVENT: Final[dict[str, EventType]] = {
    "succeeded": "run_completed",
    "failed": "run_error",
    "cancelled": "run_cancelled",
}
TERMINAL_EVENTS: Final = frozenset(TERMINAL_STATUS_EVENT.values())


class CaseRuns:
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


class FlatFrames:
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


def abandon(api: Api, eval_id: str, resources: ReleaseOnce) -> None:
    log.warning("evaluation %s was dropped before it ended without close(); cancelling it", eval_id)
    cancel_eval(api, eval_id, best_effort=True)
    resources.release()


def weakly(method: Callable[[], T]) -> Callable[[], T | None]:
    ref = weakref.WeakMethod(method)

    def call() -> T | None:
        bound = ref()
        return None if bound is None else bound()

    return call
