"""Rate-limit headers: parsing, the per-bucket registry, pacing, and RateLimitError."""

from __future__ import annotations

import threading
import time

import pytest
import responses
from core_support import ROOT

from mantyx_sync import RateLimit, RateLimitError
from mantyx_sync._http.api import Api
from mantyx_sync.rate_limits import DEFAULT_BUCKET, RateLimits, parse_rate_limit

NOW = 1_800_000_000.0


def _headers(**values: str) -> dict[str, str]:
    return {f"X-RateLimit-{k.capitalize()}": v for k, v in values.items()}


def test_parse_full_headers_with_relative_reset() -> None:
    value = parse_rate_limit(
        _headers(limit="120", remaining="7", reset="30", bucket="runs"), now=NOW
    )
    assert value == RateLimit(
        bucket="runs", limit=120, remaining=7, reset_at=NOW + 30, observed_at=NOW
    )
    assert value.reset_in(NOW + 10) == 20
    assert not value.exhausted


@pytest.mark.parametrize(
    ("reset", "expected"),
    [
        ("1800000060", NOW + 60),  # epoch seconds
        ("1800000060000", NOW + 60),  # epoch milliseconds
        ("0", NOW),  # seconds-until, already due
        ("59.5", NOW + 59.5),
        ("soon", None),
        ("-3", None),
        ("nan", None),
    ],
)
def test_reset_is_epoch_or_seconds_until_by_magnitude(reset: str, expected: float | None) -> None:
    value = parse_rate_limit(_headers(remaining="0", reset=reset), now=NOW)
    assert value is not None and value.reset_at == expected


@pytest.mark.parametrize("number", ["inf", "-inf", "1e400", "nan"])
def test_counts_that_are_not_finite_are_unknown_not_a_crash(number: str) -> None:
    value = parse_rate_limit(_headers(limit=number, remaining=number, reset="5"), now=NOW)
    assert value is not None and (value.limit, value.remaining) == (None, None)


@pytest.mark.parametrize("retry_after", ["inf", "nan", "1e400"])
@responses.activate
def test_a_retry_after_that_is_not_finite_is_ignored(transport: Api, retry_after: str) -> None:
    responses.get(
        f"{ROOT}/models",
        status=429,
        json={"error": "slow down", "code": "rate_limit_exceeded"},
        headers={"Retry-After": retry_after, **_headers(limit="inf", remaining="0", reset="7")},
    )
    with pytest.raises(RateLimitError) as info:
        transport.request("GET", "/models")
    assert info.value.retry_after is not None and 0 < info.value.retry_after <= 7


def test_no_headers_no_value_and_missing_bucket_is_default() -> None:
    assert parse_rate_limit({"Content-Type": "application/json"}, now=NOW) is None
    assert parse_rate_limit(_headers(limit="x"), now=NOW) is None
    value = parse_rate_limit(_headers(remaining="0"), now=NOW)
    assert value is not None and value.bucket == DEFAULT_BUCKET and value.exhausted


