"""Every benchmark at a tiny size, so the suite never rots. No timed assertions."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.__main__ import NAMES  # noqa: E402
from benchmarks._fleet import fleet_rows  # noqa: E402
from benchmarks._raw import RawClient  # noqa: E402
from benchmarks._server import start_timed_server  # noqa: E402
from benchmarks._suite import Config, official_available, run_suite  # noqa: E402
from mantyx_sync.testing import ToolCall, Turn  # noqa: E402

EXPECTED = {
    "1 tool round-trip",
    "2 fan-out",
    "3 streaming",
    "4 cold import",
    "4b import",
    "4c `mantyx-sync --help`",
    "5 memory",
    "6 scale",
    "7 cold start",
    "8 ",
}


def _check(report_rows: list, with_official: bool) -> None:
    names = {row.benchmark for row in report_rows}
    for prefix in EXPECTED:
        assert any(name.startswith(prefix) for name in names), (prefix, names)
    for row in report_rows:
        assert row.ours is not None and row.ours.values, row
        if not row.benchmark.startswith(("4", "8 ")):  # deltas may be ~0 (noise)
            assert all(v > 0 for v in row.ours.values), row
        if row.benchmark.startswith(("1 ", "3 ", "5 ")):
            assert row.baseline is not None and row.baseline.values, row
            assert row.floor is not None and row.floor.values, row
        if row.benchmark.startswith("8 "):
            # a run that never receives a tool call starts no worker thread
            assert "tool workers 0" in row.ratios, row
            assert row.verdict == "yes", row
        elif with_official and not row.benchmark.startswith("4c"):  # no official CLI to compare
            assert row.official is not None and row.official.values, row
        else:
            assert row.official is None


def test_every_benchmark_runs_without_the_official_sdk() -> None:
    # The Celery fleet's rows (9, 10) have a test of their own below.
    report = run_suite(Config.quick(official=False, only=frozenset(NAMES) - {"fleet"}))
    _check(report.rows, with_official=False)
    table = report.table()
    assert "Official SDK column skipped" in table
    assert "nproc=" in report.machine


@pytest.mark.timeout(240)
def test_celery_fleet_rows() -> None:
    rows, raw, note = fleet_rows(hold=2, jobs=4, reps=1)
    if note is not None:
        pytest.skip(note)
    assert [row.benchmark for row in rows] == [
        "9 one worker process, 2 runs at once",
        "10 two workers, 0.5 s tool",
        "10 … no-op tool",
    ]
    assert raw["capacity"]["threads_per_run"] and raw["capacity"]["prefork_pss_mib"]
    for row in rows[1:]:
        assert row.ours is not None and all(v > 0 for v in row.ours.values), row
        assert row.baseline is not None and all(v > 0 for v in row.baseline.values), row


@pytest.mark.skipif(not official_available(), reason="official SDK (mantyx-sdk) not installed")
def test_official_column_when_installed() -> None:
    report = run_suite(Config.quick(only=frozenset({"roundtrip", "stream", "fanout", "coldstart"})))
    assert report.official_note is None
    for row in report.rows:
        assert row.official is not None and row.official.values, row


def test_round_trips_are_timed_on_the_server() -> None:
    server, clock = start_timed_server()
    try:
        server.set_model(
            [Turn(tool_calls=[ToolCall("noop", {})]) for _ in range(3)] + [Turn("done")]
        )
        raw = RawClient(server.base_url, server.api_key, server.workspace)
        try:
            events = raw.run(
                {
                    "systemPrompt": "x",
                    "prompt": "go",
                    "tools": [
                        {
                            "kind": "local",
                            "name": "noop",
                            "description": "No-op.",
                            "parameters": {"type": "object", "properties": {}},
                        }
                    ],
                },
                lambda name, args: "ok",
            )
        finally:
            raw.close()
        assert events >= 7  # 3 × (assistant_message, call, result_in) + result
        trips = clock.round_trips()
        assert len(trips) == 3 and all(t > 0 for t in trips)
        assert server.runs[next(iter(server.runs))].status == "succeeded"
    finally:
        server.stop()


def test_command_line_quick_run() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "import", "--no-official"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 cold import" in proc.stdout and "Machine:" in proc.stdout
    assert "4c `mantyx-sync --help`" in proc.stdout
    assert "usage: mantyx-sync" not in proc.stdout  # the timed --help runs print nothing


@pytest.mark.timeout(120)
def test_another_checkout_runs_beside_this_one(tmp_path: Path) -> None:
    # This tree beside itself: its copy is renamed, so one process imports both.
    from benchmarks import BESIDE_PACKAGE, beside_copy

    copy = beside_copy(ROOT, tmp_path)
    init = (copy / BESIDE_PACKAGE / "__init__.py").read_text(encoding="utf-8")
    assert "mantyx_sync" not in init and (copy / BESIDE_PACKAGE / "py.typed").is_file()
    command = ["--quick", "--only", "roundtrip,stream", "--no-official", "--beside", str(ROOT)]
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("| 1 tool", "| 3 str"))]
    assert len(rows) == 2 and all("÷beside " in row for row in rows), proc.stdout


def test_official_sdk_is_not_a_dependency() -> None:
    # The comparison column is optional; our package must never import it.
    assert importlib.util.find_spec("mantyx_sync") is not None
    setup = (ROOT / "setup.cfg").read_text()
    assert "mantyx-sdk" not in setup
