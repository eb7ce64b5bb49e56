"""Retry policies as small immutable values built from tenacity pieces.

``SAFE`` requests (see :mod:`.routes`) are retried on connection errors,
timeouts, 429 and any 5xx; ``CREATE`` requests only when the server cannot
have acted (connection refused, 429, 503): never after a timeout or a dropped
response, as a second run would start and bill twice. Waits grow
exponentially with jitter and honour ``Retry-After``; every loop is bounded in
attempts and in time.

tenacity is imported only when a request actually needs a second attempt
(its import pulls in ``asyncio``, and ``tornado`` when installed: ≈17 ms and
4 MiB a plain script would pay for nothing; benchmarks/README.md).
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import attrs

from ..config import ClientConfig
from ..errors import (
    APIConnectionError,
    APIStatusError,
    ConnectError,
    MantyxError,
    RateLimitError,
    ServerError,
)
from .progress import report

if TYPE_CHECKING:
    import tenacity

__all__ = [
    "Attempts",
    "Backoff",
    "RetryPolicy",
    "Safety",
    "create_policy",
    "reconnect_policy",
    "safe_policy",
]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Safety(enum.Enum):
    """How safe a request is to send twice (see the module docstring)."""

    SAFE = "safe"
    CREATE = "create"
    NEVER = "never"


def _retryable(safety: Safety, exc: BaseException) -> bool:
    if safety is Safety.NEVER or not isinstance(exc, MantyxError):
        return False
    if isinstance(exc, ConnectError):
        return True
    if safety is Safety.CREATE:
        return isinstance(exc, APIStatusError) and exc.status in (429, 503)
    if isinstance(exc, APIConnectionError):
        return True
    return isinstance(exc, (RateLimitError, ServerError))


def _retry_after(exc: BaseException | None) -> float | None:
    value = getattr(exc, "retry_after", None)
    return float(value) if isinstance(value, (int, float)) and value >= 0 else None


@attrs.frozen(kw_only=True)
class Backoff:
    """Exponential backoff with jitter that yields to ``Retry-After``.

    :param initial: first wait in seconds.
    :param maximum: cap on a computed wait (a server's ``Retry-After`` may be
        longer, up to ``retry_after_cap``).
    :param jitter: up to this many seconds of random jitter on each wait.
    """

    initial: float = 0.25
    maximum: float = 8.0
    jitter: float = 0.25
    retry_after_cap: float = 60.0

    def as_wait(
        self, cap: Callable[[], float | None] | None = None
    ) -> Callable[[tenacity.RetryCallState], float]:
        """A tenacity ``wait``: ``wait_exponential`` plus ``wait_random``, or the
        failure's ``Retry-After`` when it has one.

        :param cap: seconds no wait may exceed, asked before each wait (``None``:
            no cap), e.g. what is left of an overall timeout.
        """
        import tenacity

        strategy = tenacity.wait_exponential(
            multiplier=self.initial, max=self.maximum
        ) + tenacity.wait_random(0, self.jitter)

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            hinted = _retry_after(exc)
            delay = strategy(state) if hinted is None else min(hinted, self.retry_after_cap)
            limit = None if cap is None else cap()
            return delay if limit is None else max(0.0, min(delay, limit))

        return wait


@attrs.frozen
class _StopBeforeDeadline:
    # tenacity's stop_before_delay, counted from the first attempt's start
    # (which may have happened before the controller existed, see run()).
    started: float
    deadline: float

    def __call__(self, state: tenacity.RetryCallState) -> bool:
        elapsed = time.monotonic() - self.started
        return elapsed + (state.upcoming_sleep or 0.0) >= self.deadline


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How one kind of request is retried. Immutable, so one value can be shared.

    :param attempts: total attempts, the first included.
    :param deadline: seconds after which no further attempt starts.
    :param backoff: the waits between attempts.
    :param sleep: injectable for tests (``sleep=list.append`` records the waits).
    :param shown_as: how each further attempt is reported to whoever shows
        progress (:mod:`.progress`): a request ``"retrying"``, a stream
        ``"reconnecting"``.
    """

    safety: Safety
    attempts: int = 5
    deadline: float | None = 60.0
    backoff: Backoff = Backoff()
    sleep: Callable[[float], None] = attrs.field(default=time.sleep, eq=False, repr=False)
    shown_as: Literal["retrying", "reconnecting"] = "retrying"

    def should_retry(self, exc: BaseException) -> bool:
        return _retryable(self.safety, exc)

    def run(
        self,
        fn: Callable[[], T],
        *,
        label: str = "request",
        abort: threading.Event | None = None,
    ) -> T:
        """Run ``fn`` under this policy; the last error is re-raised when it gives up.

        :param abort: see :class:`Attempts`.
        """
        started = time.monotonic()
        attempts = None  # built at the first failure: most requests need one attempt
        while True:
            try:
                return fn()
            except BaseException as exc:
                if not self.should_retry(exc):
                    raise
                if attempts is None:
                    attempts = Attempts(self, label=label, abort=abort, started=started)
                if not attempts.failed(exc):
                    raise

    def call(self, fn: Callable[[], T], *, label: str = "request") -> T:
        """:meth:`run`, with a warning when a retryable failure outlasts the policy."""
        try:
            return self.run(fn, label=label)
        except MantyxError as exc:
            if self.should_retry(exc):
                log.warning("%s: giving up after retries: %s", label, exc)
            raise