def test_registry_keeps_the_latest_per_bucket_and_is_read_only() -> None:
    clock = iter([NOW, NOW + 1, NOW + 2])
    limits = RateLimits(clock=lambda: next(clock))
    limits.record(_headers(limit="10", remaining="9", bucket="runs"))
    limits.record(_headers(limit="600", remaining="599", bucket="lifecycle"))
    limits.record(_headers(limit="10", remaining="8", bucket="runs"))
    assert sorted(limits) == ["lifecycle", "runs"] and len(limits) == 2
    assert limits["runs"].remaining == 8 and limits["lifecycle"].limit == 600
    assert limits.get("reads") is None
    with pytest.raises(TypeError):
        limits["runs"] = limits["runs"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        limits["runs"].remaining = 3  # type: ignore[misc]


def test_slot_goes_at_once_when_unknown_or_not_empty() -> None:
    limits = RateLimits()
    with limits.slot("runs", max_wait=5.0) as waited:
        assert waited < 5.0
    limits.record(_headers(limit="10", remaining="1", reset="60", bucket="runs"))
    entered = threading.Event()
    with limits.slot("runs", max_wait=60.0):
        entered.set()
    assert entered.is_set()


def test_slot_waits_for_the_reset_of_an_empty_bucket() -> None:
    limits = RateLimits()
    limits.record(_headers(limit="10", remaining="0", reset="0.3", bucket="runs"))
    reset_at = limits["runs"].reset_at
    assert reset_at is not None
    with limits.slot("runs", max_wait=30.0):
        assert time.time() >= reset_at


def test_slot_wait_is_bounded_by_max_wait() -> None:
    limits = RateLimits()
    limits.record(_headers(limit="10", remaining="0", reset="3600", bucket="runs"))
    with limits.slot("runs", max_wait=0.2):
        reset_in = limits["runs"].reset_in()
        assert reset_in is not None and reset_in > 3000  # went before the reset


def test_slot_counts_requests_in_flight() -> None:
    limits = RateLimits()
    limits.record(_headers(limit="2", remaining="2", reset="0.2", bucket="runs"))
    release_first = threading.Event()
    holding = threading.Barrier(3, timeout=5)
    order: list[str] = []

    def hold(name: str) -> None:
        with limits.slot("runs", max_wait=30.0):
            order.append(name)
            holding.wait()
            release_first.wait(5)
            order.append(f"{name} done")

    threads = [threading.Thread(target=hold, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    holding.wait()  # a and b both hold their slots; the bucket (2) is spoken for

    def third() -> None:
        with limits.slot("runs", max_wait=30.0):
            order.append("c")

    late = threading.Thread(target=third)
    late.start()
    late.join(0.6)  # past the reset: c must still wait for a slot to come back
    assert "c" not in order
    release_first.set()
    late.join(5)
    for t in threads:
        t.join(5)
    assert order.index("c") > min(order.index("a done"), order.index("b done"))


@responses.activate
def test_transport_records_every_response(transport: Api) -> None:
    responses.get(
        f"{ROOT}/models",
        json={"models": []},
        headers=_headers(limit="600", remaining="599", reset="60", bucket="reads"),
    )
    responses.post(
        f"{ROOT}/agent-runs/r/cancel",
        status=404,
        json={"error": "not_found"},
        headers=_headers(limit="600", remaining="598", reset="60", bucket="lifecycle"),
    )
    transport.request("GET", "/models")
    with pytest.raises(Exception, match="not_found"):
        transport.request("POST", "/agent-runs/r/cancel")
    assert transport.rate_limits["reads"].remaining == 599
    assert transport.rate_limits["lifecycle"].remaining == 598


@responses.activate
def test_rate_limit_error_carries_the_bucket_and_a_retry_after(transport: Api) -> None:
    responses.post(
        f"{ROOT}/agent-runs",
        status=429,
        json={"error": "Too many run starts", "code": "rate_limit_exceeded"},
        headers={
            **_headers(limit="120", remaining="0", reset="42", bucket="runs"),
            "Retry-After": "7",
        },
    )
    responses.post(
        f"{ROOT}/agent-runs",
        status=429,
        json={"error": "rate_limited"},
        headers=_headers(limit="120", remaining="0", reset="42", bucket="runs"),
    )
    with pytest.raises(RateLimitError) as first:
        transport.request("POST", "/agent-runs", json_body={})
    assert first.value.retry_after == 7.0
    assert first.value.code == "rate_limit_exceeded"
    limit = first.value.rate_limit
    assert isinstance(limit, RateLimit)
    assert (limit.bucket, limit.limit, limit.remaining) == ("runs", 120, 0)
    with pytest.raises(RateLimitError) as second:
        transport.request("POST", "/agent-runs", json_body={})
    # No Retry-After: the wait is the time until the bucket's reset.
    assert second.value.retry_after is not None and 40 < second.value.retry_after <= 42
