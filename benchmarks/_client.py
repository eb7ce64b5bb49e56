"""The client side of each benchmark, run in its own process per variant.

``python -m benchmarks._client '<json job>'`` runs one workload with one
variant (``ours``, ``raw`` or ``official``) against an already running
emulator and prints one JSON line: the client-side figures and the
process's peak RSS. Only the variant's own client is imported, so the peak
RSS is that client's footprint (plus the interpreter), never the server's.

The first run of every job is a warm-up whose figures are dropped.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["main"]

SYSTEM = "You are a benchmark agent."
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
SLEEPY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"i": {"type": "integer"}},
    "required": ["i"],
    "additionalProperties": False,
}

Runner = Callable[[], dict[str, float]]


class _Span:
    """Counts events and times the first to the last one (what streaming measures).

    ``hold``, when set (the swarm benchmark), is called on the first event of
    every run: it parks the run there, its stream open, until all are open.
    """

    hold: Callable[[], None] | None = None

    def __init__(self) -> None:
        self.count = 0
        self.first = self.first_cpu = 0.0

    def tick(self) -> None:
        if self.count == 0:
            self.first, self.first_cpu = time.perf_counter(), time.process_time()
            if _Span.hold is not None:
                _Span.hold()
        self.count += 1

    def result(self) -> dict[str, float]:
        # CPU time too (the process's, every thread): the wall span also holds the
        # server's pace and whatever else the machine runs.
        return {
            "events": float(self.count),
            "span": time.perf_counter() - self.first,
            "cpu": time.process_time() - self.first_cpu,
        }


def _sleep_seconds(job: dict[str, Any]) -> float:
    return float(job.get("sleep", 0.3))


# --- one runner factory per variant: each returns "do one run, return events seen" ---


def _ours(
    job: dict[str, Any], package: Any = None, **options: Any
) -> tuple[Runner, Callable[[], None]]:
    if package is None:
        import mantyx_sync as package
    mantyx_sync = package  # this tree's client, or (``_beside``) another's

    client = mantyx_sync.Client(
        job["api_key"], workspace=job["workspace"], base_url=job["base_url"], **options
    )
    bench = job["bench"]
    tools: list[Any] = []
    if bench in ("roundtrip", "scale", "thousand"):
        tools = [
            mantyx_sync.define_local_tool(
                name="noop",
                description="Do nothing.",
                parameters=EMPTY_SCHEMA,
                execute=lambda args: "ok",
            )
        ]
    elif bench == "fanout":
        pause = _sleep_seconds(job)

        def sleepy(args: dict[str, Any]) -> str:
            time.sleep(pause)  # the workload itself: a slow handler
            return str(args["i"])

        tools = [
            mantyx_sync.define_local_tool(
                name="sleepy",
                description="Sleep a while.",
                parameters=SLEEPY_SCHEMA,
                execute=sleepy,
            )
        ]
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=tools)

    if bench == "thousand":

        def run_checked() -> dict[str, float]:
            # Every event once and in order, and the run's tool call answered.
            span, seqs = _Span(), []
            with agent.stream("go") as run:
                for event in run:
                    span.tick()
                    seqs.append(event.seq)
                answered = run.result is not None and run.result.text.startswith("w0")
            gaps = len(set(range(1, max(seqs) + 1)) - set(seqs)) + len(seqs) - len(set(seqs))
            return {**span.result(), "lost": float(gaps), "unanswered": float(not answered)}

        return run_checked, client.close

    if bench in ("stream", "swarm"):

        def run_stream() -> dict[str, float]:
            span = _Span()
            with agent.stream("go") as run:
                for _ in run:
                    span.tick()
            return span.result()

        return run_stream, client.close

    def run_once() -> dict[str, float]:
        return {"events": float(len(agent.run("go").events))}

    return run_once, client.close


def _beside(job: dict[str, Any]) -> tuple[Runner, Callable[[], None]]:
    """``ours`` with the ``--beside`` checkout's client (renamed ``mantyx_beside``)."""
    import importlib

    from benchmarks import BESIDE_PACKAGE, BESIDE_TREE

    sys.path.insert(0, os.environ[BESIDE_TREE])
    return _ours(job, importlib.import_module(BESIDE_PACKAGE))


