"""A2A tasks of the served app: one per message, each following one MANTYX run and
kept current from the run's pump thread, so any request can read, cancel, await,
list or subscribe to it.

A finished task keeps only what a task is read for (its state, the caller's
message as checked, the answer text): the run, its events and its pump are let
go. Each caller's finished tasks are bounded in count and in bytes.
"""

from __future__ import annotations

import collections
import datetime
import json
import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Final, NamedTuple

from ..events import RunEvent
from ._a2a_params import ListQuery, page_token
from ._a2a_wire import Dialect, agent_message, task_object, timestamp
from ._conversations import Turn
from ._pump import END, Outcome, RunPump, Tick, drain

__all__ = ["A2ATask", "TaskStore"]

MAX_FINISHED: Final = 1024
"""Finished tasks kept per caller (the oldest go first)."""
MAX_FINISHED_BYTES: Final = 16 * 1024 * 1024
"""Bytes of finished tasks kept per caller (the newest is always kept)."""


class _Final(NamedTuple):
    outcome: Outcome
    answer: str
    error: str | None


class A2ATask:
    """One A2A task following one MANTYX run (thread-safe).

    With ``listen``, :meth:`stream` yields the run's events from its very start.
    """

    def __init__(
        self,
        *,
        caller: str,
        context_id: str,
        user_message: dict[str, Any],
        turn: Turn,
        listen: bool,
        on_end: Callable[[A2ATask], None],
    ) -> None:
        self.id: str = str(uuid.uuid4())
        self.caller = caller
        self.context_id = context_id
        self.artifact_id: str = str(uuid.uuid4())
        self._reply_id = str(uuid.uuid4())
        self._user_message = user_message
        self._lock = threading.Lock()
        self._streamed: list[str] = []
        self._subscribers: list[queue.Queue[object]] = []
        self._first: queue.Queue[object] | None = None
        if listen:
            self._first = queue.Queue()
            self._subscribers.append(self._first)
        self._final: _Final | None = None
        self._settled = threading.Event()
        self.status_at: datetime.datetime = datetime.datetime.now(datetime.timezone.utc)
        self.size: int = len(json.dumps(user_message, ensure_ascii=False).encode("utf-8"))
        self._turn: Turn | None = turn
        self._on_end = on_end
        self._pump: RunPump | None = None
        self._pump_set = threading.Event()
        self._pump = RunPump(turn.run, listen=False, observe=self._observe, on_end=self._ended)
        self._pump_set.set()

    def _observe(self, event: RunEvent) -> None:
        with self._lock:
            if event.type == "assistant_delta" and event.text:
                self._streamed.append(event.text)
            for subscriber in self._subscribers:
                subscriber.put(event)

    def _ended(self) -> None:
        self._pump_set.wait()  # a run can end before its pump is stored
        pump = self._pump
        assert pump is not None
        answer = self._live_answer(pump)
        with self._lock:
            self._final = _Final(pump.outcome, answer, pump.error)
            self._streamed = []
            subscribers, self._subscribers = self._subscribers, []
            self.status_at = datetime.datetime.now(datetime.timezone.utc)
            self.size += len(answer.encode("utf-8"))
            self._pump = None  # the run, its result and events are no longer needed
        for subscriber in subscribers:
            subscriber.put(END)
        turn, self._turn = self._turn, None
        if turn is not None:
            turn.finish()
        try:
            self._on_end(self)
        finally:
            self._settled.set()

    def _live_answer(self, pump: RunPump) -> str:
        if pump.outcome is Outcome.COMPLETED and pump.result is not None:
            return pump.result.text
        with self._lock:
            return "".join(self._streamed)

    def _now(self) -> tuple[Outcome, str, str | None]:
        with self._lock:
            final, pump = self._final, self._pump
        if final is not None:
            return final.outcome, final.answer, final.error
        assert pump is not None
        return Outcome.RUNNING, self._live_answer(pump), None

    @property
    def state(self) -> str:
        """``working``, ``completed``, ``failed`` or ``canceled`` (0.3 spelling)."""
        outcome = self._now()[0]
        return "working" if outcome is Outcome.RUNNING else outcome.value

    @property
    def done(self) -> bool:
        """Whether the run has ended."""
        with self._lock:
            return self._final is not None

    def answer(self) -> str:
        """The final answer once completed, else the text streamed so far."""
        return self._now()[1]

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the task has ended; ``False`` if ``timeout`` passed first."""
        return self._settled.wait(timeout)

    def cancel(self, wait_s: float) -> None:
        """Cancel the run on MANTYX and wait for it to end (closing it if MANTYX is slow)."""
        pump = self._pump
        if pump is None:
            return
        pump.cancel()
        if not pump.wait(wait_s):
            pump.close()  # MANTYX did not confirm in time: stop following it
        self._settled.wait(wait_s)

    def abandon(self) -> None:
        """The client streaming the task's first response went away: stop the run."""
        pump = self._pump
        if pump is not None:
            pump.abandon()

    def close(self) -> None:
        """Stop following the run (the app is closing)."""
        pump = self._pump
        if pump is not None:
            pump.close()

    def stream(self, heartbeat: float) -> Iterator[RunEvent | Tick]:
        """The run's events from its start (a task made with ``listen``)."""
        assert self._first is not None, "this task was started without listen=True"
        return self._drain(self._first, heartbeat)

    def subscribe(self, heartbeat: float) -> Iterator[RunEvent | Tick] | None:
        """The run's events from now on; ``None`` once the task has ended."""
        inbox: queue.Queue[object] = queue.Queue()
        with self._lock:
            if self._final is not None:
                return None
            self._subscribers.append(inbox)
        return self._drain(inbox, heartbeat)

    def _drain(self, inbox: queue.Queue[object], heartbeat: float) -> Iterator[RunEvent | Tick]:
        try:
            yield from drain(inbox, heartbeat)
        finally:
            with self._lock:
                if inbox in self._subscribers:
                    self._subscribers.remove(inbox)

    def _ids(self, dialect: Dialect) -> tuple[str, str, Dialect]:
        return self.id, self.context_id, dialect

    def status_message(self, dialect: Dialect) -> dict[str, Any] | None:
        """The status message: the error of a failed task, else none."""
        outcome, _, error = self._now()
        if outcome is Outcome.FAILED:
            text = error or "the run failed"
        elif outcome is Outcome.CANCELED:
            text = "cancelled"
        else:
            return None
        return agent_message(text, self._ids(dialect))

    def history(self, dialect: Dialect) -> list[dict[str, Any]]:
        """The caller's message, then the agent's answer once there is one."""
        mine = {**self._user_message, "taskId": self.id, "contextId": self.context_id}
        outcome, answer, _ = self._now()
        if outcome is Outcome.COMPLETED and answer:
            return [mine, agent_message(answer, self._ids(dialect), self._reply_id)]
        return [mine]

    def to_wire(
        self, dialect: Dialect, *, history_length: int | None = None, artifacts: bool = True
    ) -> dict[str, Any]:
        """The Task as ``tasks/get`` returns it: ``history_length`` latest history messages
        (all by default) and, with ``artifacts``, the answer so far."""
        outcome, answer, _ = self._now()
        ended = outcome is not Outcome.RUNNING
        history = self.history(dialect)
        if history_length is not None:
            history = history[len(history) - history_length :] if history_length else []
        return task_object(
            task_id=self.id,
            context_id=self.context_id,
            state=self.state,
            status_message=self.status_message(dialect),
            status_time=timestamp(self.status_at),
            artifact=(self.artifact_id, answer) if artifacts and (answer or ended) else None,
            history=history,
            dialect=dialect,
        )


