"""A2A tasks of the served app: one per message, each following one MANTYX run and
kept current from the run's pump thread, so any request can read, cancel or await it.
"""

from __future__ import annotations

import collections
import threading
import uuid
from collections.abc import Callable
from typing import Any, Final

from ..events import RunEvent
from ._a2a_wire import Dialect, agent_message, task_object
from ._conversations import Turn
from ._pump import Outcome, RunPump

__all__ = ["A2ATask", "TaskStore"]

MAX_FINISHED: Final = 1024


class A2ATask:
    """One A2A task following one MANTYX run (thread-safe)."""

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
        self.id = str(uuid.uuid4())
        self.caller = caller
        self.context_id = context_id
        self.artifact_id = str(uuid.uuid4())
        self._user_message = user_message
        self._lock = threading.Lock()
        self._streamed: list[str] = []
        self._turn = turn
        self._on_end = on_end
        self.pump = RunPump(turn.run, listen=listen, observe=self._observe, on_end=self._ended)

    def _observe(self, event: RunEvent) -> None:
        if event.type == "assistant_delta" and event.text:
            with self._lock:
                self._streamed.append(event.text)

    def _ended(self) -> None:
        self._turn.finish()
        self._on_end(self)

    @property
    def state(self) -> str:
        """``working``, ``completed``, ``failed`` or ``canceled`` (0.3 spelling)."""
        outcome = self.pump.outcome
        return "working" if outcome is Outcome.RUNNING else outcome.value

    @property
    def done(self) -> bool:
        """Whether the run has ended."""
        return self.pump.done

    def answer(self) -> str:
        """The final answer once completed, else the text streamed so far."""
        result = self.pump.result
        if self.pump.outcome is Outcome.COMPLETED and result is not None:
            return result.text
        with self._lock:
            return "".join(self._streamed)

    def status_message(self, dialect: Dialect) -> dict[str, Any] | None:
        """The status message: the error of a failed task, else none."""
        if self.pump.outcome is Outcome.FAILED:
            text = self.pump.error or "the run failed"
        elif self.pump.outcome is Outcome.CANCELED:
            text = "cancelled"
        else:
            return None
        return agent_message(text, (self.id, self.context_id, dialect))

    def to_wire(self, dialect: Dialect, *, history_length: int | None = None) -> dict[str, Any]:
        """The Task as ``tasks/get`` returns it."""
        answer = self.answer()
        # The history is the one user message: any positive length keeps it.
        keep = history_length is None or history_length > 0
        return task_object(
            task_id=self.id,
            context_id=self.context_id,
            state=self.state,
            status_message=self.status_message(dialect),
            artifact=(self.artifact_id, answer) if answer or self.done else None,
            history=[self._user_message] if keep else [],
            dialect=dialect,
        )


class TaskStore:
    """Tasks by id: every running one, plus each caller's latest :data:`MAX_FINISHED` finished."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, A2ATask] = {}
        self._finished: dict[str, collections.OrderedDict[str, A2ATask]] = {}

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
        mine[task.id] = task
        while len(mine) > MAX_FINISHED:
            mine.popitem(last=False)

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
