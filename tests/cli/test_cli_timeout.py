"""``mantyx-sync run --timeout SECONDS`` (issue 20, item 12): a run that does not end
in time is cancelled and the command exits 4 saying so."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from cli_support import run_cli

from mantyx_sync.testing import LocalMantyx, ModelContext, Step, Turn


@pytest.fixture
def slow_server() -> Iterator[LocalMantyx]:
    """An emulator whose model thinks for up to 10 s before answering."""
    release = threading.Event()

    def model(ctx: ModelContext) -> Step:
        release.wait(10)
        return Turn("late")

    with LocalMantyx(model=model, keepalive=0.05) as server:
        try:
            yield server
        finally:
            release.set()


def test_a_run_past_its_timeout_is_cancelled_and_exits_4(slow_server: LocalMantyx) -> None:
    done = run_cli("run", "--timeout", "0.5", "hello", server=slow_server)
    assert done.returncode == 4, done.stderr
    assert "within its run_timeout of 0.5s" in done.stderr
    assert slow_server.wait_for_run(status="cancelled", timeout=5).status == "cancelled"


def test_a_run_within_its_timeout_succeeds(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model([Turn("quick")])
    done = run_cli("run", "--timeout", "30", "hello", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    assert "quick" in done.stdout


@pytest.mark.parametrize("bad", ["0", "-1", "soon", "nan"])
def test_a_bad_timeout_is_a_usage_error(bad: str) -> None:
    done = run_cli("run", "--timeout", bad, "hello")
    assert done.returncode == 2
    assert "--timeout" in done.stderr