def _raise(exc: BaseException) -> None:
    raise exc


class Attempts:
    """The failed attempts at one thing under ``policy`` (a request, a stream's
    reopens), each an attempt of a tenacity controller built at the first
    failure. :meth:`reset` starts a fresh one, so a stream's budget is per
    outage. Not thread-safe: one caller.

    :param abort: when set, no further attempt starts and a pending wait ends
        at once (e.g. the run the request belongs to has ended).
    :param started: when the first attempt started (``time.monotonic()``); the
        deadline counts from it. Default: when the controller is built.
    :param cap: see :meth:`Backoff.as_wait`.
    """

    def __init__(
        self,
        policy: RetryPolicy,
        *,
        label: str,
        abort: threading.Event | None,
        started: float | None = None,
        cap: Callable[[], float | None] | None = None,
    ) -> None:
        self._policy, self._label, self._abort = policy, label, abort
        self._started, self._cap = started, cap
        self._attempts: Iterator[tenacity.AttemptManager] | None = None
        self.failures = 0
        """Failures since the start or the last :meth:`reset`."""

    def _controller(self) -> tenacity.Retrying:
        import tenacity

        policy, abort = self._policy, self._abort
        stop: Any = tenacity.stop_after_attempt(max(1, policy.attempts))
        if policy.deadline is not None:
            started = time.monotonic() if self._started is None else self._started
            stop = stop | _StopBeforeDeadline(started, policy.deadline)
        sleep = policy.sleep
        if abort is not None:
            stop = stop | tenacity.stop_when_event_set(abort)
            if policy.sleep is time.sleep:
                sleep = tenacity.sleep_using_event(abort)
        return tenacity.Retrying(
            stop=stop,
            wait=policy.backoff.as_wait(self._cap),
            retry=tenacity.retry_if_exception(policy.should_retry),
            sleep=sleep,
            reraise=True,
            before_sleep=self._before_sleep,
        )

    def _before_sleep(self, state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        log.debug(
            "%s: attempt %d failed (%s); retrying in %.2fs",
            self._label,
            state.attempt_number,
            exc,
            state.upcoming_sleep,
        )
        # A request's attempts count its first; a stream's reconnects do not.
        shown_as = self._policy.shown_as
        first = int(shown_as == "retrying")
        limit = max(1, self._policy.attempts) - 1 + first
        report(shown_as, state.attempt_number + first, limit, exc)

    def reset(self) -> None:
        self._attempts, self.failures = None, 0

    def failed(self, exc: BaseException) -> bool:
        """Record ``exc`` as the next failed attempt and wait before another.

        :returns: ``False`` when the policy gives up instead (attempts or time
            spent, ``abort`` set, or ``exc`` not worth another attempt).
        """
        if self._attempts is None:
            self._attempts = iter(self._controller())
            self._attempt = next(self._attempts)
        self.failures += 1
        with self._attempt:  # tenacity records the failure as this attempt's outcome
            _raise(exc)
        try:
            self._attempt = next(self._attempts)
        except BaseException as last:
            if last is not exc:
                raise
            return False  # tenacity stopped, re-raising the last failure
        return True


CREATE_POLICY = RetryPolicy(safety=Safety.CREATE, attempts=5, deadline=60.0)
SAFE_POLICY = RetryPolicy(safety=Safety.SAFE, attempts=5, deadline=60.0)


# Event streams: counted in reconnects (a stream that makes progress earns a
# fresh budget, see Attempts), never in seconds.
RECONNECT_POLICY = RetryPolicy(safety=Safety.SAFE, deadline=None, shown_as="reconnecting")


def reconnect_policy(config: ClientConfig) -> RetryPolicy:
    return attrs.evolve(RECONNECT_POLICY, attempts=config.stream_reconnects + 1)


def safe_policy(config: ClientConfig) -> RetryPolicy:
    return attrs.evolve(SAFE_POLICY, attempts=config.max_retries + 1)


def create_policy(config: ClientConfig) -> RetryPolicy:
    return attrs.evolve(CREATE_POLICY, attempts=config.max_retries + 1)
