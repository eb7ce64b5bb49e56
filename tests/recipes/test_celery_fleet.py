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
    poll_until,
    sleeping_threads,
    start_worker,
    tool_posts,
)
from recipe_support import recipe_env

from mantyx_sync.testing import LocalMantyx

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups, /proc"),
    pytest.mark.timeout(300),
]
for module in ("celery", "redis"):
    pytest.importorskip(module, reason="needs celery[redis]: pip install --group test")

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


def _followed_by(recipe: Any, model: SalesModel, worker: str) -> dict[str, str]:
    """Run id -> job key of the runs whose calls are out and whose job ``worker`` holds.

    Called as the model steps: the job key comes with the run (its metadata)
    and the lease was taken before the run was created.
    """
    jobs = dict(model.in_flight)
    leases = recipe.store.mget([f"mantyx:job:{job}:lease" for job in jobs.values()])
    return {
        run: job
        for (run, job), lease in zip(jobs.items(), leases, strict=True)
        if lease and lease.startswith(f"{worker}@")
    }


def _unanswered(server: LocalMantyx, run_id: str) -> set[str]:
    run = server.runs[run_id]
    calls = {e["data"]["toolUseId"] for e in run.events if e["type"] == "local_tool_call"}
    return calls - set(run.tool_results)


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
            results = [recipe.submit(prompt) for prompt in prompts]
            answered = sales_model.answered

            # Once the fleet is well into the queue, kill w1 (main process and pool
            # together) while two of its jobs have calls out.
            def w1_busy() -> dict[str, str] | None:
                if sales_model.answered < answered + JOBS // 4:
                    return None
                busy = _followed_by(recipe, sales_model, "w1")
                return busy if len(busy) >= 2 else None

            sales_model.wait_until(w1_busy, 60)
            poll_until(lambda: sleeping_threads(w1.pgid) >= 2, 10, "w1's tools running")
            followed = _followed_by(recipe, sales_model, "w1")
            w1.kill()
            # Cut off in the middle: calls out that w1 never answered.
            killed = [run for run in followed if _unanswered(sales_emulator, run)]
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
    assert len(killed) >= 2
    for run_id in killed:
        (outcome,) = [o for o in outcomes if o["run_id"] == run_id]
        assert outcome["attached"] and outcome["worker"].startswith("w2@"), outcome
        assert _worker_pids(sales_emulator, run_id) & w2_pids, run_id
    assert elapsed < 180
    # Nothing left behind: no process of either worker, no thread here.
    for worker in workers:
        assert live_members(worker.pgid) == [], worker.args
    assert set(threading.enumerate()) - threads_before == set()
    requeued = sum("lost by the broker" in line for line in w2.lines)
    sys.stderr.write(
        f"\nfleet of {JOBS} jobs, one worker killed with {len(killed)} jobs' calls out: "
        f"{elapsed:.1f} s; jobs the broker lost, queued again: {requeued}\n"
    )


def test_celery_job_redelivered_while_its_worker_lives_is_answered_once(
    sales_emulator: LocalMantyx, redis_url: str
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
    workers: dict[str, LoggedProcess] = {}
    with orphans_reaped():
        try:
            for name in ("w1", "w2"):
                workers[name] = start_worker(name, env, concurrency=1)
            pids = {name: set(live_members(w.pgid)) for name, w in workers.items()}
            result = recipe.submit(prompt)
            outcome = result.get(timeout=60)
            first_name = outcome["worker"].split("@")[0]
            (second_name,) = set(workers) - {first_name}
            first, second = workers[first_name], workers[second_name]
            first.wait_for(rf"{result.id}\] succeeded", 30)
        finally:
            for worker in workers.values():
                worker.stop()
            recipe.app.close()
            recipe.store.close()
            recipe.client.close()

    assert outcome["text"] == expected_answer(prompt) and not outcome["attached"]
    run_id = outcome["run_id"]
    assert set(sales_emulator.runs) - before == {run_id}
    _check_every_call_answered_once(sales_emulator, {run_id})
    assert _worker_pids(sales_emulator, run_id) <= pids[first_name]
    # The other worker did get the job while the first one followed its run, and
    # waited for it instead of attaching.
    second.wait_for(rf"{result.id}\] received", 0)
    second.wait_for("another worker follows its run; waiting", 0)