class TaskStore:
    """Tasks by id: every running one, plus each caller's latest finished ones
    (:data:`MAX_FINISHED`, :data:`MAX_FINISHED_BYTES`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._max_bytes = MAX_FINISHED_BYTES
        self._running: dict[str, A2ATask] = {}
        self._finished: dict[str, collections.OrderedDict[str, A2ATask]] = {}
        self._bytes: collections.Counter[str] = collections.Counter()

    def add(self, task: A2ATask) -> None:
        """Track a newly started task."""
        with self._lock:
            if task.done:
                self._finish_locked(task)
            else:
                self._running[task.id] = task

    def finished(self, task: A2ATask) -> None:
        """Move a task that ended to the finished list (called from its pump)."""
        with self._lock:
            self._running.pop(task.id, None)
            self._finish_locked(task)

    def _finish_locked(self, task: A2ATask) -> None:
        mine = self._finished.setdefault(task.caller, collections.OrderedDict())
        if task.id in mine:
            return
        mine[task.id] = task
        self._bytes[task.caller] += task.size
        while len(mine) > 1 and (
            len(mine) > MAX_FINISHED or self._bytes[task.caller] > self._max_bytes
        ):
            _, old = mine.popitem(last=False)
            self._bytes[task.caller] -= old.size

    def get(self, task_id: str, caller: str) -> A2ATask | None:
        """The task, if ``caller`` started it and it is known."""
        with self._lock:
            mine = self._finished.get(caller)
            task = self._running.get(task_id) or (mine.get(task_id) if mine else None)
        return task if task is not None and task.caller == caller else None

    def running(self) -> list[A2ATask]:
        """The tasks still running."""
        with self._lock:
            return list(self._running.values())

    def page(self, caller: str, query: ListQuery) -> tuple[list[A2ATask], int, str]:
        """``caller``'s tasks matching ``query``, latest status first: one page of them,
        how many match in all, and the token of the next page (``""`` after the last)."""
        with self._lock:
            mine = [t for t in self._running.values() if t.caller == caller]
            mine += self._finished.get(caller, {}).values()
        matching = [
            task
            for task in mine
            if (query.context_id is None or task.context_id == query.context_id)
            and (query.state is None or query.state == "TASK_STATE_" + task.state.upper())
            and (query.after is None or timestamp(task.status_at) > timestamp(query.after))
        ]
        keyed = sorted(((t.status_at.isoformat(), t.id, t) for t in matching), reverse=True)
        if query.cursor is not None:
            keyed = [entry for entry in keyed if entry[:2] < query.cursor]
        page = keyed[: query.page_size]
        more = len(keyed) > query.page_size
        token = page_token(page[-1][0], page[-1][1]) if more else ""
        return [entry[2] for entry in page], len(matching), token
