"""A run's event stream: SSE frames in, each event exactly once, resumed across drops.

The stream is read on the caller's thread. Frames are split and parsed here,
from raw byte chunks handed over as they arrive, in time linear in their size
(a frame's bytes are joined once, when its end comes). Every event carries a
monotonically increasing ``seq`` (wire-protocol §10): anything at or below the
last delivered ``seq`` is a replay and is dropped. When the connection drops,
stalls past the idle deadline, or closes before a terminal event, the stream
is reopened with ``Last-Event-ID`` and ``?lastSeq=`` after a backoff; a run
ends at exactly one terminal event, after which the connection is closed.
One frame may not grow past ``max_event_bytes`` (32 MB by default): past it
the stream fails with :class:`~mantyx_sync.StreamError` instead of buffering
whatever a server or proxy sends; so does a frame that is not UTF-8.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from ..errors import MantyxError, SpecError, StreamError, Timeout, TransportError
from ..events import TERMINAL_TYPES, MalformedEvent, RunEvent
from .progress import report
from .retry import Backoff, RetryPolicy, Safety
from .transport import EventSource, HttpTransport

__all__ = ["DeadlineExceeded", "RunStream", "check_timeout", "read_backlog"]

log = logging.getLogger(__name__)


FrameParser = Callable[..., "RunEvent | None"]
"""``parse(data_text, event=, id=) -> RunEvent | None`` (``None``: skip the frame)."""


def _is_run_terminal(event: RunEvent) -> bool:
    return event.is_terminal


class _Interrupted(TransportError):
    """The server closed the stream before the run's terminal event."""


class _BadFrame(StreamError):
    """A frame that would come again on every reconnect (too large, not UTF-8): not retried."""


class DeadlineExceeded(Timeout):
    """The stream's overall ``timeout`` passed before its terminal event."""


def check_timeout(timeout: float | None) -> None:
    """Refuse an overall ``timeout`` that is not a number of seconds > 0 or ``None``.

    :raises SpecError: naming the argument and what it must be.
    """
    if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
        raise SpecError(
            f"timeout must be a number of seconds > 0, or None for no limit; got {timeout!r}"
        )


Frame = tuple[str | None, str, str | None]
"""One SSE frame's ``event:``, ``data:`` (lines joined by LF) and ``id:`` values."""

# Two line terminators in a row end a frame: LF LF, LF CR (CRLF CRLF contains
# it) or CR CR (wire-protocol §3; the SSE spec's CR, LF and CRLF line ends).
_FRAME_END = re.compile(b"\n\n|\n\r|\r\r")
_LINE_END = re.compile("\r\n|\r|\n")


def parse_frame(text: str) -> Frame | None:
    """The fields of one frame's text; ``None`` when it has no ``data:`` (nothing to dispatch).

    Comments and unknown fields are skipped; one space after the colon is
    dropped, as the SSE spec says. Linear in the frame's size.
    """
    event = ident = None
    data: list[str] = []
    for line in _LINE_END.split(text) if "\r" in text else text.split("\n"):
        if not line or line[0] == ":":
            continue
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value or None
        elif name == "id":
            ident = value
    if not data:
        return None
    return event, "\n".join(data), ident


