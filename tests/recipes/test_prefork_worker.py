"""The prefork recipe: a Client made at import, workers forked, tools answered in each worker."""

from __future__ import annotations

import collections
import multiprocessing
import os
import subprocess
import sys
from types import ModuleType

import pytest
from recipe_support import RECIPES, import_recipe

from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)

WORKERS = 3
PROMPTS = [f"How many units of {sku} are in stock?" for sku in ("A-1", "A-2", "A-3", "B-1")] * 2


@pytest.fixture(scope="module")
def recipe(emulator: LocalMantyx) -> ModuleType:
    """The recipe imported as a worker module: its Client is built here, before any fork."""
    return import_recipe("prefork_worker", emulator)


def test_forked_workers_run_agents_and_answer_each_tool_call_once(
    recipe: ModuleType, emulator: LocalMantyx
) -> None:
    emulator.clear_requests()
    # The parent uses its client first, so forked children inherit a live pool.
    assert recipe.agent.run("How many units of A-1 are in stock?").text
    before = set(emulator.runs)
    with multiprocessing.get_context("fork").Pool(WORKERS) as pool:
        outcomes = pool.map(recipe.run_task, PROMPTS, chunksize=1)
        pool.close()
        pool.join()

    by_worker = collections.defaultdict(list)
    for outcome in outcomes:
        assert "error" not in outcome, outcome
        by_worker[outcome["worker_pid"]].append(outcome)
    assert os.getpid() not in by_worker
    assert 1 <= len(by_worker) <= WORKERS

    runs = {run_id: emulator.runs[run_id] for run_id in set(emulator.runs) - before}
    assert sorted(o["run_id"] for o in outcomes) == sorted(runs)
    posts = collections.Counter(
        (r.path.split("/")[-2], (r.json or {}).get("toolUseId"))
        for r in emulator.requests
        if r.method == "POST" and r.path.endswith("/tool-results")
    )
    for pid, done in by_worker.items():
        for outcome in done:
            run = runs[outcome["run_id"]]
            assert run.status == "succeeded"
            calls = [e["data"] for e in run.events if e["type"] == "local_tool_call"]
            assert [c["name"] for c in calls] == ["stock_level"]
            tool_use_id = calls[0]["toolUseId"]
            assert posts[(run.id, tool_use_id)] == 1  # answered exactly once
            answer = run.tool_results[tool_use_id]["result"]
            # ...by the worker that ran the agent, not the parent.
            assert f'"worker_pid": {pid}' in answer
            assert f'"worker_pid": {pid}' in outcome["text"]


def test_a_failed_run_comes_back_as_data(recipe: ModuleType, emulator: LocalMantyx) -> None:
    from mantyx_sync.testing import Fail

    emulator.set_model([Fail("out of budget", code="budget_exceeded")])
    try:
        with multiprocessing.get_context("fork").Pool(1) as pool:
            (outcome,) = pool.map(recipe.run_task, ["How many of A-1?"])
    finally:
        emulator.set_model(None)
    assert "out of budget" in outcome["error"] and outcome["run_id"] in emulator.runs


def test_the_recipe_runs_offline_as_a_script(tmp_path: os.PathLike[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    proc = subprocess.run(
        [sys.executable, str(RECIPES / "prefork_worker.py")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "local MANTYX emulator" in proc.stderr
    answers = [line for line in proc.stdout.splitlines() if line.startswith("  Stock check:")]
    assert len(answers) == 4
    assert any('"sku": "A-1", "units": 12' in line for line in answers)
    workers = {line.split("]")[0] for line in proc.stdout.splitlines() if line.startswith("[")}
    assert str(os.getpid()) not in "".join(workers)
