"""Server-sent events, read one way for every stream the package follows (runs,
evaluations, MCP servers, Agent API endpoints).

Frames are found here, in time linear in the bytes received (a frame's chunks
are joined once, when its end comes); sseclient-py parses each whole frame.
Its work grows with a frame's lines times its bytes, so a frame is refused
(:class:`FrameError`) past ``max_bytes`` (counted as the bytes arrive: an endless
frame is never buffered), past :data:`MAX_FRAME_LINES` lines, or when not UTF-8.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

import sseclient

__all__ = ["MAX_FRAME_BYTES", "FrameError", "FrameTooLarge", "loads_json", "read_events"]

MAX_FRAME_BYTES: Final = 32 * 1024 * 1024
"""The default cap on one frame's size."""
MAX_FRAME_LINES: Final = 64
"""The most lines one frame may have: sseclient-py's work grows with lines times
bytes, and a 32 MB frame of 64 lines costs it about twice what one line does."""

# Two line ends in a row end a frame: LF LF, LF CR (CRLF CRLF contains it) or
# CR CR (the SSE line ends are CR, LF and CRLF). Compiled (and cached by re)
# on first use: most streams never have a CR.
_FRAME_END = b"\n\n|\n\r|\r\r"


class FrameError(ValueError):
    """An event frame refused: too large, too many lines, or not UTF-8."""


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
    :raises FrameError: a frame is over ``max_bytes`` or :data:`MAX_FRAME_LINES`,
        or is not UTF-8; the events before it were delivered.
    """
    if flush:
        chunks = itertools.chain(chunks, (b"\n\n",))
    events = sseclient.SSEClient(_frames(chunks, max_bytes)).events()
    try:
        yield from events
    except UnicodeDecodeError as exc:
        raise FrameError(
            f"an event frame is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None


def _frames(chunks: Iterable[bytes], max_bytes: int) -> Iterator[bytes]:
    """Whole frames, each ending in a blank line sseclient-py sees as one."""
    pieces: list[bytes] = []  # the frame being received, as it came
    pending = 0  # its size so far
    last = b""  # the previous chunk's last byte: a frame end may straddle chunks
    for chunk in chunks:
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
            # No frame of fewer than this many bytes can hold too many lines:
            # inside a frame every line has a byte besides its end.
            if len(frame) > 2 * MAX_FRAME_LINES and _lines(frame) > MAX_FRAME_LINES:
                raise FrameError(
                    f"an event frame has more than {MAX_FRAME_LINES} lines (the most one may have)"
                )
            if frame[-1] == 13 and frame[-2] == 10:
                # LF CR: sseclient-py ends a frame at LF LF, CR CR or CRLF CRLF only.
                frame = frame[:-1] + b"\n"
            yield frame
        if start < len(chunk):
            pieces.append(chunk[start:] if start else chunk)
            pending += len(chunk) - start
            if pending > max_bytes:
                raise _too_large(max_bytes)
        last = chunk[-1:] if pieces else b""


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


_DECODER: Final = json.JSONDecoder()
_JSON_SPACE: Final = " \t\n\r"


def loads_json(text: str) -> Any:
    """``json.loads(text)``, minus its per-call overhead in the common case (a frame's data).

    ``raw_decode`` skips the whitespace regexes ``loads`` runs on every frame;
    anything unusual (leading or trailing whitespace, errors) goes through
    ``json.loads`` so results and error messages stay exactly the same.
    """
    try:
        value, end = _DECODER.raw_decode(text)
    except json.JSONDecodeError:
        return json.loads(text)
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return json.loads(text)
    return value
