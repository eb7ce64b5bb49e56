"""The emulator, instrumented: when each ``local_tool_call`` frame is written and
when each tool-result POST arrives.

The hooks live here, not in the emulator: the running emulator's WSGI app
(``LocalMantyx.app``) is switched to a subclass of its own class whose
``__call__`` wraps the real one, so nothing here imports the emulator's
private modules.

* *written*: the moment the SSE iterable hands the chunk holding the frame
  to werkzeug, which writes and flushes each item at once on the same thread
  (the socket write itself is inside the measured interval, for every
  variant alike).
* *posted*: the moment the WSGI app is entered for ``POST …/tool-results``
  (werkzeug has read the request line and headers; the body is read here).

Both use ``time.perf_counter`` in the server's process.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from mantyx_sync.testing import LocalMantyx

__all__ = ["ToolClock", "start_timed_server"]

_TOOL_USE_ID = re.compile(rb'"toolUseId":\s*"([^"]+)"')
_CALL_MARK = b"event: local_tool_call\n"


class ToolClock:
    """Server-side timestamps per ``toolUseId`` (first occurrence only). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.written: dict[str, float] = {}
        self.posted: dict[str, float] = {}

    def mark_written(self, chunk: bytes, when: float) -> None:
        if _CALL_MARK not in chunk:
            return
        with self._lock:
            for frame in chunk.split(b"\n\n"):
                if _CALL_MARK in frame:
                    found = _TOOL_USE_ID.search(frame)
                    if found is not None:
                        self.written.setdefault(found.group(1).decode(), when)

    def mark_posted(self, tool_use_id: str, when: float) -> None:
        with self._lock:
            self.posted.setdefault(tool_use_id, when)

    def clear(self) -> None:
        with self._lock:
            self.written.clear()
            self.posted.clear()

    def round_trips(self) -> list[float]:
        """Seconds from frame written to result received, per answered call."""
        with self._lock:
            return [self.posted[t] - w for t, w in self.written.items() if t in self.posted]

    def span(self) -> float | None:
        """Seconds from the first frame written to the last result received."""
        with self._lock:
            if not self.written or not self.posted:
                return None
            return max(self.posted.values()) - min(self.written.values())


class _Timed:
    """Mixed in before the emulator app's own class (see :func:`start_timed_server`)."""

    bench_clock: ToolClock

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "")
        path = environ.get("PATH_INFO", "")
        if method == "POST" and path.endswith("/tool-results"):
            arrived = time.perf_counter()
            length = environ.get("CONTENT_LENGTH")
            stream = environ["wsgi.input"]
            body = stream.read(int(length)) if length else stream.read()
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            try:
                tool_use_id = json.loads(body).get("toolUseId")
            except (ValueError, AttributeError):
                tool_use_id = None
            if isinstance(tool_use_id, str):
                self.bench_clock.mark_posted(tool_use_id, arrived)
        result: Iterable[bytes] = super().__call__(environ, start_response)  # type: ignore[misc]
        if method == "GET" and path.endswith("/stream"):
            return self._watch(result)
        return result

    def _watch(self, frames: Iterable[bytes]) -> Iterator[bytes]:
        clock = self.bench_clock
        try:
            for chunk in frames:
                # Stamped as the chunk is handed to werkzeug, which writes and
                # flushes it at once on this thread; stamping after the write
                # could land after a fast client's answer had arrived.
                clock.mark_written(chunk, time.perf_counter())
                yield chunk
        finally:
            close = getattr(frames, "close", None)
            if close is not None:
                close()


def start_timed_server(**options: Any) -> tuple[LocalMantyx, ToolClock]:
    """A started :class:`LocalMantyx` on 127.0.0.1 with a :class:`ToolClock` attached."""
    server = LocalMantyx(**options)
    clock = ToolClock()
    app = server.app
    app.__class__ = type("_TimedApp", (_Timed, type(app)), {})
    app.bench_clock = clock  # type: ignore[attr-defined]
    server.start()
    return server, clock
