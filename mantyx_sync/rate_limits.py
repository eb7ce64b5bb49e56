"""Rate-limit headers (``X-RateLimit-Limit``, ``-Remaining``, ``-Reset``,
``-Bucket``): parsed into values, kept per bucket, used to pace."""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Final

import attrs

__all__ = ["RateLimit", "RateLimits"]

log: logging.Logger = logging.getLogger(__name__)

DEFAULT_BUCKET: Final = "default"
"""The bucket name used when a response has rate-limit headers but no ``X-RateLimit-Bucket``."""

RUNS_BUCKET: Final = "runs"
"""The bucket that run starts draw from (``POST /agent-runs``, session messages)."""

# A Reset above this is an epoch timestamp, below it a number of seconds to wait
# (both are allowed). 1e9 s is September 2001; no window is 31 years long.
_EPOCH_THRESHOLD = 1e9
# ... and above this, an epoch timestamp in milliseconds.
_EPOCH_MS_THRESHOLD = 1e12


@attrs.frozen(kw_only=True)
class RateLimit:
    """One rate-limit bucket as the server last described it.

    :ivar bucket: the bucket name (``X-RateLimit-Bucket``), e.g. ``"runs"``.
    :ivar limit: requests allowed per window, if the server said.
    :ivar remaining: requests left in the current window, if the server said.
    :ivar reset_at: when the window refills, in epoch seconds (``time.time()``
        terms), if the server said. A ``Reset`` sent as seconds-until is
        converted on receipt.
    :ivar observed_at: when the response carrying these headers arrived (epoch seconds).

    .. versionadded:: 0.2.0
    """

    bucket: str
    limit: int | None = None
    remaining: int | None = None
    reset_at: float | None = None
    observed_at: float = 0.0

    @property
    def exhausted(self) -> bool:
        """Whether the server said no request is left in this window."""
        return self.remaining is not None and self.remaining <= 0

    def reset_in(self, now: float | None = None) -> float | None:
        """Seconds until the window refills (0 once it has), or ``None`` if unknown."""
        if self.reset_at is None:
            return None
        return max(0.0, self.reset_at - (time.time() if now is None else now))


def finite_number(value: object) -> float | None:
    """A number as a server sends it (a JSON number, or a numeric string: a header, an
    ``expires_in``); ``None`` for anything else. Not finite ("inf", "1e400") counts as
    unreadable too: ``int()`` would raise and fail the request it came with."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _int(value: str | None) -> int | None:
    number = finite_number(value)
    return None if number is None else max(0, int(number))


def _reset_at(value: str | None, now: float) -> float | None:
    number = finite_number(value)
    if number is None or number < 0:
        return None
    if number >= _EPOCH_MS_THRESHOLD:
        return number / 1000.0
    if number >= _EPOCH_THRESHOLD:
        return number
    return now + number


def parse_rate_limit(headers: Mapping[str, str], *, now: float | None = None) -> RateLimit | None:
    """The :class:`RateLimit` in ``headers`` (case-insensitive mapping), or ``None``.

    ``None`` when none of ``X-RateLimit-Limit/Remaining/Reset`` is present or
    readable. A missing ``X-RateLimit-Bucket`` gives :data:`DEFAULT_BUCKET`.
    """
    limit = _int(headers.get("X-RateLimit-Limit"))
    remaining = _int(headers.get("X-RateLimit-Remaining"))
    when = time.time() if now is None else now
    reset_at = _reset_at(headers.get("X-RateLimit-Reset"), when)
    if limit is None and remaining is None and reset_at is None:
        return None
    bucket = (headers.get("X-RateLimit-Bucket") or "").strip() or DEFAULT_BUCKET
    return RateLimit(
        bucket=bucket, limit=limit, remaining=remaining, reset_at=reset_at, observed_at=when
    )


class RateLimits(Mapping[str, RateLimit]):
    """The latest :class:`RateLimit` per bucket, read as ``rate_limits["runs"]``.

    A read-only mapping for callers; the transport records every response's
    headers. :meth:`slot` paces a request on a bucket known to be empty.

    Thread-safety: every method may be called from any thread.

    :param clock: wall-clock seconds (``time.time``), injectable for tests.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._latest: dict[str, RateLimit] = {}
        self._in_flight: dict[str, int] = {}

    def __getitem__(self, bucket: str) -> RateLimit:
        with self._cond:
            return self._latest[bucket]

    def __iter__(self) -> Iterator[str]:
        with self._cond:
            return iter(list(self._latest))

    def __len__(self) -> int:
        with self._cond:
            return len(self._latest)

    def __repr__(self) -> str:
        with self._cond:
            return f"RateLimits({self._latest!r})"

    def record(self, headers: Mapping[str, str]) -> RateLimit | None:
        """Parse ``headers`` and keep the result as its bucket's latest; returns it."""
        value = parse_rate_limit(headers, now=self._clock())
        if value is not None:
            with self._cond:
                current = self._latest.get(value.bucket)
                if current is None or value.observed_at >= current.observed_at:
                    self._latest[value.bucket] = value
                self._cond.notify_all()
        return value

    def _free(self, bucket: str, now: float) -> tuple[bool, float | None]:
        """``(may go, seconds worth waiting or None for "until something changes")``."""
        value = self._latest.get(bucket)
        if value is None or value.reset_at is None:
            # Unknown, or no word on when it refills: the server will say (429 + Retry-After).
            return True, None
        in_flight = self._in_flight.get(bucket, 0)
        if value.reset_at <= now:
            # A new window: assume its full limit, minus what is already on its way.
            return value.limit is None or in_flight < value.limit, None
        if value.remaining is None or value.remaining - in_flight > 0:
            return True, None
        return False, value.reset_at - now

    @contextlib.contextmanager
    def slot(self, bucket: str, *, max_wait: float | None) -> Iterator[float]:
        """Hold one request's place on ``bucket``; yields the seconds waited.

        When the bucket is known to be empty (``remaining`` 0, minus the
        requests already in flight here) and its reset is in the future, wait
        for the reset first, at most ``max_wait`` seconds (``None``: no
        bound); then go regardless, so the server has the last word.
        """
        started = self._clock()
        waited_log = False
        with self._cond:
            while True:
                now = self._clock()
                may_go, wait = self._free(bucket, now)
                if may_go:
                    break
                left = None if max_wait is None else max_wait - (now - started)
                if left is not None and left <= 0:
                    log.debug("rate limit %r: still empty; sending anyway", bucket)
                    break
                if not waited_log:
                    log.debug("rate limit %r: bucket empty, waiting for its reset", bucket)
                    waited_log = True
                timeout = min(x for x in (wait, left, 1.0) if x is not None)
                self._cond.wait(max(timeout, 0.001))
            self._in_flight[bucket] = self._in_flight.get(bucket, 0) + 1
        try:
            yield self._clock() - started
        finally:
            with self._cond:
                self._in_flight[bucket] -= 1
                self._cond.notify_all()
