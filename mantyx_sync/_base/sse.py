"""Server-sent events, read one way for every stream the package follows (runs,
evaluations, MCP servers, Agent API endpoints).

Frames are found here, in time linear in the bytes received (a frame's chunks
are joined once, when its end comes); sseclient-py parses each whole frame.
Its work grows with a frame's lines times its bytes, so a frame of more than
:data:`PART_LINES` lines is handed to it in parts of that many lines and their
events joined again: any frame up to ``max_bytes`` (counted as the bytes
arrive: an endless frame is never buffered) parses in linear time. A frame
over ``max_bytes``, or not UTF-8, is refused (:class:`FrameError`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Final

import sseclient

__all__ = ["MAX_FRAME_BYTES", "FrameError", "FrameTooLarge", "read_events"]

MAX_FRAME_BYTES: Final = 32 * 1024 * 1024
"""The default cap on one frame's size."""
PART_LINES: Final = 64
"""The most lines sseclient-py is handed at once: a 32 MB part of 64 lines costs
it about twice what one line does."""

# Two line ends in a row end a frame: LF LF, LF CR (CRLF CRLF contains it) or
# CR CR (the SSE line ends are CR, LF and CRLF). Compiled (and cached by re)
# on first use: most streams never have a CR.
_FRAME_END = b"\n\n|\n\r|\r\r"
# A part's last line: an empty data line, so that every part yields one event,
# and the frame's data is the parts' data joined (each then ends in a newline).
_PART_END = b"data:\n"


class FrameError(ValueError):
    """An event frame refused: too large, or not UTF-8."""


class FrameTooLarge(FrameError):
    """An event frame grew past the byte cap."""


def read_events(
    chunks: Iterable[bytes], *, max_bytes: int = MAX_FRAME_BYTES, flush: bool = False
) -> Iterator[sseclient.Event]:
    """The events in a stream of byte chunks, each as soon as its frame is whole.

    A frame without ``data`` is not dispatched; ``event`` is ``"message"`` when
    the frame names none.

    :param flush: also dispatch a last frame the stream ends without its blank
        line (a stream that may end mid-frame, and resume, must not).
    :raises FrameError: a frame is over ``max_bytes`` or is not UTF-8; the
        events before it were delivered.
    """
    if flush:
        chunks = itertools.chain(chunks, (b"\n\n",))
    pieces = _Pieces(chunks, max_bytes)
    parts: list[tuple[sseclient.Event, bool]] = []
    try:
        for event in _Parser(pieces).events():
            if not pieces.split:
                yield event
                continue
            parts.append((event, pieces.names_event))
            if not pieces.left:
                joined = _join(parts)
                parts = []
                if joined is not None:
                    yield joined
    except UnicodeDecodeError as exc:
        raise FrameError(
            f"an event frame is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None


class _Parser(sseclient.SSEClient):
    """sseclient-py's field rules over frames already found here: its own frame
    search (``_read``, in every release since 1.7) would split and join every
    line a second time."""

    def __init__(self, frames: Iterable[bytes]) -> None:
        super().__init__(iter(frames))
        self._frames = frames
        # Its per-event "Dispatching <event>" line costs a call per event and would
        # log each event's data unredacted; a run's stream logs its own events.
        self._logger = _SILENT

    def _read(self) -> Iterable[bytes]:
        return self._frames


class _Silent:
    def debug(self, *args: object) -> None:
        """Nothing: see :class:`_Parser`."""


_SILENT: Final = _Silent()


class _Pieces:
    """The frames found in ``chunks``, as sseclient-py is handed them: a long one in parts.

    sseclient-py parses one piece before it asks for the next, so while it
    parses, :attr:`split`, :attr:`left` and :attr:`names_event` describe the
    piece it has.
    """

    def __init__(self, chunks: Iterable[bytes], max_bytes: int) -> None:
        self._chunks = chunks
        self._max_bytes = max_bytes
        self.split = False  # the piece is a part of a longer frame
        self.left = 0  # the parts of that frame still to come
        self.names_event = False  # the part has an ``event`` line

    def __iter__(self) -> Iterator[bytes]:
        """Whole frames, each ending in a blank line (one generator: a step per event)."""
        max_bytes = self._max_bytes
        pieces: list[bytes] = []  # the frame being received, as it came
        pending = 0  # its size so far
        last = b""  # the previous chunk's last byte: a frame end may straddle chunks
        for chunk in self._chunks:
            start = 0
            for cut in _ends(chunk, last):
                if pending + cut - start > max_bytes:
                    raise _too_large(max_bytes)
                if pieces:
                    pieces.append(chunk[start:cut])
                    frame = b"".join(pieces)
                    pieces, pending = [], 0
                else:
                    frame = chunk[start:cut]
                start = cut
                # No frame of fewer bytes can hold more lines than a part may:
                # inside a frame every line has a byte besides its end.
                if len(frame) <= 2 * PART_LINES or _lines(frame) <= PART_LINES:
                    yield frame
                else:
                    yield from self._parts(frame)
                    self.split = False
            if start < len(chunk):
                pieces.append(chunk[start:] if start else chunk)
                pending += len(chunk) - start
                if pending > max_bytes:
                    raise _too_large(max_bytes)
            last = chunk[-1:] if pieces else b""

    def _parts(self, frame: bytes) -> Iterator[bytes]:
        self.split = True
        lines = frame.splitlines(keepends=True)
        starts = range(0, len(lines), PART_LINES)
        for n, start in enumerate(starts):
            part = lines[start : start + PART_LINES]
            self.left = len(starts) - n - 1
            self.names_event = any(map(_names_event, part))
            yield b"".join(part) + _PART_END


def _join(parts: list[tuple[sseclient.Event, bool]]) -> sseclient.Event | None:
    """One frame's event from its parts' (``None`` when it has no data): the
    data joined, and each other field as its last line set it."""
    data = "".join(event.data for event, _ in parts)
    if not data:
        return None
    joined = sseclient.Event()
    joined.data = data[:-1]
    named = [event.event for event, names in parts if names]
    if named:
        joined.event = named[-1]
    for field in ("id", "retry"):
        values = [getattr(event, field) for event, _ in parts if getattr(event, field) is not None]
        if values:
            setattr(joined, field, values[-1])
    return joined


def _names_event(line: bytes) -> bool:
    """Whether ``line`` sets the event's name (field ``event``, any value)."""
    return line.startswith(b"event") and line[5:6] in (b":", b"\n", b"\r", b"")


def _ends(chunk: bytes, last: bytes) -> list[int]:
    """Where each frame that ends in ``chunk`` ends (``last``: the byte before it)."""
    if b"\r" in chunk or last == b"\r":
        return [end.end() - len(last) for end in re.finditer(_FRAME_END, last + chunk)]
    # LF only, as most servers send: str.find is several times faster than the pattern.
    ends = [1] if last == b"\n" and chunk[:1] == b"\n" else []
    found = chunk.find(b"\n\n", ends[0] if ends else 0)
    while found >= 0:
        ends.append(found + 2)
        found = chunk.find(b"\n\n", found + 2)
    return ends


def _lines(frame: bytes) -> int:
    """How many lines ``frame`` has before the blank one that ends it (CR, LF and
    CRLF each end a line, as for sseclient-py)."""
    ends = frame.count(b"\n")
    if b"\r" in frame:
        ends += frame.count(b"\r") - frame.count(b"\r\n")
    return ends - 1


def _too_large(max_bytes: int) -> FrameError:
    return FrameTooLarge(f"an event frame grew past {max_bytes} bytes")
