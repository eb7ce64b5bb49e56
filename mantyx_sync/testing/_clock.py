"""The emulator's clock: real time plus an offset that tests can move forward."""

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
