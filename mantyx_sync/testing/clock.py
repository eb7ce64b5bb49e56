"""The emulator's clock, and the ISO-8601 forms its timestamps take on the wire
(each route sends one of the two)."""

from __future__ import annotations

import threading
import time

__all__ = ["EmulatorClock"]


class EmulatorClock:
    """Wall-clock seconds as the emulator sees them (``time.time()`` plus an offset).

    Token expiry and rate-limit windows read this clock, so a test can
    fast-forward an hour with :meth:`advance` instead of waiting for it.

    Thread-safety: every method may be called from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offset = 0.0

    def now(self) -> float:
        """The emulator's current time, in epoch seconds."""
        return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward (never backwards)."""
        if seconds < 0:
            raise ValueError("the emulator's clock only moves forward")
        with self._lock:
            self._offset += seconds


def iso_seconds(ts: float | None) -> str | None:
    """``ts`` (epoch seconds) as ISO-8601 UTC to the second, or ``None``."""
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def iso_millis(ts: float | None) -> str | None:
    """``ts`` (epoch seconds) as ISO-8601 UTC to the millisecond, or ``None``."""
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d}Z"