def _traced(job: dict[str, Any]) -> tuple[Runner, Callable[[], None]]:
    """``ours`` with tracing on: OpenTelemetry's SDK, every span sampled and
    handed to an exporter that drops it (what tracing costs the client alone)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Drop()))
    return _ours(job, tracer_provider=provider)


def _official(job: dict[str, Any]) -> tuple[Runner, Callable[[], None]]:
    from mantyx import MantyxClient, define_local_tool

    client = MantyxClient(
        api_key=job["api_key"], workspace_slug=job["workspace"], base_url=job["base_url"]
    )
    bench = job["bench"]
    tools: list[Any] = []
    if bench in ("roundtrip", "scale"):
        tools = [
            define_local_tool(
                name="noop",
                description="Do nothing.",
                parameters=EMPTY_SCHEMA,
                execute=lambda args: "ok",
            )
        ]
    elif bench == "fanout":
        pause = _sleep_seconds(job)

        def sleepy(args: dict[str, Any]) -> str:
            time.sleep(pause)  # the workload itself: a slow handler
            return str(args["i"])

        tools = [
            define_local_tool(
                name="sleepy",
                description="Sleep a while.",
                parameters=SLEEPY_SCHEMA,
                execute=sleepy,
            )
        ]

    if bench in ("stream", "swarm"):

        def run_stream() -> dict[str, float]:
            span = _Span()
            for _ in client.stream_agent(system_prompt=SYSTEM, prompt="go"):
                span.tick()
            return span.result()

        return run_stream, client.close

    def run_once() -> dict[str, float]:
        events = client.run_agent(system_prompt=SYSTEM, prompt="go", tools=tools).events
        return {"events": float(len(events))}

    return run_once, client.close


def _raw(job: dict[str, Any]) -> tuple[Runner, Callable[[], None]]:
    from benchmarks._raw import RawClient

    return _baseline(job, RawClient(job["base_url"], job["api_key"], job["workspace"]))


def _floor(job: dict[str, Any]) -> tuple[Runner, Callable[[], None]]:
    from benchmarks._floor import FloorClient

    return _baseline(job, FloorClient(job["base_url"], job["api_key"], job["workspace"]))


def _baseline(job: dict[str, Any], client: Any) -> tuple[Runner, Callable[[], None]]:
    spec: dict[str, Any] = {"systemPrompt": SYSTEM, "prompt": "go"}
    bench = job["bench"]
    if bench in ("roundtrip", "scale"):
        spec["tools"] = [
            {
                "kind": "local",
                "name": "noop",
                "description": "Do nothing.",
                "parameters": EMPTY_SCHEMA,
            }
        ]
    elif bench == "fanout":
        spec["tools"] = [
            {
                "kind": "local",
                "name": "sleepy",
                "description": "Sleep a while.",
                "parameters": SLEEPY_SCHEMA,
            }
        ]
    pause = _sleep_seconds(job)

    def handler(name: str, args: dict[str, Any]) -> str:
        if name == "sleepy":
            time.sleep(pause)  # the workload itself: a slow handler
            return str(args["i"])
        return "ok"

    if bench in ("stream", "swarm"):

        def run_stream() -> dict[str, float]:
            span = _Span()
            client.run(spec, handler, on_event=lambda envelope: span.tick())
            return span.result()

        return run_stream, client.close

    def run_once() -> dict[str, float]:
        return {"events": float(client.run(spec, handler))}

    return run_once, client.close


_VARIANTS = {
    "ours": _ours,
    "beside": _beside,
    "traced": _traced,
    "official": _official,
    "raw": _raw,
    "floor": _floor,
}


def _timed_runs(run: Runner, reps: int) -> list[dict[str, float]]:
    out = []
    for _ in range(reps):
        started = time.perf_counter()
        figures = run()
        figures["wall"] = time.perf_counter() - started
        out.append(figures)
    return out


def _scale(job: dict[str, Any], run: Runner) -> dict[str, dict[str, list[float]]]:
    """Round trips per second and this process's CPU µs per round trip, per level."""
    levels = [int(n) for n in job["levels"]]
    per_run = int(job["turns"])
    rates: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for level in levels:
        rates[str(level)], cpu[str(level)] = [], []
        for _ in range(int(job["reps"])):
            cpu_before = time.process_time()  # every thread of this process
            wall = _concurrent(run, level)
            trips = level * per_run
            rates[str(level)].append(trips / wall)
            cpu[str(level)].append((time.process_time() - cpu_before) / trips * 1e6)
    return {"rate": rates, "cpu_us": cpu}


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _swarm(run: Runner, level: int) -> dict[str, float]:
    """``level`` runs streaming at once from as many threads: memory and threads per run.

    Every run is held at its first event (its stream open) until all ``level``
    are; then resident memory and threads are sampled, compared with the
    process before the runs started (after the warm-up run), and the runs are
    let go to read to their end.
    """
    gc.collect()
    rss_before = _status_kib("VmRSS")
    threads_before = _status_kib("Threads")
    all_open = threading.Barrier(level + 1, timeout=120)
    release = threading.Barrier(level + 1, timeout=120)

    def hold() -> None:
        all_open.wait()
        release.wait()

    _Span.hold = hold
    try:
        errors: list[BaseException] = []
        outcomes: list[dict[str, float]] = []

        def worker() -> None:
            try:
                outcomes.append(run())
            except BaseException as exc:  # reported to the parent below
                errors.append(exc)
                all_open.abort()
                release.abort()

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(level)]
        for thread in threads:
            thread.start()
        try:
            all_open.wait()
        except threading.BrokenBarrierError:
            raise RuntimeError(f"swarm: not every run opened its stream: {errors[:1]}") from None
        rss_open = _status_kib("VmRSS")
        threads_open = _status_kib("Threads")
        tool_workers = sum(1 for t in threading.enumerate() if t.name.startswith("mantyx-tool"))
        released = time.perf_counter()
        release.wait()
        for thread in threads:
            thread.join(timeout=300)
            if thread.is_alive():
                raise RuntimeError("a swarm worker did not finish within 300 s")
        if errors:
            raise errors[0]
    finally:
        _Span.hold = None
    return {
        "rss_kib_per_run": (rss_open - rss_before) / level,
        # the caller's own thread counts: 1.0 means no thread beyond it
        "threads_per_run": (threads_open - threads_before) / level,
        "tool_workers": float(tool_workers),
        "runs_done": float(len(outcomes)),
        "finish_s": time.perf_counter() - released,
        "events": sum(o["events"] for o in outcomes),
        "lost": sum(o.get("lost", 0.0) for o in outcomes),
        "unanswered": sum(o.get("unanswered", 0.0) for o in outcomes),
    }


