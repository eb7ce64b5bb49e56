"""Every benchmark, end to end: emulator up, client processes out, one table back.

The emulator (instrumented, see :mod:`benchmarks._server`) runs in this
process on 127.0.0.1; each client variant runs in its own process
(:mod:`benchmarks._client`), so the server never competes with a client for
the GIL and a client's peak RSS is its own. Variants are interleaved process
by process so slow drift of the machine hits every column alike.
"""

from __future__ import annotations

import compileall
import contextlib
import importlib.util
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from mantyx_sync.testing import ToolCall, Turn

from . import BESIDE_TREE, CLIENT_TREE, python_path
from ._fleet import fleet_rows
from ._server import ToolClock, start_timed_server
from ._stats import Figure, Row, format_table, paired_ratio, ratio

__all__ = [
    "Config",
    "Report",
    "external_server",
    "machine_description",
    "official_available",
    "run_suite",
]

ROOT = Path(__file__).resolve().parent.parent
_RUN_NUMBER = re.compile(r"^tu_(\d+)_\d+$")


@attrs.frozen(kw_only=True)
class Config:
    """Sizes and repetitions; :meth:`quick` is the smoke-test size."""

    roundtrip_turns: int = 200
    roundtrip_procs: int = 3  # rows 5 and 1t: a process per variant
    roundtrip_reps: int = 1
    roundtrip_rounds: int = 20  # row 1: every variant in one process
    fanout_calls: int = 16
    fanout_sleep: float = 0.3
    fanout_reps: int = 5
    stream_events: int = 20_000
    # Every variant once per round, in one process (see benchmarks._client._rounds).
    stream_rounds: int = 30
    import_reps: int = 15
    scale_levels: tuple[int, ...] = (1, 8, 32)
    scale_turns: int = 20
    scale_reps: int = 3
    cold_reps: int = 9
    swarm_runs: int = 200
    swarm_events: int = 200
    swarm_reps: int = 3
    thousand_runs: int = 1000
    thousand_events: int = 50
    fleet_hold: int = 32
    fleet_jobs: int = 80
    fleet_reps: int = 2
    official: bool = True
    only: frozenset[str] = frozenset()

    @classmethod
    def quick(cls, **overrides: Any) -> Config:
        """Tiny sizes: every code path, in seconds."""
        sizes: dict[str, Any] = dict(
            roundtrip_turns=5,
            roundtrip_procs=1,
            roundtrip_reps=1,
            roundtrip_rounds=2,
            fanout_calls=4,
            fanout_sleep=0.05,
            fanout_reps=1,
            stream_events=500,
            stream_rounds=2,
            import_reps=2,
            scale_levels=(1, 2),
            scale_turns=2,
            scale_reps=1,
            cold_reps=1,
            swarm_runs=4,
            swarm_events=20,
            swarm_reps=1,
            thousand_runs=8,
            thousand_events=5,
            fleet_hold=2,
            fleet_jobs=4,
            fleet_reps=1,
        )
        sizes.update(overrides)
        return cls(**sizes)

    def repeated(self, times: int) -> Config:
        """Every benchmark repeated ``times`` times as often: steadier medians on a
        machine whose speed drifts."""
        reps = [f.name for f in attrs.fields(Config) if f.name.endswith(("_reps", "_rounds"))]
        return attrs.evolve(self, **{name: getattr(self, name) * times for name in reps})

    def wants(self, name: str) -> bool:
        return not self.only or name in self.only


@attrs.define
class Report:
    """What :func:`run_suite` measured."""

    rows: list[Row] = attrs.field(factory=list)
    official_note: str | None = None
    raw: dict[str, Any] = attrs.field(factory=dict)
    machine: str = ""
    seconds: float = 0.0

    def table(self) -> str:
        """The results table, Markdown-compatible."""
        return format_table(self.rows, self.official_note)


def official_available() -> bool:
    """Whether the official SDK (``pip install mantyx-sdk``, import ``mantyx``) is installed."""
    return importlib.util.find_spec("mantyx") is not None


