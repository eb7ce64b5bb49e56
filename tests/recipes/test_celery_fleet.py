"""examples/recipes/celery_app.py on a real fleet: redis-server, two prefork ``celery worker``
processes, the emulator over HTTP; one worker killed like a machine (``pytest -k celery``)."""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from typing import Any

import pytest
from fleet_support import (
    LoggedProcess,
    SalesModel,
    expected_answer,
    fresh_recipe,
    live_members,
    orphans_reaped,
    start_worker,
    tool_posts,
)
from recipe_support import recipe_env

from mantyx_sync.testing import LocalMantyx

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups, /proc"),
    pytest.mark.timeout(300),
]

JOBS = 40
REGIONS = ("north", "south", "east", "west", "central")


def _prompts(count: int, seed: int = 24) -> list[str]:
    """Jobs of one or two calls of 0.5-2 s each (5-20 days at 0.1 s a day)."""
    rng = random.Random(seed)
    jobs = []
    for i in range(count):
        regions = rng.sample(REGIONS, rng.randint(1, 2))
        jobs.append(f"job {i}: " + ", ".join(f"{r} {rng.randint(5, 20)}" for r in regions))
    return jobs


def _followed_by(recipe: Any, task_ids: list[str], worker: str) -> dict[str, str]:
    """Run id -> task id of the jobs whose run ``worker`` follows now."""
    runs = recipe.store.mget([f"mantyx:job:{t}:run" for t in task_ids])
    leases = recipe.store.mget([f"mantyx:job:{t}:lease" for t in task_ids])
    return {
        run: task
        for task, run, lease in zip(task_ids, runs, leases, strict=True)
        if run and run != recipe.STARTING and lease and lease.startswith(f"{worker}@")
    }


def _check_every_call_answered_once(server: LocalMantyx, run_ids: set[str]) -> None:
    posts = tool_posts(server)
    for run_id in run_ids:
        run = server.runs[run_id]
        assert run.status == "succeeded", (run_id, run.status)
        calls = [e["data"]["toolUseId"] for e in run.events if e["type"] == "local_tool_call"]
        assert calls and set(calls) == set(run.tool_results), run_id
        assert [posts.get((run_id, call)) for call in calls] == [1] * len(calls), run_id


def _worker_pids(server: LocalMantyx, run_id: str) -> set[int]:
    answers = server.runs[run_id].tool_results.values()
    return {json.loads(answer["result"])["worker_pid"] for answer in answers}


def test_celery_fleet_survives_a_worker_killed_while_its_tools_run(
    sales_emulator: LocalMantyx, sales_model: SalesModel, redis_url: str
) -> None:
    recipe = fresh_recipe(sales_emulator, redis_url)
    recipe.store.flushall()
    before = set(sales_emulator.runs)
    threads_before = set(threading.enumerate())
    env = recipe_env(
        sales_emulator, REDIS_URL=redis_url, JOB_VISIBILITY_TIMEOUT="6", JOB_LEASE_SECONDS="3"
    )
    prompts = _prompts(JOBS)
    workers: list[LoggedProcess] = []
    with orphans_reaped():
        try:
            w1 = start_worker("w1", env, concurrency=4)
            workers.append(w1)
            w2 = start_worker("w2", env, concurrency=4)
            workers.append(w2)
            started = time.monotonic()
            results = [recipe.run_agent.delay(prompt) for prompt in prompts]
            ids = [r.id for r in results]

            # Kill w1 (main process and pool together) while two of its jobs have calls out.
            def w1_busy() -> dict[str, str] | None:
                followed = _followed_by(recipe, ids, "w1")
                out = {run: task for run, task in followed.items() if run in sales_model.in_flight}
                return out if len(out) >= 2 else None

            killed = sales_model.wait_until(w1_busy, 60)
            w1.kill()
            assert w1.proc.returncode == -9
            w2_pids = set(live_members(w2.pgid))
            outcomes = [r.get(timeout=180) for r in results]
            elapsed = time.monotonic() - started
        finally:
            for worker in workers:
                worker.stop()
            recipe.app.close()
            recipe.store.close()
            recipe.client.close()

    # Every job: the right answer, one run, each call answered exactly once.
    assert [o.get("text") for o in outcomes] == [expected_answer(p) for p in prompts]
    runs = set(sales_emulator.runs) - before
    assert len(runs) == JOBS
    assert {o["run_id"] for o in outcomes} == runs
    _check_every_call_answered_once(sales_emulator, runs)
    # The jobs w1 died in came back through the visibility timeout to w2, which
    # attached to their runs and answered the calls w1 had left.
    for run_id in killed:
        (outcome,) = [o for o in outcomes if o["run_id"] == run_id]
        assert outcome["attached"] and outcome["worker"].startswith("w2@"), outcome
        assert _worker_pids(sales_emulator, run_id) <= w2_pids
    assert elapsed < 180
    # Nothing left behind: no process of either worker, no thread here.
    for worker in workers:
        assert live_members(worker.pgid) == [], worker.args
    assert set(threading.enumerate()) - threads_before == set()
    sys.stderr.write(f"\nfleet of {JOBS} jobs, one worker killed: {elapsed:.1f} s\n")


def test_celery_job_redelivered_while_its_worker_lives_is_answered_once(
    sales_emulator: LocalMantyx, sales_model: SalesModel, redis_url: str
) -> None:
    recipe = fresh_recipe(sales_emulator, redis_url)
    recipe.store.flushall()
    before = set(sales_emulator.runs)
    # The job (4.5 s of tools) outlives the visibility timeout (2 s): Redis hands
    # it to the other worker while the first still follows its run.
    env = recipe_env(
        sales_emulator, REDIS_URL=redis_url, JOB_VISIBILITY_TIMEOUT="2", JOB_LEASE_SECONDS="3"
    )
    prompt = "job long: north 45, south 30"
    workers: list[LoggedProcess] = []
    with orphans_reaped():
        try:
            workers.append(start_worker("w1", env, concurrency=1))
            workers.append(start_worker("w2", env, concurrency=1))
            result = recipe.run_agent.delay(prompt)
            following = sales_model.wait_until(
                lambda: (
                    _followed_by(recipe, [result.id], "w1")
                    or _followed_by(recipe, [result.id], "w2")
                ),
                60,
            )
            (run_id,) = following
            first_name = recipe.store.get(f"mantyx:job:{result.id}:lease").split("@")[0]
            first, second = workers if first_name == "w1" else workers[::-1]
            first_pids = set(live_members(first.pgid))
            outcome = result.get(timeout=60)
            first.wait_for(rf"{result.id}\] succeeded", 30)
        finally:
            for worker in workers:
                worker.stop()
            recipe.app.close()
            recipe.store.close()
            recipe.client.close()

    assert outcome["text"] == expected_answer(prompt)
    assert outcome["worker"].startswith(f"{first_name}@") and not outcome["attached"]
    assert set(sales_emulator.runs) - before == {run_id}
    _check_every_call_answered_once(sales_emulator, {run_id})
    assert _worker_pids(sales_emulator, run_id) <= first_pids
    # The other worker did get the job while the first one ran it, and waited.
    second.wait_for(rf"{result.id}\] received", 0)
    second.wait_for("another worker follows its run; waiting", 0)
