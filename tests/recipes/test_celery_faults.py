"""examples/recipes/celery_app.py when Redis or MANTYX fail at the worst moment: a job
still starts at most one run and answers each call once (``pytest -k celery``)."""

from __future__ import annotations

import gc
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from fleet_support import (
    JobThread,
    LoggedProcess,
    LogSeen,
    SalesModel,
    expected_answer,
    fresh_recipe,
    runs_of,
    tool_posts,
)
from recipe_support import cancel_requests

from mantyx_sync.testing import LocalMantyx

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIGSTOP, /proc"),
    pytest.mark.timeout(120),
]
for module in ("celery", "redis"):
    pytest.importorskip(module, reason='needs celery[redis]: pip install -e ".[test]"')

LEASE_S = 1.5


@pytest.fixture
def silenced(
    sales_emulator: LocalMantyx, own_redis: tuple[str, LoggedProcess]
) -> Iterator[tuple[ModuleType, LogSeen]]:
    """The recipe on a redis-server of this test's own, and its log from INFO up."""
    url, _ = own_redis
    recipe = fresh_recipe(sales_emulator, url, JOB_LEASE_SECONDS=str(LEASE_S))
    handler = LogSeen()
    logger = logging.getLogger(recipe.__name__)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield recipe, handler
    logger.removeHandler(handler)
    recipe.app.close()
    recipe.store.close()
    recipe.lease_store.close()
    recipe.client.close()


def test_celery_lease_is_lost_while_redis_stops_answering(
    silenced: tuple[ModuleType, LogSeen],
    own_redis: tuple[str, LoggedProcess],
    sales_emulator: LocalMantyx,
    sales_model: SalesModel,
) -> None:
    # Issue 29: a renewal that hung never marked the lease lost; the tool's answer
    # went out while the key had lapsed and another worker could take the job.
    recipe, seen = silenced
    redis_pid = own_redis[1].proc.pid
    before = set(sales_emulator.runs)
    prompt = "job silent: north 30"  # one call, a 3 s tool: twice the lease
    first = JobThread(recipe, "silent", prompt, owner="a")
    (run_id,) = sales_model.wait_until(lambda: set(sales_model.in_flight) - before, 10)
    seen.wait_for("tool sales_total", timeout=10)
    stopped_at = time.time()
    os.kill(redis_pid, signal.SIGSTOP)  # every call to Redis now hangs, nothing refused
    try:
        lost = seen.wait_for("lease lost", timeout=10)
        # At the last renewal plus half the lease (the key lives a whole lease).
        assert seen.created[lost] - stopped_at < LEASE_S * 2 / 3, seen.messages
        # The tool ends while Redis is still silent: its answer is not sent.
        ended = seen.wait_for("ended; answer", timeout=10)
        assert seen.messages[ended].endswith("answer run_terminal")
        assert tool_posts(sales_emulator) == {}
        second = JobThread(recipe, "silent", prompt, owner="b")
        assert time.time() - stopped_at > LEASE_S  # longer than the lease
    finally:
        os.kill(redis_pid, signal.SIGCONT)
    outcome = first.result()
    assert second.result() == outcome
    assert outcome["text"] == expected_answer(prompt) and outcome["attached"]
    # One run; its call answered once, by the worker that followed it after the outage.
    assert runs_of(sales_emulator, before) == [run_id]
    (call,) = sales_emulator.runs[run_id].tool_results
    assert tool_posts(sales_emulator) == {(run_id, call): 1}
    assert cancel_requests(sales_emulator, run_id) == []


@pytest.mark.parametrize("lookup_fails", [False, True], ids=["found", "lookup-fails"])
def test_celery_create_whose_answer_was_lost_starts_no_second_run(
    recipe: ModuleType, sales_emulator: LocalMantyx, lookup_fails: bool
) -> None:
    # Issue 29: MANTYX made the run and the answer was lost; the create must not be
    # made again before a lookup by the job key has said whether the run exists.
    before = set(sales_emulator.runs)
    prompt = "job unsure: east 5"
    sales_emulator.fail_next("POST", r"/agent-runs$", drop=True, applied=True)
    if lookup_fails:
        # e.g. a key without the scope to list runs: the job fails, makes nothing more
        sales_emulator.fail_next("GET", r"/agent-runs$", 403)
        with pytest.raises(recipe.mantyx_sync.APIStatusError):
            recipe.run_job("unsure", prompt, owner="a")
        assert recipe.store.get("mantyx:job:unsure:run") == recipe.STARTING
        assert len(runs_of(sales_emulator, before)) == 1
        # The next delivery of the job looks again before anything else.
    outcome = recipe.run_job("unsure", prompt, owner="a")
    assert outcome["text"] == expected_answer(prompt) and outcome["attached"]
    assert runs_of(sales_emulator, before) == [outcome["run_id"]]


