"""A run's event stream: SSE frames in, each event exactly once, resumed across drops.

Read on the caller's thread by the package's one event reader
(:mod:`mantyx_sync._base.sse`). An event at or below the last delivered
``seq`` is a replay and is dropped. When the connection drops, stalls past the
idle deadline, or closes before a terminal event, the stream is reopened with
``Last-Event-ID`` and ``?lastSeq=`` after a backoff. A frame past
``max_event_bytes``, or not UTF-8, fails the stream with
:class:`~mantyx_sync.StreamError` instead of buffering whatever a server or
proxy sends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from .._base.sse import FrameError, FrameTooLarge, read_events
from .._models.frames import MalformedEvent
from ..errors import (
    APIConnectionError,
    MantyxError,
    RequestTimeoutError,
    RunTimeoutError,
    SpecError,
    StreamError,
)
from ..events import TERMINAL_TYPES, RunEvent
from .api import Api, EventSource
from .progress import report
from .retry import Attempts, reconnect_policy

if TYPE_CHECKING:
    from ..events import AnyRunEvent

__all__ = ["RunStream", "check_timeout", "read_backlog"]

log = logging.getLogger(__name__)


FrameParser = Callable[..., "AnyRunEvent | None"]
"""``parse(data_text, event=, id=)``; ``None`` skips the frame."""


class _Interrupted(APIConnectionError):
    pass


def check_timeout(timeout: float | None) -> None:
    """Refuse a ``run_timeout`` that is not a number of seconds > 0 or ``None``.

    :raises SpecError: naming the argument and what it must be.
    """
    if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
        raise SpecError(
            f"must be a number of seconds > 0, or None for no limit; got {timeout!r}",
            path="run_timeout",
        )


class _Watch:
    """Raises when bytes keep coming (keep-alives, a slow drip) but no event
    has for ``idle_timeout`` seconds, and (``deadline``) past the overall
    timeout. The reading loop only counts events (``seen += 1``): the clock is
    read per chunk, not per event.
    """

    def __init__(self, idle_timeout: float, deadline: Callable[[], None] | None) -> None:
        self.idle_timeout = idle_timeout
        self.seen = 0
        self._deadline = deadline

    def chunks(self, source: Iterable[bytes]) -> Iterator[bytes]:
        last_event = resumed = time.monotonic()
        counted = 0
        for chunk in source:
            if self.seen != counted:
                counted = self.seen
                last_event = resumed
            if time.monotonic() - last_event > self.idle_timeout:
                raise RequestTimeoutError(f"no event for {self.idle_timeout:g}s")
            if self._deadline is not None:
                self._deadline()
            yield chunk
            resumed = time.monotonic()


class RunStream:
    """Iterator of :class:`~mantyx_sync.events.RunEvent` for one run, in ``seq`` order.

    Iterate on one thread; :meth:`close` from any, and the iteration stops.

    A connection that stays open but brings no event for the idle timeout
    (silent, keep-alives only, a slow drip) is reopened, and counts against
    ``stream_reconnects`` like a failed reopen — unless ``busy()`` says the run
    is waiting on us (one of its local tools is still being answered). Only a
    new event starts the count again. With ``timeout`` (seconds from
    ``started``, default now; see :meth:`limit`) the stream ends with
    :class:`RunTimeoutError` once that time has passed, however the server behaves.

    Other streams of the same kind (an evaluation's flat events) plug in their
    own ``parse``, ``terminal`` event types and ``follows`` (what messages call
    the thing followed, ``"evaluation"``); ``on_open`` is called each time a
    connection is open, and ``on_break`` before each reconnect: the (terminal)
    event it returns, if any, ends the stream instead.
    """

    def __init__(
        self,
        api: Api,
        path: str,
        *,
        run_id: str,
        last_seq: int = 0,
        idle_timeout: float | None = None,
        until_quiet: bool = False,
        parse: FrameParser | None = None,
        terminal: frozenset[str] = TERMINAL_TYPES,
        on_open: Callable[[], object] | None = None,
        on_break: Callable[[], AnyRunEvent | None] | None = None,
        timeout: float | None = None,
        started: float | None = None,
        busy: Callable[[], bool] | None = None,
        follows: str = "run",
    ) -> None:
        config = api.config
        self._api = api
        self._path = path
        self.run_id = run_id
        self._name = f"{follows} {run_id}"
        self.last_seq = last_seq
        self._idle_timeout = idle_timeout or config.stream_idle_timeout
        self._max_frame = config.max_event_bytes
        self._closed = threading.Event()
        self._policy = reconnect_policy(config)
        self._reconnects = Attempts(
            self._policy, label=f"{self._name} stream", abort=self._closed, cap=self._remaining
        )
        self._source: EventSource | None = None
        self._lock = threading.Lock()
        # until_quiet: stop (instead of resuming) once an open stream goes quiet.
        self._until_quiet = until_quiet
        self._parse: FrameParser = parse or RunEvent.from_frame
        self._terminal = terminal
        self._on_open = on_open
        self._on_break = on_break
        self._busy = busy
        self._deadline: float | None = None
        self._timeout = 0.0
        self.limit(timeout, since=started)
        self._events = self._run()

    def __iter__(self) -> RunStream:
        return self

    def __next__(self) -> AnyRunEvent:
        return next(self._events)

    def events(self) -> Iterator[AnyRunEvent]:
        """The generator :meth:`__next__` steps, without its frame per event."""
        return self._events

    def limit(self, timeout: float | None, *, since: float | None = None) -> None:
        """End the stream with :class:`RunTimeoutError` ``timeout`` seconds from
        ``since`` (``time.monotonic()``; default now), or at the earlier limit
        already set (``None``: no new limit).

        :raises SpecError: ``timeout`` is not a number of seconds > 0.
        """
        check_timeout(timeout)
        if timeout is not None:
            deadline = (time.monotonic() if since is None else since) + timeout
            if self._deadline is None or deadline < self._deadline:
                self._deadline, self._timeout = deadline, timeout

    def _remaining(self) -> float | None:
        return None if self._deadline is None else self._deadline - time.monotonic()

    def _check_deadline(self) -> None:
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise RunTimeoutError(
                f"{self._name} did not end within its run_timeout of {self._timeout:g}s: "
                "pass a larger run_timeout= (or run_timeout=None for no limit)",
                run_id=self.run_id,
            )

    def close(self) -> None:
        self._closed.set()
        self._drop_source()

    def _run(self) -> Iterator[AnyRunEvent]:
        reconnects = self._reconnects
        # Checked once per stream: the loop below runs for every streamed token.
        debug = log.isEnabledFor(logging.DEBUG)
        run_id, name = self.run_id, self._name
        parse = self._parse
        terminal = self._terminal
        while not self._closed.is_set():
            progressed = opened = False
            try:
                source = self._open()
                opened = True
                if reconnects.failures:
                    report("reconnected", reconnects.failures, self._policy.attempts - 1)
                watch = _Watch(
                    self._idle_timeout,
                    None if self._deadline is None else self._check_deadline,
                )
                # One flat loop per event (no per-event clock): sseclient-py parses
                # each frame, ``parse`` (RunEvent.from_frame) checks the envelope.
                for frame in read_events(watch.chunks(source), max_bytes=self._max_frame):
                    try:
                        event = parse(frame.data, event=frame.event, id=frame.id)
                    except MalformedEvent as exc:
                        log.warning("%s: skipping malformed event frame: %s", name, exc)
                        continue
                    if event is None:
                        continue
                    watch.seen += 1
                    seq = event.seq
                    if seq <= self.last_seq:
                        if debug:
                            log.debug("%s: dropping replayed event seq %d", name, seq)
                        continue
                    self.last_seq = seq
                    if debug:
                        log.debug("%s: event %d %s", name, seq, event.type)
                    progressed = True
                    yield event
                    if event.type in terminal:
                        self.close()
                        return
                if self._closed.is_set():
                    return
                raise _Interrupted("the server closed the stream before the terminal event")
            except FrameError as exc:
                # Not retried: the same frame would come again on every reconnect.
                hint = (
                    " (max_event_bytes); the stream was closed. Pass "
                    "Client(max_event_bytes=...) if events this large are expected"
                    if isinstance(exc, FrameTooLarge)
                    else "; the stream was closed"
                )
                raise StreamError(f"event stream for {name}: {exc}{hint}", run_id=run_id) from None
            except MantyxError as exc:
                if self._closed.is_set():
                    return
                if isinstance(exc, RunTimeoutError):
                    raise
                try:
                    self._check_deadline()
                except RunTimeoutError as late:
                    raise late from exc
                if not self._policy.should_retry(exc):
                    raise
                quiet = opened and isinstance(exc, RequestTimeoutError)
                if quiet and self._until_quiet:
                    return
                # A quiet connection is a failure like any other (a stalled or
                # dripping server must not be followed forever), unless the run
                # is waiting on our own tool. Only events start the count again.
                if progressed or (quiet and self._busy is not None and self._busy()):
                    reconnects.reset()
                ended = None if self._on_break is None else self._on_break()
                if ended is not None:
                    self.last_seq = ended.seq
                    yield ended
                    self.close()
                    return
                if not reconnects.failed(exc):
                    if self._closed.is_set():
                        return
                    hint = (
                        "; if runs may go this long without an event, raise "
                        "Client(stream_idle_timeout=...)"
                        if quiet
                        else ""
                    )
                    raise StreamError(
                        f"event stream for {name} could not be resumed after "
                        f"{reconnects.failures - 1} reconnects (stream_reconnects): {exc}{hint}",
                        run_id=run_id,
                    ) from exc
            finally:
                self._drop_source()

    def _open(self) -> EventSource:
        self._check_deadline()
        idle = connect = None
        remaining = self._remaining()
        if remaining is not None:
            # Neither the connection nor a silent socket may outlast the deadline.
            idle = min(self._idle_timeout, remaining)
            connect = min(self._api.config.connect_timeout, remaining)
        source = self._api.open_stream(
            self._path,
            last_seq=self.last_seq or None,
            idle_timeout=idle or self._idle_timeout,
            connect_timeout=connect,
        )
        with self._lock:
            if self._closed.is_set():
                source.close()
                raise _Interrupted("stream closed")
            self._source = source
        if self._on_open is not None:
            self._on_open()
        return source

    def _drop_source(self) -> None:
        with self._lock:
            source, self._source = self._source, None
        if source is not None:
            source.close()


def read_backlog(api: Api, path: str, *, run_id: str, quiet: float) -> list[AnyRunEvent]:
    """Every event already in a run's log: the server replays it at once on a
    new connection, so ``quiet`` seconds with no event means the replay is over.
    A stream that cannot be opened raises instead of passing for an empty log.

    :raises APIStatusError: the run cannot be read (e.g. 404 unknown run).
    :raises StreamError: no connection could be opened within the reconnect budget.
    """
    stream = RunStream(api, path, run_id=run_id, idle_timeout=quiet, until_quiet=True)
    try:
        return list(stream)
    finally:
        stream.close()
