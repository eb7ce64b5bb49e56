"""examples/recipes/celery_app.py: started as the README says, and its job logic against a
real Redis and the emulator -- a lost lease, a cancelled job, a run whose id was never
recorded (``pytest -k celery``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from types import ModuleType

import pytest
from fleet_support import (
    ROOT,
    JobThread,
    LoggedProcess,
    LogSeen,
    SalesModel,
    expected_answer,
    orphans_reaped,
    runs_of,
    tool_posts,
)
from recipe_support import cancel_requests, recipe_env

from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process groups, /proc"
)
for module in ("celery", "redis"):
    pytest.importorskip(module, reason="needs celery[redis]: pip install --group test")


def test_celery_recipe_imports_under_the_readme_name(sales_emulator: LocalMantyx) -> None:
    # `celery -A examples.recipes.celery_app worker`, from the repository root.
    env = recipe_env(sales_emulator, REDIS_URL="redis://127.0.0.1:9/0")
    env.pop("PYTHONPATH", None)
    code = "import examples.recipes.celery_app as m; print(m.app.main, m.run_agent.name)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mantyx_jobs", "mantyx.run_agent"]


def test_celery_readme_commands_run_jobs(sales_emulator: LocalMantyx, redis_url: str) -> None:
    env = recipe_env(sales_emulator, REDIS_URL=redis_url)
    prompts = ["job a: north 5", "job b: south 7, east 6"]
    with orphans_reaped():
        # Exactly the README's command (its banner ends with the queues it reads).
        worker = LoggedProcess(
            ["celery", "-A", "examples.recipes.celery_app", "worker"],
            env,
            ready=r"\[queues\]",
        )
        try:
            done = subprocess.run(
                [sys.executable, "examples/recipes/celery_app.py", *prompts],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
        finally:
            worker.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    for prompt in prompts:
        assert f"{prompt}\n  [celery@" in done.stdout
        assert f"] {expected_answer(prompt)}\n" in done.stdout


def test_celery_job_with_a_lost_lease_stops_answering_its_calls(
    recipe: ModuleType, sales_emulator: LocalMantyx, sales_model: SalesModel, seen: LogSeen
) -> None:
    before = set(sales_emulator.runs)
    prompt = "job fenced: north 15"
    first = JobThread(recipe, "fenced", prompt, owner="a")
    (run_id,) = sales_model.wait_until(lambda: set(sales_model.in_flight) - before, 10)
    # The first worker stalls past its lease (here: someone else holds the key).
    lease = "mantyx:job:fenced:lease"
    recipe.store.set(lease, "thief", px=60_000)
    seen.wait_for("lease lost")
    second = JobThread(recipe, "fenced", prompt, owner="b")
    seen.wait_for("another worker follows its run; waiting")
    recipe.store.delete(lease)  # the lapse: whoever asks next follows the run
    outcome = second.result()
    assert first.result() == outcome
    assert outcome["text"] == expected_answer(prompt) and outcome["attached"]
    # The call the first worker was running when it lost the lease was answered
    # once, by the next follower; the first one's late answer was never sent.
    assert runs_of(sales_emulator, before) == [run_id]
    (call,) = sales_emulator.runs[run_id].tool_results
    assert tool_posts(sales_emulator)[(run_id, call)] == 1
    assert cancel_requests(sales_emulator, run_id) == []


def test_celery_cancel_job_cancels_its_run(
    recipe: ModuleType, sales_emulator: LocalMantyx, sales_model: SalesModel
) -> None:
    before = set(sales_emulator.runs)
    job = JobThread(recipe, "cancelled", "job cancelled: west 20", owner="a")
    (run_id,) = sales_model.wait_until(lambda: set(sales_model.in_flight) - before, 10)
    recipe.cancel_job("cancelled")
    outcome = job.result()
    assert outcome["code"] == "cancelled" and outcome["run_id"] == run_id
    assert sales_emulator.runs[run_id].status == "cancelled"
    assert cancel_requests(sales_emulator, run_id)  # by cancel_job, and maybe by the job too
    # Later deliveries of the job return the same outcome without a run.
    assert recipe.run_job("cancelled", "job cancelled: west 20", owner="b") == outcome
    assert runs_of(sales_emulator, before) == [run_id]


def test_celery_job_cancelled_before_it_starts_never_runs(
    recipe: ModuleType, sales_emulator: LocalMantyx
) -> None:
    before = set(sales_emulator.runs)
    recipe.cancel_job("early")
    outcome = recipe.run_job("early", "job early: east 5", owner="a")
    assert outcome["code"] == "cancelled"
    assert runs_of(sales_emulator, before) == []


def test_celery_run_created_by_a_worker_that_died_before_recording_it_is_found(
    recipe: ModuleType, sales_emulator: LocalMantyx
) -> None:
    # The worker died after MANTYX created the run and before Redis held its id:
    # the job key on the run's metadata finds it, so no second run is started.
    before = set(sales_emulator.runs)
    prompt = "job orphan: south 5"
    spec = recipe.agent.spec.replace(metadata={"job": "orphan"})
    recipe.client.runs.start(spec, prompt).close(cancel=False)
    recipe.store.set("mantyx:job:orphan:run", recipe.STARTING)
    outcome = recipe.run_job("orphan", prompt, owner="b")
    assert outcome["text"] == expected_answer(prompt) and outcome["attached"]
    assert runs_of(sales_emulator, before) == [outcome["run_id"]]


def test_celery_same_job_key_runs_once(recipe: ModuleType, sales_emulator: LocalMantyx) -> None:
    before = set(sales_emulator.runs)
    first = recipe.run_job("daily-report", "job daily: north 5", owner="a")
    again = recipe.run_job("daily-report", "job daily: north 5", owner="b")
    assert again == first and first["text"] == expected_answer("job daily: north 5")
    assert runs_of(sales_emulator, before) == [first["run_id"]]


def test_celery_sweep_queues_again_a_job_the_broker_lost(recipe: ModuleType) -> None:
    def queued() -> list[str]:
        return [json.loads(m)["headers"]["id"] for m in recipe.store.lrange("celery", 0, -1)]

    recipe.submit("job lost: north 5", job_key="lost")
    later = time.time() + recipe.VISIBILITY_TIMEOUT_S + 60
    assert recipe.sweep() == []  # just submitted
    assert recipe.sweep(now=later) == []  # still queued
    # A worker took the message off the queue and died before recording it.
    recipe.store.delete("celery")
    recipe.store.set("mantyx:job:lost:lease", "w1@host:x")
    assert recipe.sweep(now=later) == []  # a worker follows it
    recipe.store.delete("mantyx:job:lost:lease")
    assert recipe.sweep(now=later) == ["lost"]
    assert queued() == ["lost"]
    assert recipe.sweep(now=later) == []  # queued again once, not at every sweep
    # Once answered, the job is forgotten.
    recipe.store.delete("celery")
    outcome = recipe.run_job("lost", "job lost: north 5", owner="w2")
    assert outcome["text"] == expected_answer("job lost: north 5")
    assert recipe.sweep(now=later + 3600) == [] and queued() == []
    assert recipe.store.zcard(recipe.JOBS) == 0