def test_celery_create_that_never_reached_mantyx_is_made_once(
    recipe: ModuleType, sales_emulator: LocalMantyx
) -> None:
    # The answer was lost and the server did nothing: the lookup finds no run, and
    # the next attempt makes the one run.
    before = set(sales_emulator.runs)
    prompt = "job unmade: west 5"
    sales_emulator.fail_next("POST", r"/agent-runs$", drop=True)
    with pytest.raises(recipe.mantyx_sync.APIConnectionError):
        recipe.run_job("unmade", prompt, owner="a")
    assert runs_of(sales_emulator, before) == []
    outcome = recipe.run_job("unmade", prompt, owner="a")
    assert outcome["text"] == expected_answer(prompt) and not outcome["attached"]
    assert runs_of(sales_emulator, before) == [outcome["run_id"]]


def test_celery_redis_error_after_the_run_started_hands_it_over(
    recipe: ModuleType, sales_emulator: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 29: recording the run id failed; the dropped handle's finalizer cancelled
    # the run, and the job's next attempt attached to a cancelled run.
    before = set(sales_emulator.runs)
    prompt = "job handed: south 5"
    record = recipe.store.set

    def redis_down_for_run_ids(key: str, value: Any, **options: Any) -> Any:
        if key.endswith(":run") and value != recipe.STARTING:
            raise recipe.redis.ConnectionError("Redis went away")
        return record(key, value, **options)

    monkeypatch.setattr(recipe.store, "set", redis_down_for_run_ids)
    try:
        recipe.run_job("handed", prompt, owner="a")
    except recipe.redis.ConnectionError:
        pass  # Celery retries the task
    else:
        raise AssertionError("the Redis error was swallowed")
    monkeypatch.undo()
    gc.collect()  # a handle dropped without close() would cancel its run now
    (run_id,) = runs_of(sales_emulator, before)
    assert cancel_requests(sales_emulator, run_id) == []
    outcome = recipe.run_job("handed", prompt, owner="a")
    assert outcome == {
        "run_id": run_id,
        "text": expected_answer(prompt),
        "attached": True,
        "worker": "a",
    }


def test_celery_sweep_skips_an_entry_that_is_not_a_message(
    recipe: ModuleType, seen: LogSeen
) -> None:
    # Issue 29: one non-JSON entry made every later sweep of the worker raise.
    recipe.submit("job stray: north 5", job_key="stray")
    recipe.store.delete("celery")  # taken by a worker that died before recording it
    recipe.store.rpush("celery", "not json", json.dumps(["a list", "not a message"]))
    recipe.store.hset("unacked", mapping={"t1": "{broken", "t2": json.dumps({"no": "list"})})
    later = time.time() + recipe.VISIBILITY_TIMEOUT_S + 60
    assert recipe.sweep(now=later) == ["stray"]
    skipped = [m for m in seen.messages if "not a Celery message" in m]
    assert len(skipped) == 4
    assert not [m for m in skipped if "not json" in m or "{broken" in m]  # never their text


def test_celery_prompt_is_kept_only_while_the_job_is_open(
    recipe: ModuleType, sales_emulator: LocalMantyx
) -> None:
    recipe.submit("job kept: north 5", job_key="kept")
    recipe.submit("job dropped: south 5", job_key="dropped")
    assert recipe.store.get("mantyx:job:kept:prompt") == "job kept: north 5"
    assert recipe.run_job("kept", "job kept: north 5", owner="a")["text"]
    recipe.cancel_job("dropped")
    for key in ("kept", "dropped"):
        assert not recipe.store.exists(f"mantyx:job:{key}:prompt"), key
        assert recipe.store.exists(f"mantyx:job:{key}:answer"), key
    assert recipe.store.zcard(recipe.JOBS) == 0
