"""A run's event stream: SSE frames in, each event exactly once, resumed across drops.

The stream is read on the caller's thread. Frames are parsed by sseclient-py
over raw byte chunks handed over as they arrive. Every event carries a
monotonically increasing ``seq`` (wire-protocol §10): anything at or below the
last delivered ``seq`` is a replay and is dropped. When the connection drops,
stalls past the idle deadline, or closes before a terminal event, the stream
is reopened with ``Last-Event-ID`` and ``?lastSeq=`` after a backoff; a run
ends at exactly one terminal event, after which the connection is closed.
One frame may not grow past ``max_event_bytes`` (32 MB by default): past it
the stream fails with :class:`~mantyx_sync.StreamError` instead of buffering
whatever a server or proxy sends.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator

import sseclient

from ..errors import MantyxError, StreamError, Timeout, TransportError
from ..events import TERMINAL_TYPES, MalformedEvent, RunEvent
from .retry import Backoff, RetryPolicy, Safety
from .transport import EventSource, HttpTransport

__all__ = ["RunStream", "read_backlog"]

log = logging.getLogger(__name__)


FrameParser = Callable[..., "RunEvent | None"]
"""``parse(data_text, event=, id=) -> RunEvent | None`` (``None``: skip the frame)."""


def _is_run_terminal(event: RunEvent) -> bool:
    return event.is_terminal


class _Interrupted(TransportError):
    """The server closed the stream before the run's terminal event."""


class _FrameTooLarge(StreamError):
    """One SSE frame grew past ``max_event_bytes``: not retried (it would come again)."""


# Two line terminators in a row end a frame: LF LF, LF CR (CRLF CRLF contains
# it) or CR CR (wire-protocol §3; the SSE spec's CR, LF and CRLF line ends).
_FRAME_ENDS = (b"\n\n", b"\n\r", b"\r\r")
_FRAME_END = re.compile(b"\n\n|\n\r|\r\r")


class _IdleWatch:
    """Guards the raw chunks on their way to the SSE parser.

    Raises when bytes keep coming (keep-alives) but no event has for too long.
    The reading loop only counts events (``seen += 1``: the least it can do per
    event); the clock is read twice per chunk, not once per event. Events
    parsed from a chunk are dated when the parser comes back for more bytes,
    i.e. just after the last of them was handed over.

    Also raises when the frame being received grows past ``max_frame`` bytes,
    counted as the bytes arrive, so an endless frame is refused after
    ``max_frame`` bytes instead of being buffered whole.
    """

    def __init__(self, idle_timeout: float, *, max_frame: int, run_id: str) -> None:
        self.idle_timeout = idle_timeout
        self.seen = 0
        self._max_frame = max_frame
        self._run_id = run_id

    def chunks(self, source: EventSource) -> Iterator[bytes]:
        last_event = resumed = time.monotonic()
        counted = 0
        pending = 0  # bytes of the frame being received so far
        last = b""  # the previous chunk's last byte: a frame end may straddle chunks
        for chunk in source:
            if self.seen != counted:
                counted = self.seen
                last_event = resumed
            if time.monotonic() - last_event > self.idle_timeout:
                raise Timeout(f"no event for {self.idle_timeout:g}s (only keep-alives); resuming")
            window = last + chunk
            if pending + len(chunk) <= self._max_frame:
                # No frame that ends or continues here can be over the cap.
                end = max(window.rfind(mark) for mark in _FRAME_ENDS)
                pending = pending + len(chunk) if end < 0 else len(window) - end - 2
            else:
                pending = self._check_frames(window, len(last), pending)
            last = chunk[-1:]
            yield chunk
            resumed = time.monotonic()

    def _check_frames(self, window: bytes, counted: int, pending: int) -> int:
        """Size every frame ending in ``window``; return the bytes of the one left open.

        ``window`` starts with ``counted`` bytes already in ``pending``.
        """
        pos = counted
        for end in _FRAME_END.finditer(window):
            pending += max(0, end.start() - pos)
            self._refuse_over(pending)
            pending, pos = 0, end.end()
        pending += len(window) - max(pos, counted)
        self._refuse_over(pending)
        return pending

    def _refuse_over(self, size: int) -> None:
        if size > self._max_frame:
            raise _FrameTooLarge(
                f"event stream for run {self._run_id}: one event frame grew past "
                f"{self._max_frame} bytes (max_event_bytes); the stream was closed. "
                "Pass Client(max_event_bytes=...) if events this large are expected",
                run_id=self._run_id,
            )


