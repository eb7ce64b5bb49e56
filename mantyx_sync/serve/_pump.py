"""A MANTYX run read on its own thread, so a WSGI response can wait with heartbeats.

A WSGI server only notices a client that went away when it next writes: a
response blocked on the run's stream would keep an abandoned run burning until
the model said something. So :class:`RunPump` reads the run on a daemon thread
and queues its events; the response waits on the queue and writes a heartbeat
whenever the wait times out, and its ``close()`` (which WSGI servers call when
the client disconnects) cancels the run.
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Final

from ..errors import MantyxError, RunCancelledError, RunError
from ..events import RunEvent
from ..results import RunResult
from ..run import Run

__all__ = ["END", "Outcome", "RunPump", "Tick", "drain"]

log = logging.getLogger(__name__)

THREAD_PREFIX: Final = "mantyx-serve"


class Tick(enum.Enum):
    """What :meth:`RunPump.events` yields between events: nothing arrived in time."""

    HEARTBEAT = "heartbeat"


class Outcome(enum.Enum):
    """How a pumped run ended."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"


END: Final = object()
"""Put in a queue :func:`drain` reads: the events have ended."""


def drain(inbox: queue.Queue[object], heartbeat: float) -> Iterator[RunEvent | Tick]:
    """The events put in ``inbox`` as they arrive, with :attr:`Tick.HEARTBEAT` after each
    ``heartbeat`` seconds of silence, until :data:`END` is put."""
    while True:
        try:
            item = inbox.get(timeout=heartbeat)
        except queue.Empty:
            yield Tick.HEARTBEAT
            continue
        if item is END:
            return
        assert isinstance(item, RunEvent)
        yield item


class RunPump:
    """Reads one :class:`~mantyx_sync.run.Run` to its end on a daemon thread.

    ``observe`` is called on that thread with every event (to keep a task's
    state current even when nobody streams it); with ``listen`` the events are
    also queued for :meth:`events`. ``on_end`` runs once, on the pump thread,
    after the run has ended however it ended.

    Thread-safety: :meth:`cancel`, :meth:`close` and :meth:`wait` may be called
    from any thread; :meth:`events` from one thread.
    """

    def __init__(
        self,
        run: Run,
        *,
        listen: bool,
        observe: Callable[[RunEvent], None] | None = None,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self.run = run
        self.outcome = Outcome.RUNNING
        self.result: RunResult | None = None
        self.error: str | None = None
        self._observe = observe
        self._on_end = on_end
        self._queue: queue.Queue[object] | None = queue.Queue() if listen else None
        self._done = threading.Event()
        self._closed = False
        self._thread = threading.Thread(
            target=self._pump, name=f"{THREAD_PREFIX}-{run.id}", daemon=True
        )
        self._thread.start()

    @property
    def done(self) -> bool:
        """Whether the run has ended (or was abandoned)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run has ended; ``False`` if ``timeout`` passed first."""
        return self._done.wait(timeout)

    def events(self, heartbeat: float) -> Iterator[RunEvent | Tick]:
        """The run's events as they arrive, with :attr:`Tick.HEARTBEAT` after
        each ``heartbeat`` seconds of silence; ends after the terminal event."""
        assert self._queue is not None, "this pump was started without listen=True"
        return drain(self._queue, heartbeat)

    def cancel(self) -> None:
        """Ask MANTYX to cancel the run; the pump then sees its ``cancelled`` event."""
        if self.done:
            return
        try:
            self.run.cancel()
        except MantyxError as exc:
            log.warning("run %s: cancel failed (%s); closing it instead", self.run.id, exc)
            self.close()

    def close(self) -> None:
        """Stop following the run; before its end it is cancelled on the server."""
        self._closed = True
        self.run.close()

    def abandon(self) -> None:
        """The client went away: a run still going is closed (so cancelled)."""
        # The WSGI server closes the body at the end of every response; only a
        # response cut short leaves the run going.
        if not self.done:
            log.info("run %s: the client went away; cancelling it", self.run.id)
            self.close()

    def _pump(self) -> None:
        try:
            for event in self.run:
                if self._observe is not None:
                    self._observe(event)
                if self._queue is not None:
                    self._queue.put(event)
            self.result = self.run.result
            self.outcome = Outcome.COMPLETED if self.run.done else Outcome.CANCELED
        except RunCancelledError as exc:
            self.result = exc.result
            self.outcome = Outcome.CANCELED
        except RunError as exc:
            self.result = exc.result
            self.error = str(exc)
            self.outcome = Outcome.FAILED
        except Exception as exc:  # a broken stream, an unreachable server
            if self._closed:
                self.outcome = Outcome.CANCELED
            else:
                log.warning("run %s: %s", self.run.id, exc)
                self.error = str(exc)
                self.outcome = Outcome.FAILED
            self.run.close()
        finally:
            if self.outcome is Outcome.RUNNING:
                self.outcome = Outcome.CANCELED
            self._done.set()
            if self._queue is not None:
                self._queue.put(END)
            if self._on_end is not None:
                try:
                    self._on_end()
                except Exception:
                    log.exception("run %s: end hook failed", self.run.id)
