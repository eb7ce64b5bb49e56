"""Rate-limit buckets: fixed windows per credential, headers and 429s."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Literal

from .clock import EmulatorClock

__all__ = ["RateLimiter"]


class RateLimiter:
    """Fixed windows per (credential, bucket); only the configured buckets are limited.

    Each route names its bucket: ``runs`` (run starts), ``lifecycle`` (tool
    results, cancels, feedback), ``mutations`` (other writes) or ``reads``
    (every GET, streams included). The arguments are ``LocalMantyx``'s
    ``rate_limits``, ``rate_limit_window`` and ``rate_limit_reset``.

    Thread-safety: every method may be called from any thread.
    """

    def __init__(
        self,
        *,
        limits: Mapping[str, int],
        window: float,
        clock: EmulatorClock,
        reset_style: Literal["seconds", "epoch"] = "seconds",
    ) -> None:
        # LocalMantyx has checked the types, the window and the reset style.
        for bucket, limit in limits.items():
            if limit < 0:
                raise ValueError(f"rate limit for {bucket!r} must be an int >= 0, got {limit!r}")
        self.limits: dict[str, int] = dict(limits)
        self.window = window
        self.reset_style = reset_style
        self._clock = clock
        self._lock = threading.Lock()
        # (credential, bucket) -> [window start, requests counted in it]
        self._windows: dict[tuple[str, str], list[float]] = {}
        self.rejected: int = 0

    def take(self, credential: str, bucket: str) -> tuple[bool, dict[str, str]]:
        """Count one request; ``(allowed, headers)``. Unlimited buckets: ``(True, {})``."""
        limit = self.limits.get(bucket)
        if limit is None:
            return True, {}
        now = self._clock.now()
        with self._lock:
            state = self._windows.get((credential, bucket))
            if state is None or now >= state[0] + self.window:
                state = self._windows[(credential, bucket)] = [now, 0]
            allowed = state[1] < limit
            if allowed:
                state[1] += 1
            else:
                self.rejected += 1
            remaining = max(0, limit - int(state[1]))
            ends = state[0] + self.window
        # Rounded up: a client that waits for the reset never wakes early.
        wait = max(0, math.ceil(ends - now))
        reset = str(math.ceil(ends)) if self.reset_style == "epoch" else str(wait)
        headers = {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset": reset,
            "X-RateLimit-Bucket": bucket,
        }
        if not allowed:
            headers["Retry-After"] = str(max(1, wait))
        return allowed, headers
