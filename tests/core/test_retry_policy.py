"""Retry policies: what is retried, how long it waits, and that loops are bounded."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

import pytest

from mantyx_sync._http import progress
from mantyx_sync._http.retry import Attempts, Backoff, RetryPolicy, Safety
from mantyx_sync.errors import (
    APIConnectionError,
    APIStatusError,
    ConnectError,
    InvalidRequestError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
)


def _api(cls: type[APIStatusError], status: int, **kw: object) -> APIStatusError:
    return cls("x", status=status, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("exc", "safe", "create"),
    [
        (ConnectError("refused"), True, True),
        (RequestTimeoutError("slow"), True, False),
        (APIConnectionError("dropped"), True, False),
        (_api(RateLimitError, 429), True, True),
        (_api(ServerError, 503), True, True),
        (_api(ServerError, 500), True, False),
        (_api(ServerError, 502), True, False),
        (_api(InvalidRequestError, 400), False, False),
        (ValueError("not ours"), False, False),
    ],
)
def test_what_each_safety_retries(exc: BaseException, safe: bool, create: bool) -> None:
    assert RetryPolicy(safety=Safety.SAFE).should_retry(exc) is safe
    assert RetryPolicy(safety=Safety.CREATE).should_retry(exc) is create
    assert RetryPolicy(safety=Safety.NEVER).should_retry(exc) is False


def test_call_retries_then_succeeds_recording_waits() -> None:
    waits: list[float] = []
    policy = RetryPolicy(safety=Safety.SAFE, attempts=5, sleep=waits.append)
    outcomes = iter([ConnectError("a"), _api(ServerError, 502), "ok"])

    def fn() -> str:
        value = next(outcomes)
        if isinstance(value, BaseException):
            raise value
        return value

    assert policy.call(fn) == "ok"
    assert len(waits) == 2
    assert all(0 < w <= Backoff().maximum + Backoff().jitter for w in waits)


def test_call_is_bounded_by_attempts_and_reraises_last_error() -> None:
    waits: list[float] = []
    policy = RetryPolicy(safety=Safety.SAFE, attempts=3, sleep=waits.append)
    calls = []

    def fn() -> None:
        calls.append(1)
        raise RequestTimeoutError("slow")

    with pytest.raises(RequestTimeoutError):
        policy.call(fn)
    assert len(calls) == 3
    assert len(waits) == 2


def test_retry_after_is_honoured() -> None:
    waits: list[float] = []
    policy = RetryPolicy(safety=Safety.SAFE, attempts=2, sleep=waits.append)
    outcomes = iter([_api(RateLimitError, 429, retry_after=7.5), "ok"])

    def fn() -> str:
        value = next(outcomes)
        if isinstance(value, BaseException):
            raise value
        return value

    assert policy.call(fn) == "ok"
    assert waits == [7.5]


def _failing(*failures: BaseException) -> Callable[[], str]:
    outcomes = iter(failures)

    def fn() -> str:
        failure = next(outcomes, None)
        if failure is not None:
            raise failure
        return "ok"

    return fn


def test_retry_after_is_capped() -> None:
    waits: list[float] = []
    backoff = Backoff(retry_after_cap=10.0)
    policy = RetryPolicy(safety=Safety.SAFE, backoff=backoff, sleep=waits.append)
    assert policy.call(_failing(_api(RateLimitError, 429, retry_after=3600))) == "ok"
    assert waits == [10.0]


def test_backoff_grows_and_is_capped() -> None:
    waits: list[float] = []
    backoff = Backoff(initial=0.5, maximum=4.0, jitter=0.0)
    policy = RetryPolicy(safety=Safety.SAFE, attempts=7, backoff=backoff, sleep=waits.append)
    assert policy.call(_failing(*[ConnectError("down")] * 6)) == "ok"
    assert waits == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_reconnects_count_failures_per_outage_through_tenacity() -> None:
    # Each failure is an attempt of a tenacity controller: its wait, its stop.
    waits: list[float] = []
    backoff = Backoff(initial=0.5, maximum=4.0, jitter=0.0)
    policy = RetryPolicy(
        safety=Safety.SAFE, attempts=3, deadline=None, backoff=backoff, sleep=waits.append
    )
    reconnects = Attempts(policy, label="s", abort=threading.Event())
    assert reconnects.failed(RequestTimeoutError("quiet")) and reconnects.failed(
        RequestTimeoutError("quiet")
    )
    assert not reconnects.failed(RequestTimeoutError("quiet"))  # the budget of 3 attempts is spent
    assert (waits, reconnects.failures) == ([0.5, 1.0], 3)
    reconnects.reset()  # an event came: a new outage, a fresh budget
    assert reconnects.failed(_api(RateLimitError, 429, retry_after=2.0))
    assert waits == [0.5, 1.0, 2.0]
    assert not reconnects.failed(_api(InvalidRequestError, 400))  # not worth another


def test_reconnect_waits_are_capped_and_end_on_abort() -> None:
    abort = threading.Event()
    policy = RetryPolicy(safety=Safety.SAFE, attempts=10, deadline=None)
    reconnects = Attempts(policy, label="s", abort=abort, cap=lambda: 0.05)
    started = time.monotonic()
    assert reconnects.failed(ConnectError("down"))  # 0.25 s of backoff, capped at 0.05
    assert time.monotonic() - started < 0.2
    abort.set()
    assert not reconnects.failed(ConnectError("down"))


def test_non_retryable_error_is_raised_at_once() -> None:
    waits: list[float] = []
    policy = RetryPolicy(safety=Safety.SAFE, attempts=5, sleep=waits.append)
    calls = []

    def fn() -> None:
        calls.append(1)
        raise _api(InvalidRequestError, 400)

    with pytest.raises(InvalidRequestError):
        policy.call(fn)
    assert calls == [1]
    assert waits == []


def test_deadline_stops_retrying() -> None:
    # With a zero deadline no second attempt starts, whatever the attempt budget.
    policy = RetryPolicy(safety=Safety.SAFE, attempts=50, deadline=0.0, sleep=lambda s: None)
    calls = []

    def fn() -> None:
        calls.append(1)
        raise ConnectError("down")

    with pytest.raises(ConnectError):
        policy.call(fn)
    assert len(calls) == 1


def test_deadline_counts_from_the_first_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first attempt runs before any tenacity controller exists; a first
    # attempt that outlasts the deadline still leaves no room for a second.
    import types

    from mantyx_sync._http import retry

    now = [100.0]
    fake_time = types.SimpleNamespace(monotonic=lambda: now[0], sleep=retry.time.sleep)
    monkeypatch.setattr(retry, "time", fake_time)
    waits: list[float] = []
    policy = RetryPolicy(safety=Safety.SAFE, attempts=5, deadline=5.0, sleep=waits.append)
    calls = []

    def slow_then_down() -> None:
        calls.append(1)
        now[0] += 6.0  # this attempt took 6 s of the 5 s deadline
        raise ConnectError("down")

    with pytest.raises(ConnectError):
        policy.call(slow_then_down)
    assert calls == [1]
    assert waits == []


def test_a_retried_request_is_retried_with_the_same_budget_and_abort() -> None:
    # run(): the first failure is handed to the controller as attempt 1.
    import threading

    abort = threading.Event()
    waits: list[float] = []
    policy = RetryPolicy(safety=Safety.SAFE, attempts=4, sleep=waits.append)
    calls = []

    def fn() -> None:
        calls.append(1)
        if len(calls) == 2:
            abort.set()
        raise ConnectError("down")

    with pytest.raises(ConnectError):
        policy.run(fn, abort=abort)
    assert len(calls) == 2
    assert len(waits) == 1


def _quietly(policy: RetryPolicy, fn: Callable[[], None]) -> None:
    with contextlib.suppress(ConnectError):
        policy.run(fn)


def test_each_further_attempt_is_told_to_whoever_shows_progress() -> None:
    # The command line's spinner listens: a request's attempts count its first, a
    # stream's reconnects do not; another thread, or no listener, hears nothing.
    heard: list[tuple[str, int, int]] = []
    request = RetryPolicy(safety=Safety.SAFE, attempts=3, sleep=lambda _: None)
    stream = RetryPolicy(
        safety=Safety.SAFE, attempts=9, deadline=None, shown_as="reconnecting", sleep=lambda _: None
    )

    def failing() -> None:
        raise ConnectError("refused")

    with progress.reporting(lambda what, n, limit, _: heard.append((what, n, limit))):
        with pytest.raises(ConnectError):
            request.run(failing)
        reconnects = Attempts(stream, label="stream", abort=None)
        assert reconnects.failed(ConnectError("refused"))
        assert reconnects.failed(ConnectError("refused"))
        other = threading.Thread(target=_quietly, args=(request, failing))
        other.start()
        other.join(timeout=10)
    request.run(lambda: None)
    with pytest.raises(ConnectError):
        request.run(failing)  # no listener any more: nothing is told
    assert heard == [
        ("retrying", 2, 3),
        ("retrying", 3, 3),
        ("reconnecting", 1, 8),
        ("reconnecting", 2, 8),
    ]
