"""Rate limits end to end: headers into client.rate_limits, and run starts that pace
themselves under a small limit so that no 429 reaches the user."""

from __future__ import annotations

import threading

import pytest

import mantyx_sync
from mantyx_sync import RateLimitError
from mantyx_sync.rate_limits import RateLimits
from mantyx_sync.testing import LocalMantyx

SYSTEM = "You are a test agent."


def _create_statuses(server: LocalMantyx) -> list[int]:
    return [
        r.status for r in server.requests if r.method == "POST" and r.path.endswith("/agent-runs")
    ]


def test_headers_land_in_client_rate_limits() -> None:
    with LocalMantyx(rate_limits={"runs": 50, "reads": 100}) as server:
        client = server.client()
        client.models.list()
        assert client.rate_limits["reads"].limit == 100
        assert client.rate_limits["reads"].remaining == 99
        mantyx_sync.Agent(client, system_prompt=SYSTEM).run("hi")
        runs = client.rate_limits["runs"]
        assert (runs.bucket, runs.limit, runs.remaining) == ("runs", 50, 49)
        reset_in = runs.reset_in()
        assert reset_in is not None and 0 < reset_in <= 60
        assert "lifecycle" not in client.rate_limits


def test_sequential_runs_pace_themselves_without_a_single_429() -> None:
    # A cron job firing runs: 10 per 1 s window, 25 runs.
    with LocalMantyx(rate_limits={"runs": 10}, rate_limit_window=1.0) as server:
        agent = mantyx_sync.Agent(server.client(), system_prompt=SYSTEM)
        for _ in range(25):
            assert agent.run("hi").text
        statuses = _create_statuses(server)
        assert len(statuses) == 25 and set(statuses) == {202}
        assert server.rate_limiter is not None and server.rate_limiter.rejected == 0


def test_concurrent_runs_under_a_limit_never_show_the_user_a_429() -> None:
    with LocalMantyx(rate_limits={"runs": 10}, rate_limit_window=1.0) as server:
        client = server.client()
        agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
        errors: list[BaseException] = []
        done: list[str] = []
        lock = threading.Lock()

        def worker() -> None:
            for _ in range(6):
                try:
                    text = agent.run("hi").text
                except BaseException as exc:  # collected for the assertion
                    with lock:
                        errors.append(exc)
                else:
                    with lock:
                        done.append(text)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == [] and len(done) == 24
        assert _create_statuses(server).count(202) == 24


def test_a_429_that_outlasts_the_retries_carries_the_bucket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with LocalMantyx(rate_limits={"runs": 1}, rate_limit_window=60.0) as server:
        client = server.client(max_retries=0)
        agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
        agent.run("hi")
        assert client.rate_limits["runs"].exhausted
        # Run starts wait for an empty bucket up to the create policy's deadline
        # (60 s); bound that wait to a moment here to meet the server's 429.
        limits = client.rate_limits
        monkeypatch.setattr(
            limits,
            "slot",
            lambda bucket, *, max_wait: RateLimits.slot(limits, bucket, max_wait=0.05),
        )
        with pytest.raises(RateLimitError) as info:
            agent.run("again")
        limit = info.value.rate_limit
        assert limit is not None and (limit.bucket, limit.remaining) == ("runs", 0)
        assert info.value.retry_after is not None and 0 < info.value.retry_after <= 60
        assert info.value.code == "rate_limit_exceeded"


def test_a_reset_sent_as_an_epoch_timestamp_paces_the_same() -> None:
    # X-RateLimit-Reset as epoch seconds instead of seconds-until: told apart by magnitude.
    with LocalMantyx(
        rate_limits={"runs": 2}, rate_limit_window=1.0, rate_limit_reset="epoch"
    ) as server:
        client = server.client()
        agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
        for _ in range(4):
            assert agent.run("hi").text
        runs = client.rate_limits["runs"]
        assert runs.reset_at is not None
        # Read as a point in time: within the 1 s window (+1 s rounding), not 56 years away.
        assert 0 < runs.reset_at - runs.observed_at <= 2.0
        assert set(_create_statuses(server)) == {202}
        # Four starts at two per window went through only because the client waited.
        assert server.rate_limiter is not None and server.rate_limiter.rejected == 0