class _FrameReader:
    """Raw chunks in, SSE frames out, in time linear in the bytes received.

    Each frame's bytes are gathered as they arrive and joined once, when its
    end comes. Raises when bytes keep coming (keep-alives, a slow drip) but no
    event has for ``idle_timeout`` seconds, when the frame being received grows
    past ``max_frame`` bytes (counted as the bytes arrive, so an endless frame
    is refused after ``max_frame`` bytes instead of being buffered whole), and
    when a frame is not UTF-8; ``deadline`` is called for each chunk and raises
    once the stream's overall timeout has passed.

    The reading loop only counts events (``seen += 1``: the least it can do per
    event); the clock is read twice per chunk, not once per event.
    """

    def __init__(
        self,
        idle_timeout: float,
        *,
        max_frame: int,
        run_id: str,
        deadline: Callable[[], None] | None = None,
    ) -> None:
        self.idle_timeout = idle_timeout
        self.seen = 0
        self._max_frame = max_frame
        self._run_id = run_id
        self._deadline = deadline

    def frames(self, source: Iterable[bytes]) -> Iterator[Frame]:
        last_event = resumed = time.monotonic()
        counted = 0
        pieces: list[bytes] = []  # the frame being received, as it came
        pending = 0  # its size so far
        last = b""  # the previous chunk's last byte: a frame end may straddle chunks
        for chunk in source:
            if self.seen != counted:
                counted = self.seen
                last_event = resumed
            if time.monotonic() - last_event > self.idle_timeout:
                raise Timeout(f"no event for {self.idle_timeout:g}s")
            if self._deadline is not None:
                self._deadline()
            start = 0
            for end in _FRAME_END.finditer(last + chunk if last else chunk):
                cut = end.end() - len(last)
                if pending + cut - start > self._max_frame:
                    self._refuse()
                if pieces:
                    pieces.append(chunk[start:cut])
                    raw = b"".join(pieces)
                    pieces, pending = [], 0
                else:
                    raw = chunk[start:cut]
                start = cut
                frame = parse_frame(self._decode(raw))
                if frame is not None:
                    yield frame
            if start < len(chunk):
                pieces.append(chunk[start:] if start else chunk)
                pending += len(chunk) - start
                if pending > self._max_frame:
                    self._refuse()
            last = chunk[-1:]
            resumed = time.monotonic()

    def _decode(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _BadFrame(
                f"event stream for run {self._run_id}: an event frame is not valid UTF-8 "
                f"({exc.reason} at byte {exc.start}); the stream was closed",
                run_id=self._run_id,
            ) from None

    def _refuse(self) -> None:
        raise _BadFrame(
            f"event stream for run {self._run_id}: one event frame grew past "
            f"{self._max_frame} bytes (max_event_bytes); the stream was closed. "
            "Pass Client(max_event_bytes=...) if events this large are expected",
            run_id=self._run_id,
        )


class RunStream:
    """Iterator of :class:`~mantyx_sync.events.RunEvent` for one run, in ``seq`` order.

    Not thread-safe for iteration (use one thread); :meth:`close` may be called
    from any thread and makes the iteration stop.

    A connection that stays open but brings no event for the idle timeout
    (silent, keep-alives only, a slow drip) is reopened, and counts against
    ``stream_reconnects`` like a failed reopen — unless ``busy()`` says the run
    is waiting on us (one of its local tools is still being answered). Only a
    new event starts the count again. With ``timeout`` (seconds, see
    :meth:`limit`) the stream ends with :class:`DeadlineExceeded` once that
    time has passed, however the server behaves.

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
        timeout: float | None = None,
        busy: Callable[[], bool] | None = None,
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
        self._busy = busy
        self._deadline: float | None = None
        self._timeout = 0.0
        self.limit(timeout)
        self._events = self._run()

    def __iter__(self) -> RunStream:
        return self

    def __next__(self) -> RunEvent:
        return next(self._events)

    def events(self) -> Iterator[RunEvent]:
        """The underlying generator (what :meth:`__next__` steps), for a caller
        that wants to step it without this wrapper's frame per event."""
        return self._events

    def limit(self, timeout: float | None) -> None:
        """End the stream with :class:`DeadlineExceeded` ``timeout`` seconds from
        now, or at the earlier limit already set (``None``: no new limit).

        :raises SpecError: ``timeout`` is not a number of seconds > 0.
        """
        check_timeout(timeout)
        if timeout is not None:
            deadline = time.monotonic() + timeout
            if self._deadline is None or deadline < self._deadline:
                self._deadline, self._timeout = deadline, timeout

    def _remaining(self) -> float | None:
        """Seconds left before the deadline (``None``: no deadline; ``<= 0``: past it)."""
        return None if self._deadline is None else self._deadline - time.monotonic()

    def _check_deadline(self) -> None:
        """:raises DeadlineExceeded: the deadline has passed."""
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise DeadlineExceeded(
                f"run {self.run_id} did not end within its timeout of {self._timeout:g}s: "
                "pass a larger timeout= (or timeout=None for no limit)"
            )

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
                if failures:
                    report("reconnected", failures, self._reconnects)
                reader = _FrameReader(
                    self._idle_timeout,
                    max_frame=self._max_frame,
                    run_id=run_id,
                    deadline=None if self._deadline is None else self._check_deadline,
                )
                # One flat loop per event (no nested generator, no per-event clock):
                # the reader splits frames, ``parse`` (RunEvent.from_frame) checks the envelope.
                for name, data, ident in reader.frames(source):
                    try:
                        event = parse(data, event=name, id=ident)
                    except MalformedEvent as exc:
                        log.warning("run %s: skipping malformed event frame: %s", run_id, exc)
                        continue
                    if event is None:
                        continue
                    reader.seen += 1
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
                if isinstance(exc, DeadlineExceeded):
                    raise
                try:
                    self._check_deadline()
                except DeadlineExceeded as late:
                    raise late from exc
                if (
                    isinstance(exc, _BadFrame)
                    or not self._policy.should_retry(exc)
                    or not self._resume
                ):
                    raise
                quiet = opened and isinstance(exc, Timeout)
                if quiet and self._until_quiet:
                    return
                # A quiet connection is a failure like any other (a stalled or
                # dripping server must not be followed forever), unless the run
                # is waiting on our own tool. Only events start the count again.
                waiting = quiet and self._busy is not None and self._busy()
                failures = 1 if progressed or waiting else failures + 1
                if failures > self._reconnects:
                    hint = (
                        "; if runs may go this long without an event, raise "
                        "Client(stream_idle_timeout=...)"
                        if quiet
                        else ""
                    )
                    raise StreamError(
                        f"event stream for run {run_id} could not be resumed after "
                        f"{failures - 1} reconnects (stream_reconnects): {exc}{hint}",
                        run_id=run_id,
                    ) from exc
                report("reconnecting", failures, self._reconnects, exc)
                delay = self._backoff.delay(failures, exc)
                remaining = self._remaining()
                if remaining is not None:
                    delay = min(delay, remaining)
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
        self._check_deadline()
        idle = connect = None
        remaining = self._remaining()
        if remaining is not None:
            # Neither the connection nor a silent socket may outlast the deadline.
            idle = min(self._idle_timeout, remaining)
            connect = min(self._transport.config.connect_timeout, remaining)
        source = self._transport.open_stream(
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