class RunStream:
    """Iterator of :class:`~mantyx_sync.events.RunEvent` for one run, in ``seq`` order.

    Not thread-safe for iteration (use one thread); :meth:`close` may be called
    from any thread and makes the iteration stop.

    Other streams of the same kind (an evaluation's flat events, EVALS.md) plug
    in their own ``parse`` and ``terminal``; with ``resume=False`` a broken
    stream raises instead of reconnecting, for streams that cannot resume, and
    ``on_open`` is called each time a connection is open.
    """

    def __init__(
        self,
        transport: HttpTransport,
        path: str,
        *,
        run_id: str,
        last_seq: int = 0,
        idle_timeout: float | None = None,
        until_quiet: bool = False,
        parse: FrameParser | None = None,
        terminal: Callable[[RunEvent], bool] = _is_run_terminal,
        resume: bool = True,
        on_open: Callable[[], None] | None = None,
    ) -> None:
        config = transport.config
        self._transport = transport
        self._path = path
        self.run_id = run_id
        self.last_seq = last_seq
        self._reconnects = config.stream_reconnects
        self._idle_timeout = idle_timeout or config.stream_idle_timeout
        self._max_frame = config.max_event_bytes
        self._backoff = Backoff()
        # The policy only classifies failures; the loop below owns the waits
        # because a stream that made progress earns a fresh attempt budget.
        self._policy = RetryPolicy(safety=Safety.SAFE)
        self._closed = threading.Event()
        self._source: EventSource | None = None
        self._lock = threading.Lock()
        # until_quiet: stop (instead of resuming) once an open stream goes quiet.
        self._until_quiet = until_quiet
        self._parse: FrameParser = parse or RunEvent.from_frame
        self._terminal = terminal
        self._resume = resume
        self._on_open = on_open
        self._events = self._run()

    def __iter__(self) -> RunStream:
        return self

    def __next__(self) -> RunEvent:
        return next(self._events)

    def events(self) -> Iterator[RunEvent]:
        """The underlying generator (what :meth:`__next__` steps), for a caller
        that wants to step it without this wrapper's frame per event."""
        return self._events

    def close(self) -> None:
        """Stop reading and close the connection. Idempotent, any thread."""
        self._closed.set()
        with self._lock:
            source, self._source = self._source, None
        if source is not None:
            source.close()

    def _run(self) -> Iterator[RunEvent]:
        failures = 0
        # Checked once per stream: the loop below runs for every streamed token.
        debug = log.isEnabledFor(logging.DEBUG)
        run_id = self.run_id
        parse = self._parse
        # A run's own terminal test is inlined; other streams plug in theirs.
        other_terminal = None if self._terminal is _is_run_terminal else self._terminal
        while not self._closed.is_set():
            progressed = opened = False
            try:
                source = self._open()
                opened = True
                watch = _IdleWatch(
                    self._idle_timeout, max_frame=self._max_frame, run_id=self.run_id
                )
                # One flat loop per event (no nested generator, no per-event clock):
                # sseclient-py parses, ``parse`` (RunEvent.from_frame) checks the envelope.
                for frame in sseclient.SSEClient(watch.chunks(source)).events():
                    try:
                        # sseclient reports a frame without an ``event:`` line as "message".
                        name = frame.event
                        event = parse(
                            frame.data, event=None if name == "message" else name, id=frame.id
                        )
                    except MalformedEvent as exc:
                        log.warning("run %s: skipping malformed event frame: %s", run_id, exc)
                        continue
                    if event is None:
                        continue
                    watch.seen += 1
                    seq = event.seq
                    if seq <= self.last_seq:
                        if debug:
                            log.debug("run %s: dropping replayed event seq %d", run_id, seq)
                        continue
                    self.last_seq = seq
                    if debug:
                        log.debug("run %s: event %d %s", run_id, seq, event.type)
                    progressed = True
                    yield event
                    if (
                        event.type in TERMINAL_TYPES
                        if other_terminal is None
                        else other_terminal(event)
                    ):
                        self.close()
                        return
                if self._closed.is_set():
                    return
                raise _Interrupted("the server closed the stream before the terminal event")
            except MantyxError as exc:
                if self._closed.is_set():
                    return
                if (
                    isinstance(exc, _FrameTooLarge)
                    or not self._policy.should_retry(exc)
                    or not self._resume
                ):
                    raise
                quiet = opened and isinstance(exc, Timeout)
                if quiet and self._until_quiet:
                    return
                # A stream that opened and then only went quiet is healthy (the run
                # may be waiting on our own tool): it never uses up the budget,
                # which bounds failures in a row to open or keep a connection.
                failures = 1 if progressed or quiet else failures + 1
                if failures > self._reconnects:
                    raise StreamError(
                        f"event stream for run {run_id} could not be resumed after "
                        f"{failures - 1} reconnects: {exc}",
                        run_id=run_id,
                    ) from exc
                delay = self._backoff.delay(failures, exc)
                log.debug(
                    "run %s: stream interrupted after seq %d (%s); reconnecting in %.2fs",
                    run_id,
                    self.last_seq,
                    exc,
                    delay,
                )
                if self._closed.wait(delay):
                    return
            finally:
                self._drop_source()

    def _open(self) -> EventSource:
        source = self._transport.open_stream(
            self._path, last_seq=self.last_seq or None, idle_timeout=self._idle_timeout
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


def read_backlog(
    transport: HttpTransport, path: str, *, run_id: str, quiet: float
) -> list[RunEvent]:
    """Every event already in a run's log, read until the stream goes quiet.

    The server replays its log at once on a new connection (agent-runs §7), so
    a pause of ``quiet`` seconds with no event on an open stream means the
    replay is over. Used when attaching to a run another process started, to
    learn which tool calls are already answered before answering any
    (wire-protocol §10). A stream that cannot be opened raises instead of
    passing for an empty log.

    :raises APIError: the run cannot be read (e.g. 404 unknown run).
    :raises StreamError: no connection could be opened within the reconnect budget.
    """
    stream = RunStream(transport, path, run_id=run_id, idle_timeout=quiet, until_quiet=True)
    try:
        return list(stream)
    finally:
        stream.close()