def machine_description() -> str:
    """nproc, CPU model, Python version and OS, on one line."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"nproc={os.cpu_count()}, CPU: {model}, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.system()} {platform.release()}"
    )


def _env(*, client: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path(client=client)
    env.pop(CLIENT_TREE, None)
    for name in ("MANTYX_LOG", "MANTYX_API_KEY", "MANTYX_WORKSPACE", "MANTYX_BASE_URL"):
        env.pop(name, None)
    return env


def _client_job(job: dict[str, Any], timeout: float = 600) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks._client", json.dumps(job)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"{job['variant']} {job['bench']} client failed (exit {proc.returncode}):\n"
            f"{proc.stderr[-3000:]}"
        )
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _by_run(clock: ToolClock) -> dict[int, dict[str, tuple[float, float | None]]]:
    runs: dict[int, dict[str, tuple[float, float | None]]] = defaultdict(dict)
    for tool_use_id, written in clock.written.items():
        match = _RUN_NUMBER.match(tool_use_id)
        if match is not None:
            runs[int(match.group(1))][tool_use_id] = (written, clock.posted.get(tool_use_id))
    return dict(runs)


def _counted_runs(clock: ToolClock) -> list[dict[str, tuple[float, float | None]]]:
    """Per-run timestamps of one client job, its first (warm-up) run dropped."""
    runs = _by_run(clock)
    return [runs[number] for number in sorted(runs)[1:]]


class _Suite:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.variants = ["ours", "floor", "raw"]
        self.official = config.official and official_available()
        if self.official:
            self.variants.append("official")
        # Rows 1 and 3 run every variant in one process: there, --beside adds
        # another checkout's client, for a ratio to it measured round by round.
        self.in_rounds = self.variants + (["beside"] if os.environ.get(BESIDE_TREE) else [])
        self.rows: list[Row] = []
        self.raw: dict[str, Any] = {}
        self.notes: list[str] = []

    def job(self, bench: str, variant: str, **extra: Any) -> dict[str, Any]:
        return {
            "bench": bench,
            "variant": variant,
            "base_url": self.server.base_url,
            "api_key": self.server.api_key,
            "workspace": self.server.workspace,
            **extra,
        }

    def run(self) -> None:
        self.server, self.clock = start_timed_server()
        try:
            if self.config.wants("roundtrip") or self.config.wants("memory"):
                self.roundtrip_and_memory()
            if self.config.wants("fanout"):
                self.fanout()
            if self.config.wants("stream"):
                self.stream()
            if self.config.wants("swarm"):
                self.swarm()
        finally:
            self.server.stop()
        if self.config.wants("scale"):
            self.scale()
        if self.config.wants("thousand"):
            self.thousand()
        if self.config.wants("coldstart"):
            self.cold_start()
        if self.config.wants("import"):
            self.imports()
        if self.config.wants("fleet"):
            cfg = self.config
            rows, self.raw["fleet"], note = fleet_rows(
                cfg.fleet_hold, cfg.fleet_jobs, cfg.fleet_reps
            )
            self.rows += rows
            self.notes += [note] if note else []

    # 1 and 5 -------------------------------------------------------------------

    def roundtrip_and_memory(self) -> None:
        cfg = self.config
        self.server.set_model(
            [Turn(tool_calls=[ToolCall("noop", {})]) for _ in range(cfg.roundtrip_turns)]
            + [Turn("done")]
        )
        overhead: dict[str, list[float]] = defaultdict(list)
        rss: dict[str, list[float]] = defaultdict(list)
        # Tracing on (row 1t) beside the rest, when OpenTelemetry's SDK is installed.
        traced = ["traced"] if self.config.wants("roundtrip") and _tracing_available() else []
        for _ in range(cfg.roundtrip_procs):
            for variant in self.variants + traced:
                self.clock.clear()
                result = _client_job(self.job("roundtrip", variant, reps=cfg.roundtrip_reps))
                for run in _counted_runs(self.clock):
                    trips = [p - w for w, p in run.values() if p is not None]
                    if len(trips) != cfg.roundtrip_turns:
                        raise RuntimeError(
                            f"{variant}: {len(trips)} of {cfg.roundtrip_turns} round trips answered"
                        )
                    overhead[variant].append(statistics.median(trips) * 1e6)
                rss[variant].append(result["maxrss_kib"] / 1024)
        self.raw["peak_rss_mib"] = dict(rss)
        alone = Figure(tuple(overhead["ours"]), "µs")  # a process to itself, as row 1t
        if self.config.wants("roundtrip"):
            # Row 1 itself: every variant in one process, round by round.
            self.clock.clear()
            job = self.job("roundtrip", "all", variants=self.in_rounds, rounds=cfg.roundtrip_rounds)
            ran = _client_job(job)["ran"]
            runs = _by_run(self.clock)
            if len(runs) != len(ran):
                raise RuntimeError(f"{len(runs)} runs seen by the server, {len(ran)} made")
            rounds: dict[str, list[float]] = defaultdict(list)
            warm = len(self.in_rounds)  # each variant's first run: a warm-up
            for variant, number in zip(ran[warm:], sorted(runs)[warm:], strict=True):
                trips = [p - w for w, p in runs[number].values() if p is not None]
                if len(trips) != cfg.roundtrip_turns:
                    raise RuntimeError(
                        f"{variant}: {len(trips)} of {cfg.roundtrip_turns} round trips answered"
                    )
                rounds[variant].append(statistics.median(trips) * 1e6)
            overhead.update(rounds)  # row 1's figures: one per round
        self.raw["roundtrip_us"] = dict(overhead)
        ours, base = Figure(tuple(overhead["ours"]), "µs"), Figure(tuple(overhead["raw"]), "µs")
        floor = Figure(tuple(overhead["floor"]), "µs")
        official = Figure(tuple(overhead["official"]), "µs") if self.official else None
        r_floor, r_base, r_off, r_beside = (
            paired_ratio(overhead["ours"], overhead[v])
            for v in ("floor", "raw", "official", "beside")
        )
        if self.config.wants("roundtrip"):
            self.rows.append(
                Row(
                    f"1 tool round-trip ({cfg.roundtrip_turns} turns)",
                    "overhead per round-trip (median)",
                    ours,
                    base,
                    official,
                    _ratios(
                        ("floor", r_floor),
                        ("raw", r_base),
                        ("official", r_off),
                        ("beside", r_beside),
                    ),
                    "≤1.3× floor, ≤0.8× official",
                    _verdict((r_floor, lambda r: r <= 1.3), (r_off, lambda r: r <= 0.8)),
                    floor=floor,
                )
            )
        if traced:
            on = Figure(tuple(overhead["traced"]), "µs")
            added = on.median - alone.median
            self.rows.append(
                Row(
                    "1t tool round-trip, tracing on",
                    "overhead per round-trip (median), OpenTelemetry SDK, spans dropped",
                    on,
                    alone,
                    None,
                    f"÷tracing off {ratio(on, alone):.2f}×, {added:+,.0f} µs per round trip",
                    "stated",
                    "yes",
                )
            )
        elif self.config.wants("roundtrip"):
            self.notes.append("row 1t skipped: opentelemetry-sdk is not installed")
        if self.config.wants("memory"):
            m_ours = Figure(tuple(rss["ours"]), "MiB")
            m_off = Figure(tuple(rss["official"]), "MiB") if self.official else None
            r_mem = ratio(m_ours, m_off)
            self.rows.append(
                Row(
                    "5 memory",
                    "peak RSS of the bench-1 process",
                    m_ours,
                    Figure(tuple(rss["raw"]), "MiB"),
                    m_off,
                    _ratios(("official", r_mem)),
                    "≤0.85× official",
                    _verdict((r_mem, lambda r: r <= 0.85)),
                    floor=Figure(tuple(rss["floor"]), "MiB"),
                )
            )

    # 2 -------------------------------------------------------------------------

    def fanout(self) -> None:
        cfg = self.config
        self.server.set_model(
            [
                Turn(tool_calls=[ToolCall("sleepy", {"i": i}) for i in range(cfg.fanout_calls)]),
                Turn("done"),
            ]
        )
        spans: dict[str, list[float]] = defaultdict(list)
        for variant in [v for v in self.variants if v not in ("raw", "floor")]:
            self.clock.clear()
            _client_job(self.job("fanout", variant, reps=cfg.fanout_reps, sleep=cfg.fanout_sleep))
            for run in _counted_runs(self.clock):
                posted = [p for _, p in run.values() if p is not None]
                if len(posted) != cfg.fanout_calls:
                    raise RuntimeError(f"{variant}: {len(posted)} of {cfg.fanout_calls} answered")
                first = min(w for w, _ in run.values())
                spans[variant].append((max(posted) - first) / cfg.fanout_sleep)
        self.raw["fanout_ratio"] = dict(spans)
        ours = Figure(tuple(spans["ours"]), "×")
        official = Figure(tuple(spans["official"]), "×") if self.official else None
        self.rows.append(
            Row(
                f"2 fan-out ({cfg.fanout_calls}×{cfg.fanout_sleep:g} s)",
                f"local-calls wall / {cfg.fanout_sleep:g} s",
                ours,
                None,
                official,
                "",
                "≤1.2× slowest handler",
                _verdict((ours.median, lambda r: r <= 1.2)),
            )
        )

    # 3 -------------------------------------------------------------------------

    def stream(self) -> None:
        cfg = self.config
        chunks = tuple(f"w{i} " for i in range(cfg.stream_events))
        self.server.set_model([Turn("".join(chunks), chunks=chunks)])
        rates: dict[str, list[float]] = defaultdict(list)
        cpu_rates: dict[str, list[float]] = defaultdict(list)
        job = self.job("stream", "all", variants=self.in_rounds, rounds=cfg.stream_rounds)
        for measured in _client_job(job)["rounds"]:
            for variant, run in measured.items():
                if run["events"] < cfg.stream_events:
                    raise RuntimeError(f"{variant}: only {run['events']:.0f} events")
                rates[variant].append(run["events"] / run["span"])
                cpu_rates[variant].append(run["events"] / max(run["cpu"], 1e-9))
        self.raw["stream_events_per_s"] = dict(rates)
        self.raw["stream_events_per_cpu_s"] = dict(cpu_rates)
        ours, base = Figure(tuple(rates["ours"]), "ev/s"), Figure(tuple(rates["raw"]), "ev/s")
        floor = Figure(tuple(rates["floor"]), "ev/s")
        official = Figure(tuple(rates["official"]), "ev/s") if self.official else None
        # One figure per round and variant, in round order: ratios pair them.
        r_floor, r_base, r_off, r_beside = (
            paired_ratio(rates["ours"], rates[v]) for v in ("floor", "raw", "official", "beside")
        )
        cpu = {v: Figure(tuple(cpu_rates[v]), "ev/s") for v in cpu_rates}
        cpu_floor, cpu_off = (
            paired_ratio(cpu_rates["ours"], cpu_rates[v]) for v in ("floor", "official")
        )
        self.rows.append(
            Row(
                f"3 streaming ({cfg.stream_events:,} deltas)",
                f"events per second (per CPU second: {cpu['ours'].show()})",
                ours,
                base,
                official,
                _ratios(
                    ("floor", r_floor),
                    ("raw", r_base),
                    ("official", r_off),
                    ("floor CPU", cpu_floor),
                    ("official CPU", cpu_off),
                    ("beside", r_beside),
                ),
                "≥0.9× floor, ≥1.1× official",
                _verdict((r_floor, lambda r: r >= 0.9), (r_off, lambda r: r >= 1.1)),
                floor=floor,
            )
        )

    # 4 -------------------------------------------------------------------------

    def imports(self) -> None:
        statements = {
            "bare": "pass",
            "ours": "import mantyx_sync",
            "requests": "import requests",
            "ours_plain": "from mantyx_sync import Agent, Client, local_tool",
            # What the `mantyx-sync` console script runs for `mantyx-sync --help`.
            "ours_help": "from mantyx_sync.cli import main; main(['--help'])",
        }
        if self.official:
            statements["official"] = "import mantyx"
            statements["official_plain"] = "from mantyx import MantyxClient, define_local_tool"
        times: dict[str, list[float]] = defaultdict(list)
        cpu: dict[str, list[float]] = defaultdict(list)
        env = _env()
        for _ in range(self.config.import_reps):
            for name, code in statements.items():
                wall, used = _timed_process(
                    [sys.executable, "-c", code],
                    env,
                    # Not ROOT: `-c` puts the working directory first on sys.path,
                    # and an explicit PYTHONPATH (a mantyx_sync to compare) must win.
                    cwd=ROOT / "benchmarks",
                    quiet=True,  # the help text
                )
                times[name].append(wall)
                cpu[name].append(used)
        net, net_cpu = _net_of_bare(times), _net_of_bare(cpu)
        self.raw["import_ms"] = {name: list(values) for name, values in times.items()}
        self.raw["import_cpu_ms"] = {name: list(values) for name, values in cpu.items()}
        r_off = ratio(net["ours"], net.get("official"))
        self.rows.append(
            Row(
                "4 cold import",
                "`import X` minus bare interpreter",
                net["ours"],
                net["requests"],
                net.get("official"),
                _ratios(("official", r_off)),
                "≤0.5× official",
                _verdict((r_off, lambda r: r <= 0.5)),
            )
        )
        # The two cold-start rows: each against `import requests`, by wall time
        # (the target) and by CPU time (steadier on a loaded machine).
        for key, label, figure, limit in (
            ("ours_plain", "4b import for a plain run", "Agent+Client+local_tool", 1.3),
            ("ours_help", "4c `mantyx-sync --help`", "the console script", 2.0),
        ):
            r_req = ratio(net[key], net["requests"])
            r_cpu = ratio(net_cpu[key], net_cpu["requests"])
            r_off = ratio(net[key], net.get("official_plain")) if key == "ours_plain" else None
            self.rows.append(
                Row(
                    label,
                    f"{figure}, same way (CPU {net_cpu[key].show()})",
                    net[key],
                    net["requests"],
                    net.get("official_plain") if key == "ours_plain" else None,
                    _ratios(("requests", r_req), ("requests CPU", r_cpu), ("official", r_off)),
                    f"≤{limit:g}× import requests",
                    _verdict((r_req, lambda r, limit=limit: r <= limit)),
                )
            )

    # 6 -------------------------------------------------------------------------

    def scale(self) -> None:
        cfg = self.config
        levels = list(cfg.scale_levels)
        found: dict[str, dict[str, dict[str, list[float]]]] = {}
        # The emulator in its own process: the client's figures are its own.
        with external_server(cfg.scale_turns) as address:
            for variant in [v for v in self.variants if v in ("ours", "official")]:
                job = {
                    "bench": "scale",
                    "variant": variant,
                    "reps": cfg.scale_reps,
                    "levels": levels,
                    "turns": cfg.scale_turns,
                    **address,
                }
                found[variant] = _client_job(job)["scale"]
        self.raw["scale"] = found
        low, high = str(levels[0]), str(levels[-1])
        for level in levels:
            key = str(level)
            ours = Figure(tuple(found["ours"]["rate"][key]), "rt/s")
            cpu = Figure(tuple(found["ours"]["cpu_us"][key]), "µs")
            official = (
                Figure(tuple(found["official"]["rate"][key]), "rt/s")
                if "official" in found
                else None
            )
            ratios, target, verdict = "", "", ""
            off_cpu = ""
            if "official" in found:
                off_cpu = f", official {Figure(tuple(found['official']['cpu_us'][key])).show()}"
            if key == high and len(levels) > 1:
                growth = ratio(cpu, Figure(tuple(found["ours"]["cpu_us"][low])))
                gain = ratio(ours, Figure(tuple(found["ours"]["rate"][low])))
                ratios = ", ".join(
                    f"{what} {value:.2f}× ours@{low}"
                    for what, value in (("CPU/rt", growth), ("rt/s", gain))
                    if value is not None
                )
                target = f"CPU/rt ≤1.2× at {low}"
                verdict = _verdict((growth, lambda r: r <= 1.2))
            self.rows.append(
                Row(
                    f"6 scale, {level} concurrent"
                    if level == levels[0]
                    else f"6 … {level} concurrent",
                    f"rt/s; client CPU/rt {cpu.show()}{off_cpu}",
                    ours,
                    None,
                    official,
                    ratios,
                    target,
                    verdict,
                )
            )

    # 7 -------------------------------------------------------------------------

    def cold_start(self) -> None:
        scripts = {"ours": ROOT / "benchmarks" / "scripts" / "one_turn_ours.py"}
        if self.official:
            scripts["official"] = ROOT / "benchmarks" / "scripts" / "one_turn_official.py"
        times: dict[str, list[float]] = defaultdict(list)
        cpu: dict[str, list[float]] = defaultdict(list)
        with external_server(1) as address:
            env = _env()
            env["MANTYX_BASE_URL"] = address["base_url"]
            env["MANTYX_API_KEY"] = address["api_key"]
            env["MANTYX_WORKSPACE"] = address["workspace"]
            for _ in range(self.config.cold_reps):
                for name, script in scripts.items():  # interleaved
                    wall, used = _timed_process([sys.executable, str(script)], env)
                    times[name].append(wall)
                    cpu[name].append(used)
        self.raw["cold_start_ms"] = {"wall": dict(times), "cpu": dict(cpu)}
        ours = Figure(tuple(times["ours"]), "ms")
        official = Figure(tuple(times["official"]), "ms") if self.official else None
        r_off = ratio(ours, official)
        r_cpu = (
            ratio(Figure(tuple(cpu["ours"])), Figure(tuple(cpu["official"])))
            if self.official
            else None
        )
        self.rows.append(
            Row(
                "7 cold start, whole script",
                f"`python script.py`, 1 turn + 1 tool (CPU {Figure(tuple(cpu['ours'])).show()} ms)",
                ours,
                None,
                official,
                _ratios(("official", r_off), ("official CPU", r_cpu)),
                "≤0.8× official wall",
                _verdict((r_off, lambda r: r <= 0.8)),
            )
        )

    # 8 -------------------------------------------------------------------------

    def swarm(self) -> None:
        cfg = self.config
        chunks = tuple(f"w{i} " for i in range(cfg.swarm_events))
        self.server.set_model([Turn("".join(chunks), chunks=chunks)])
        result = _client_job(self.job("swarm", "ours", reps=cfg.swarm_reps, level=cfg.swarm_runs))
        samples = result["swarm"]
        self.raw["swarm"] = samples
        rss = Figure(tuple(s["rss_kib_per_run"] for s in samples), "KiB")
        threads = Figure(tuple(s["threads_per_run"] for s in samples))
        workers = max(s["tool_workers"] for s in samples)
        self.rows.append(
            Row(
                f"8 {cfg.swarm_runs} runs streaming at once",
                f"RSS per run (1 Client, {cfg.swarm_runs} threads)",
                rss,
                None,
                None,
                f"threads per run {threads.show()} (incl. the caller's); "
                f"tool workers {workers:.0f}",
                "no tool worker threads",
                "yes" if workers == 0 and threads.median <= 1.0 else "NO",
            )
        )

    # 8b ------------------------------------------------------------------------

    def thousand(self) -> None:
        cfg = self.config
        level = cfg.thousand_runs
        with external_server(1, chunks=cfg.thousand_events) as address:
            result = _client_job(
                {**address, "bench": "thousand", "variant": "ours", "reps": 1, "level": level}
            )
        [sample] = result["swarm"]
        self.raw["thousand"] = sample
        expected = level * (cfg.thousand_events + 4)  # started, call, answer echo, result
        whole = sample["runs_done"] == level and not sample["lost"] and not sample["unanswered"]
        self.rows.append(
            Row(
                f"8b {level:,} runs streaming at once",
                f"RSS and threads per run (1 Client, {level:,} threads, emulator in its own "
                "process, 1 tool call each)",
                Figure((sample["rss_kib_per_run"],), "KiB"),
                None,
                None,
                f"threads per run {sample['threads_per_run']:.2f}; runs ended "
                f"{sample['runs_done']:,.0f}/{level:,}; events {sample['events']:,.0f} "
                f"(≥{expected:,}), lost {sample['lost']:.0f}; calls unanswered "
                f"{sample['unanswered']:.0f}; all ended {sample['finish_s']:.1f} s after release",
                "every run ends, no event lost, every call answered",
                "yes" if whole else "NO",
            )
        )


def _net_of_bare(times: dict[str, list[float]]) -> dict[str, Figure]:
    """Each statement's times minus the bare interpreter's median (``python -c pass``)."""
    bare = statistics.median(times["bare"])
    return {name: Figure(tuple(t - bare for t in values), "ms") for name, values in times.items()}


def _timed_process(
    argv: list[str], env: dict[str, str], *, cwd: Path = ROOT, quiet: bool = False
) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one child process (``quiet``: no stdout).

    The wait is one blocking ``wait4``: ``subprocess.run(timeout=...)`` polls with
    sleeps of up to 50 ms, which put every wall time on a 50 ms step (315, 365,
    415 ms ...), and ``os.times`` counts CPU in 10 ms clock ticks; ``wait4``'s
    rusage is exact to the microsecond. A timer kills a child that hangs.
    """
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL if quiet else None)
    killer = threading.Timer(120, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    wall = (time.perf_counter() - started) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


@contextlib.contextmanager
def external_server(tool_turns: int, *, chunks: int = 0) -> Iterator[dict[str, str]]:
    """The emulator in its own process (:mod:`benchmarks._serve`); yields its address."""
    spec = json.dumps({"tool_turns": tool_turns, "chunks": chunks})
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks._serve", spec],
        cwd=ROOT,
        env=_env(client=False),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the emulator process did not start")
        address: dict[str, str] = json.loads(line)
        yield address
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _tracing_available() -> bool:
    return importlib.util.find_spec("opentelemetry.sdk") is not None


def _ratios(*pairs: tuple[str, float | None]) -> str:
    return ", ".join(f"÷{name} {value:.2f}×" for name, value in pairs if value is not None)


def _verdict(*checks: tuple[float | None, Any]) -> str:
    results = [check(value) for value, check in checks if value is not None]
    if not results:
        return "?"
    return "yes" if all(results) else "NO"


def run_suite(config: Config) -> Report:
    """Run the selected benchmarks and return the report."""
    started = time.perf_counter()
    # Compare like with like: a wheel install compiles bytecode, while a checkout
    # run with PYTHONDONTWRITEBYTECODE (as here) would recompile our modules from
    # source in every client process, inflating our import time and peak RSS.
    compileall.compile_dir(str(ROOT / "mantyx_sync"), quiet=1)
    suite = _Suite(config)
    suite.run()
    note = None
    if not suite.official:
        note = (
            "Official SDK column skipped: `mantyx` is not installed "
            "(pip install mantyx-sdk to compare)."
            if config.official
            else "Official SDK column skipped (--no-official)."
        )
    return Report(
        rows=suite.rows,
        official_note="\n".join(filter(None, [note, *suite.notes])) or None,
        raw=suite.raw,
        machine=machine_description(),
        seconds=time.perf_counter() - started,
    )