def _concurrent(run: Runner, level: int) -> float:
    gate = threading.Barrier(level + 1, timeout=60)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            gate.wait()
            run()
        except BaseException as exc:  # reported to the parent below
            errors.append(exc)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(level)]
    for thread in threads:
        thread.start()
    gate.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join(timeout=300)
        if thread.is_alive():
            raise RuntimeError("a scale worker did not finish within 300 s")
    if errors:
        raise errors[0]
    return time.perf_counter() - started


def _peak_rss_kib() -> int:
    # VmHWM belongs to this process's own address space. ru_maxrss would not
    # do: Linux carries the parent's high-water mark across fork+exec, and
    # the parent holds the emulator.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _rounds(job: dict[str, Any]) -> dict[str, Any]:
    """Every variant of ``job["variants"]`` in this one process, one run each per
    round, the order turned by one each round: a round takes about a second, so
    its variants see this machine at the same speed, which a process per variant
    (seconds apart) does not. Throughput only: peak RSS is then no one's own."""
    names = list(job["variants"])
    runners = {name: _VARIANTS[name]({**job, "variant": name}) for name in names}
    ran = list(names)  # every run in order, for a server that tells runs apart
    try:
        for run, _ in runners.values():
            run()  # warm-up
        rounds = []
        for n in range(int(job["rounds"])):
            order = names[n % len(names) :] + names[: n % len(names)]
            rounds.append({name: _timed_runs(runners[name][0], 1)[0] for name in order})
            ran += order
    finally:
        for _, close in runners.values():
            close()
    return {"bench": job["bench"], "rounds": rounds, "ran": ran}


def main(argv: list[str]) -> int:
    """Run the job given as JSON in ``argv[0]``; print one JSON line."""
    job = json.loads(argv[0])
    if "variants" in job:
        print(json.dumps(_rounds(job)), flush=True)
        return 0
    run, close = _VARIANTS[job["variant"]](job)
    try:
        run()  # warm-up: connections, imports done lazily, caches
        result: dict[str, Any] = {"variant": job["variant"], "bench": job["bench"]}
        if job["bench"] == "scale":
            result["scale"] = _scale(job, run)
        elif job["bench"] in ("swarm", "thousand"):
            result["swarm"] = [_swarm(run, int(job["level"])) for _ in range(int(job["reps"]))]
        else:
            result["runs"] = _timed_runs(run, int(job["reps"]))
    finally:
        close()
    result["maxrss_kib"] = _peak_rss_kib()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
