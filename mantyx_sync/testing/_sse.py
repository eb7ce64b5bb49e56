"""The SSE writer: replay from a seq, live tail, keep-alives and per-frame faults.

The writer is a WSGI iterable. werkzeug's development server writes and
flushes every item as its own HTTP/1.1 chunk, so each event (or each batch of
events that were ready together) reaches the client at once.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from .runs import EmulatedRun

__all__ = ["drop_connection", "stream_frames"]

log = logging.getLogger(__name__)

MALFORMED_FRAME = b"data: {this is not json\n\n"
PING = b": ping\n\n"


def drop_connection(sock: Any) -> None:
    """Close a client connection abruptly: no (further) HTTP bytes, just FIN."""
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _stall(sock: Any, seconds: float, wakeup: Any, stop: threading.Event) -> bool:
    """Send nothing for ``seconds``; ``False`` if the client left or the server stops."""
    deadline = time.monotonic() + seconds
    if sock is None or wakeup is None:
        return not stop.wait(seconds)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        readable, _, _ = select.select([sock, wakeup], [], [], remaining)
        if wakeup in readable:
            return False
        if sock in readable:
            try:
                data = sock.recv(4096, socket.MSG_PEEK)
            except OSError:
                return False
            if not data:
                return False
            sock.recv(len(data))


def stream_frames(
    run: EmulatedRun,
    *,
    resume_seq: int,
    keepalive: float | None,
    sock: Any,
    wakeup: Any,
    stop: threading.Event,
) -> Iterator[bytes]:
    """Yield the run's SSE frames after ``resume_seq``, then the live tail.

    Ends right after the terminal event. The first item is empty so the
    status line and headers go out before any event exists.

    :param resume_seq: the client's ``Last-Event-ID`` / ``lastSeq`` (0: from the start).
    :param sock: the client socket (for drop/stall faults), or ``None``.
    :param wakeup: a socket that becomes readable when the server stops.
    """
    faults = run.faults
    per_frame = faults.faults.affects_frames
    index = max(0, resume_seq - faults.faults.replay_overlap) if resume_seq > 0 else 0
    frames = run.frames
    cond = run.cond
    yield b""
    while True:
        ping = False
        with cond:
            while len(frames) <= index:
                if run.closed:
                    drop_connection(sock)
                    return
                if run.done:
                    return
                if not cond.wait(keepalive):
                    ping = True
                    break
            batch = frames[index:] if not ping else []
        if ping:
            yield PING
            continue
        if not per_frame:
            index += len(batch)
            yield batch[0] if len(batch) == 1 else b"".join(batch)
            continue
        for frame in batch:
            index += 1
            yield frame
            if faults.should_send_malformed(index):
                yield MALFORMED_FRAME
            if faults.should_drop(index, resume_seq):
                log.debug("fault: dropping stream of run %s after seq %d", run.id, index)
                drop_connection(sock)
                return
            if faults.should_stall(index):
                log.debug("fault: stalling stream of run %s after seq %d", run.id, index)
                if not _stall(sock, faults.faults.stall_seconds, wakeup, stop):
                    drop_connection(sock)
                    return
