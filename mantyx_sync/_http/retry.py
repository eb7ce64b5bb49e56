"""Retry policies as small immutable values built from tenacity pieces.

Which failures are worth another attempt depends on whether the request is
safe to repeat (NOTES.md, "Which requests are safe to repeat"):

* ``SAFE`` requests (every GET, tool-results, cancel, session DELETE) are
  retried on connection errors, timeouts, 429 and any 5xx;
* ``CREATE`` requests (``POST /agent-runs``, ``/agent-sessions``, ``.../messages``)
  only when the server cannot have acted: the connection was refused, or the
  answer was 429 or 503. Never after a timeout or a dropped response: a second
  run would start and bill twice.

Waits grow exponentially with jitter, honour ``Retry-After`` when the server
sends it, and every loop is bounded in attempts and in time.

tenacity is imported only when a request actually needs a second attempt:
the first attempt is a plain call, and almost every request succeeds on it
(tenacity's own import pulls in ``asyncio``, and ``tornado`` when installed:
≈17 ms and 4 MiB a plain script would pay for nothing; benchmarks/README.md).
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from ..errors import (
    APIError,
    ConnectError,
    MantyxError,
    RateLimitError,
    ServerError,
    TransportError,
)
from .config import ClientConfig
from .progress import report

if TYPE_CHECKING:
    import tenacity

__all__ = ["Backoff", "RetryPolicy", "Safety", "create_policy", "safe_policy"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Safety(enum.Enum):
    """How safe a request is to send twice."""

    SAFE = "safe"
    CREATE = "create"
    NEVER = "never"


def _retryable(safety: Safety, exc: BaseException) -> bool:
    if safety is Safety.NEVER or not isinstance(exc, MantyxError):
        return False
    if isinstance(exc, ConnectError):
        return True
    if safety is Safety.CREATE:
        return isinstance(exc, APIError) and exc.status in (429, 503)
    if isinstance(exc, TransportError):
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

    def _strategy(self) -> tenacity.wait.wait_base:
        import tenacity

        exponential = tenacity.wait_exponential(multiplier=self.initial, max=self.maximum)
        return exponential + tenacity.wait_random(0, self.jitter)

    def delay(self, attempt: int, exc: BaseException | None = None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` after failure ``exc``."""
        hinted = _retry_after(exc)
        if hinted is not None:
            return min(hinted, self.retry_after_cap)
        state = _AttemptState(attempt)
        return float(self._strategy()(state))  # type: ignore[arg-type]

    def as_wait(self) -> Callable[[tenacity.RetryCallState], float]:
        """A tenacity ``wait`` callable with the same behaviour as :meth:`delay`."""

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            return self.delay(state.attempt_number, exc)

        return wait


@attrs.frozen
class _AttemptState:
    # The two attributes tenacity's wait strategies read from a RetryCallState.
    attempt_number: int
    outcome: None = None


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

    :param safety: which failures may be retried (see the module docstring).
    :param attempts: total attempts, the first included.
    :param deadline: seconds after which no further attempt starts.
    :param backoff: the waits between attempts.
    :param sleep: injectable for tests (``sleep=list.append`` records the waits).
    """

    safety: Safety
    attempts: int = 5
    deadline: float | None = 60.0
    backoff: Backoff = Backoff()
    sleep: Callable[[float], None] = attrs.field(default=time.sleep, eq=False, repr=False)

    def should_retry(self, exc: BaseException) -> bool:
        """Whether ``exc`` is worth another attempt under this policy."""
        return _retryable(self.safety, exc)

    def retrying(
        self,
        *,
        label: str = "request",
        abort: threading.Event | None = None,
        started: float | None = None,
    ) -> tenacity.Retrying:
        """A fresh tenacity controller for one logical request.

        :param abort: when set, no further attempt starts and a pending wait ends
            at once (e.g. the run the request belongs to has ended).
        :param started: when the request's first attempt started
            (``time.monotonic()``); the deadline counts from it. Default: now.
        """
        import tenacity

        stop: Any = tenacity.stop_after_attempt(max(1, self.attempts))
        if self.deadline is not None:
            stop = stop | _StopBeforeDeadline(
                time.monotonic() if started is None else started, self.deadline
            )
        sleep = self.sleep
        if abort is not None:
            stop = stop | tenacity.stop_when_event_set(abort)
            if self.sleep is time.sleep:
                sleep = tenacity.sleep_using_event(abort)

        def before_sleep(state: tenacity.RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome is not None else None
            log.debug(
                "%s: attempt %d failed (%s); retrying in %.2fs",
                label,
                state.attempt_number,
                exc,
                state.upcoming_sleep,
            )
            report("retrying", state.attempt_number + 1, max(1, self.attempts), exc)

        return tenacity.Retrying(
            stop=stop,
            wait=self.backoff.as_wait(),
            retry=tenacity.retry_if_exception(self.should_retry),
            sleep=sleep,
            reraise=True,
            before_sleep=before_sleep,
        )

    def run(
        self,
        fn: Callable[[], T],
        *,
        label: str = "request",
        abort: threading.Event | None = None,
    ) -> T:
        """Run ``fn`` under this policy; the last error is re-raised when it gives up.

        The first attempt is a plain call. Only when it fails with an error
        worth retrying is the tenacity controller built; it is handed that
        first outcome as its attempt 1, so attempts, waits and the deadline
        (counted from the first attempt's start) are exactly those of a
        controller that had run every attempt.

        :param abort: see :meth:`retrying`.
        """
        started = time.monotonic()
        try:
            return fn()
        except BaseException as exc:
            if not self.should_retry(exc):
                raise
            first: BaseException | None = exc
        retrying = self.retrying(label=label, abort=abort, started=started)

        def attempt() -> T:
            nonlocal first
            if first is not None:
                failed, first = first, None
                raise failed
            return fn()

        return retrying(attempt)

    def call(self, fn: Callable[[], T], *, label: str = "request") -> T:
        """:meth:`run`, with a warning when a retryable failure outlasts the policy."""
        try:
            return self.run(fn, label=label)
        except MantyxError as exc:
            if self.should_retry(exc):
                log.warning("%s: giving up after retries: %s", label, exc)
            raise

    def with_attempts(self, attempts: int) -> RetryPolicy:
        """A copy with a different attempt budget."""
        return attrs.evolve(self, attempts=attempts)


CREATE_POLICY = RetryPolicy(safety=Safety.CREATE, attempts=5, deadline=60.0)
SAFE_POLICY = RetryPolicy(safety=Safety.SAFE, attempts=5, deadline=60.0)


def safe_policy(config: ClientConfig) -> RetryPolicy:
    """:data:`SAFE_POLICY` with the client's ``max_retries`` budget."""
    return SAFE_POLICY.with_attempts(config.max_retries + 1)


def create_policy(config: ClientConfig) -> RetryPolicy:
    """:data:`CREATE_POLICY` with the client's ``max_retries`` budget."""
    return CREATE_POLICY.with_attempts(config.max_retries + 1)
