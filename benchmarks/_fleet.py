"""Rows 9 and 10: the Celery recipe (``examples/recipes/celery_app.py``) on real workers.

A redis-server on a free loopback port and the emulator (in this process)
serve ``celery -A examples.recipes.celery_app worker`` processes; every job is
the recipe's task: one run, one call of its ``sales_total`` tool (0.1 s per
day asked). Without Debian's ``redis-server`` or ``celery[redis]`` (the
``celery`` extra) both rows are skipped with a note.

* 9: one worker process, ``--pool threads -c N``, holding N jobs at once (each
  run's tool call out): that process's RSS and threads per run, against the
  same process idle after N warm-up jobs (so the pool's N threads exist).
  Beside it, a prefork pool process's own memory (PSS and RSS): with the
  prefork pool a process holds one run.
* 10: two prefork workers of 4 processes: jobs per minute, with a 0.5 s tool
  and with a tool that takes no time. Baseline: the same jobs on 8 threads of
  one process calling ``agent.run`` (no Celery, no Redis); ratio also to the
  ideal, 8 slots × 60 s / 0.5 s.

``python -m benchmarks._fleet '<json>'`` is that baseline's process.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from mantyx_sync.testing import LocalMantyx, ModelContext, Step, ToolCall, Turn

from . import python_path
from ._stats import Figure, Row, ratio

__all__ = ["fleet_rows"]

ROOT = Path(__file__).resolve().parent.parent
RECIPE = "examples.recipes.celery_app"
SLOTS = 8  # two workers of four prefork processes, and the baseline's threads
HOLD_DAYS = 60  # row 9: each held run's tool call lasts 6 s


class _Model:
    """Prompt ``"north 5"``: turn 0 calls ``sales_total(north, 5)``, turn 1 answers.

    Counts the runs whose call is out, for row 9 to sample while N are.
    """

    def __init__(self) -> None:
        self.out = 0
        self.changed = threading.Condition()

    def __call__(self, ctx: ModelContext) -> Step:
        with self.changed:
            self.out += 1 if ctx.turn == 0 else -1
            self.changed.notify_all()
        if ctx.turn == 0:
            region, days = ctx.prompt.split()
            return ToolCall("sales_total", {"region": region, "days": int(days)})
        return Turn("done")


def fleet_rows(hold: int, jobs: int, reps: int) -> tuple[list[Row], dict[str, Any], str | None]:
    """Rows 9 and 10, their raw figures, and a note when they had to be skipped."""
    problem = _missing()
    if problem is not None:
        return [], {}, f"Rows 9 and 10 skipped: {problem}."
    model = _Model()
    with _redis() as url, LocalMantyx(model=model) as server:
        env = {
            **os.environ,
            "REDIS_URL": url,
            "MANTYX_API_KEY": server.api_key,
            "MANTYX_WORKSPACE": server.workspace,
            "MANTYX_BASE_URL": server.base_url,
            "PYTHONPATH": python_path(client=True),
        }
        env.pop("MANTYX_LOG", None)
        recipe = _producer(env)
        try:
            raw = {"capacity": _capacity(recipe, env, model, hold, reps)}
            raw["throughput"] = _throughput(recipe, env, jobs, reps)
        finally:
            recipe.app.close()
            recipe.store.close()
            recipe.client.close()
    cap, through = raw["capacity"], raw["throughput"]
    rows = [
        Row(
            f"9 one worker process, {hold} runs at once",
            f"RSS per run (`--pool threads -c {hold}`)",
            Figure(tuple(cap["rss_kib_per_run"]), "KiB"),
            None,
            None,
            f"threads per run {Figure(tuple(cap['threads_per_run'])).show()} beside the "
            f"pool's own; a prefork "
            f"process (one run): PSS {Figure(tuple(cap['prefork_pss_mib'])).show()} MiB, "
            f"RSS {Figure(tuple(cap['prefork_rss_mib'])).show()} MiB",
        )
    ]
    for key, label in (("slow", "0.5 s tool"), ("noop", "no-op tool")):
        ours = Figure(tuple(through[key]["fleet"]), "jobs/min")
        threads = Figure(tuple(through[key]["threads"]), "jobs/min")
        ratios = [f"÷{SLOTS} threads {ratio(ours, threads) or 0:.2f}×"]
        if key == "slow":
            ratios.append(f"÷ideal {ours.median / (SLOTS * 60 / 0.5):.2f}×")
        rows.append(
            Row(
                f"10 two workers, {label}" if key == "slow" else f"10 … {label}",
                f"jobs per minute, {jobs} jobs, 2 × 4 prefork processes",
                ours,
                threads,
                None,
                ", ".join(ratios),
            )
        )
    return rows, raw, None


def _missing() -> str | None:
    if shutil.which("redis-server") is None:
        return "no redis-server (apt-get install redis-server)"
    for module in ("celery", "redis"):
        if importlib.util.find_spec(module) is None:
            return f'no {module} (pip install -e ".[celery]")'
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def _redis() -> Iterator[str]:
    import redis

    port = _free_port()
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, start_new_session=True)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        probe = redis.Redis.from_url(url)
        deadline = time.monotonic() + 30
        while True:
            try:
                probe.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        probe.close()
        yield url
    finally:
        _stop(proc)


def _producer(env: dict[str, str]) -> ModuleType:
    """The recipe imported here, to submit jobs as an application would."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        sys.modules.pop(RECIPE, None)
        return importlib.import_module(RECIPE)
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _worker(env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[bytes]]:
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        RECIPE,
        "worker",
        "--loglevel=WARNING",
        "--without-gossip",
    ]
    command += ["--without-mingle", "--without-heartbeat", *args]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            yield proc
        except BaseException:
            log.seek(0)
            sys.stderr.write(log.read().decode(errors="replace")[-3000:])
            raise
        finally:
            _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (a warm shutdown), then SIGKILL to what is left of the process group."""
    proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _status(pid: int, field: str, name: str = "status") -> int:
    """A ``kB`` (or count) field of ``/proc/<pid>/<name>``."""
    for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/{name}")


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _run_all(recipe: ModuleType, prompts: list[str]) -> list[dict[str, Any]]:
    from celery.result import ResultSet

    results = ResultSet([recipe.submit(prompt) for prompt in prompts])
    outcomes: list[dict[str, Any]] = results.join_native(timeout=600)
    failed = [o for o in outcomes if "error" in o]
    if failed:
        raise RuntimeError(f"{len(failed)} jobs failed: {failed[0]}")
    return outcomes


def _capacity(
    recipe: ModuleType, env: dict[str, str], model: _Model, hold: int, reps: int
) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {
        "rss_kib_per_run": [],
        "threads_per_run": [],
        "prefork_pss_mib": [],
        "prefork_rss_mib": [],
    }
    with _worker(env, "--pool=threads", f"--concurrency={hold}") as proc:
        _run_all(recipe, ["north 1"] * hold)  # proof the worker is up
        # The first round is a warm-up: quick jobs may leave the pool short of
        # `hold` threads, and a measured round must not count the pool's growth.
        for rep in range(reps + 1):
            rss, threads = _status(proc.pid, "VmRSS"), _status(proc.pid, "Threads")
            results = [recipe.submit(f"north {HOLD_DAYS}") for _ in range(hold)]
            with model.changed:
                if not model.changed.wait_for(lambda: model.out >= hold, timeout=60):
                    raise RuntimeError(f"only {model.out} of {hold} runs got their tool call")
            time.sleep(0.5)  # the calls reach the worker and start their threads
            if rep:
                found["rss_kib_per_run"].append((_status(proc.pid, "VmRSS") - rss) / hold)
                found["threads_per_run"].append((_status(proc.pid, "Threads") - threads) / hold)
            for result in results:
                result.get(timeout=600)
    with _worker(env, "--pool=prefork", "--concurrency=2") as proc:
        _run_all(recipe, ["north 0"] * 4)  # both pool processes have run one
        for child in _children(proc.pid):
            found["prefork_pss_mib"].append(_status(child, "Pss", "smaps_rollup") / 1024)
            found["prefork_rss_mib"].append(_status(child, "VmRSS") / 1024)
    return found


def _throughput(
    recipe: ModuleType, env: dict[str, str], jobs: int, reps: int
) -> dict[str, dict[str, list[float]]]:
    found: dict[str, dict[str, list[float]]] = {
        key: {"fleet": [], "threads": []} for key in ("slow", "noop")
    }
    prompts = {"slow": ["north 5"] * jobs, "noop": ["north 0"] * jobs}
    with contextlib.ExitStack() as workers:
        for name in ("a", "b"):
            workers.enter_context(
                _worker(env, "--pool=prefork", "--concurrency=4", f"--hostname={name}@%h")
            )
        seen: set[str] = set()
        for _ in range(20):  # warm-up until both workers answer
            seen |= {o["worker"] for o in _run_all(recipe, ["north 0"] * SLOTS)}
            if len(seen) == 2:
                break
        for _ in range(reps):
            for key, batch in prompts.items():
                started = time.perf_counter()
                _run_all(recipe, batch)
                found[key]["fleet"].append(len(batch) * 60 / (time.perf_counter() - started))
                found[key]["threads"].append(_baseline(env, batch))
    return found


def _baseline(env: dict[str, str], prompts: list[str]) -> float:
    job = json.dumps({"prompts": prompts})
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks._fleet", job],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the threads baseline failed:\n{proc.stderr[-3000:]}")
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["jobs_per_min"])


def main(argv: list[str]) -> int:
    """The baseline: the jobs in ``argv[0]`` on 8 threads calling ``agent.run``."""
    prompts = json.loads(argv[0])["prompts"]
    recipe = importlib.import_module(RECIPE)
    recipe.agent.run("north 0")  # warm-up
    with concurrent.futures.ThreadPoolExecutor(SLOTS) as pool:
        started = time.perf_counter()
        texts = list(pool.map(lambda prompt: recipe.agent.run(prompt).text, prompts))
        wall = time.perf_counter() - started
    assert texts == ["done"] * len(prompts), texts[:3]
    print(json.dumps({"jobs_per_min": len(prompts) * 60 / wall}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
