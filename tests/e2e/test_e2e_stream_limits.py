"""A run never followed forever (issue 20, item 12): quiet reconnects use up
``stream_reconnects``, and ``timeout=`` bounds ``run()``, ``wait()`` and iteration,
cancelling the run on the server."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ModelContext, Step, Turn

SYSTEM = "You are a test agent."


@pytest.fixture(params=[None, 0.05], ids=["silent", "keepalives"])
def quiet_server(request: pytest.FixtureRequest) -> Iterator[LocalMantyx]:
    """An emulator whose model says "a" and then thinks for up to 5 s: the stream
    stays open with no event (silent, or keep-alive comments only)."""
    release = threading.Event()

    def model(ctx: ModelContext) -> Step:
        release.wait(5)
        return Turn("late")

    with LocalMantyx(keepalive=request.param, model=model, started_event=True) as server:
        try:
            yield server
        finally:
            release.set()


def _streams(server: LocalMantyx) -> int:
    return len([r for r in server.requests if r.path.endswith("/stream")])


def _latest_run_cancelled(server: LocalMantyx) -> bool:
    return server.wait_for_run(status="cancelled", timeout=5).status == "cancelled"


def test_a_quiet_stream_uses_up_the_reconnect_budget(quiet_server: LocalMantyx) -> None:
    client = quiet_server.client(stream_idle_timeout=0.2, stream_reconnects=2)
    with pytest.raises(mantyx_sync.StreamError, match=r"after 2 reconnects"):
        mantyx_sync.Agent(client, system_prompt=SYSTEM).run("x")
    assert _streams(quiet_server) == 3
    assert _latest_run_cancelled(quiet_server)
    client.close()


def test_run_timeout_cancels_the_run(quiet_server: LocalMantyx) -> None:
    client = quiet_server.client()  # idle deadline 120 s: only the timeout can end this
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
    with pytest.raises(
        mantyx_sync.RunTimeoutError, match=r"within its run_timeout of 0\.3s"
    ) as info:
        agent.run("x", run_timeout=0.3)
    assert "run_timeout=None for no limit" in str(info.value)
    assert _latest_run_cancelled(quiet_server)
    client.close()


def test_wait_timeout_cancels_the_run(quiet_server: LocalMantyx) -> None:
    client = quiet_server.client()
    run = mantyx_sync.Agent(client, system_prompt=SYSTEM).start("x")
    with pytest.raises(mantyx_sync.RunTimeoutError):
        run.wait(run_timeout=0.3)
    assert _latest_run_cancelled(quiet_server)
    assert not run.done
    client.close()


def test_iteration_with_a_timeout_yields_what_came_then_raises(quiet_server: LocalMantyx) -> None:
    client = quiet_server.client()
    seen = []
    with pytest.raises(mantyx_sync.RunTimeoutError):
        # 1 s: ample for the "started" event already in the log to arrive first.
        for event in mantyx_sync.Agent(client, system_prompt=SYSTEM).stream("x", run_timeout=1.0):
            seen.append(event.type)
    assert seen == ["started"]
    assert _latest_run_cancelled(quiet_server)
    client.close()


def test_session_runs_take_a_timeout(quiet_server: LocalMantyx) -> None:
    client = quiet_server.client()
    with mantyx_sync.Agent(client, system_prompt=SYSTEM).session() as chat:
        with pytest.raises(mantyx_sync.RunTimeoutError):
            chat.run("x", run_timeout=0.3)
        assert _latest_run_cancelled(quiet_server)
    client.close()


def test_a_tool_that_never_returns_is_bounded_by_the_timeout(
    mantyx_server: LocalMantyx, held_agent: mantyx_sync.Agent
) -> None:
    # The run waits on our own tool (so quiet reconnects are no failure): the
    # timeout still ends it.
    with pytest.raises(mantyx_sync.RunTimeoutError):
        held_agent.run("x", run_timeout=0.5)
    assert _latest_run_cancelled(mantyx_server)


def test_a_run_that_ends_in_time_is_unaffected(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model([Turn("done")])
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    assert agent.run("x", run_timeout=30).text == "done"
    run = agent.start("x", run_timeout=30)
    assert run.wait(run_timeout=30).text == "done"


@pytest.mark.parametrize("bad", [0, -5, float("nan")])
def test_a_bad_timeout_sends_nothing(mantyx_server: LocalMantyx, bad: float) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    with pytest.raises(mantyx_sync.SpecError, match="run_timeout: must be a number of seconds > 0"):
        agent.run("x", run_timeout=bad)
    with pytest.raises(mantyx_sync.SpecError, match="timeout"):
        agent.stream("x", run_timeout="10")  # type: ignore[arg-type]
    assert mantyx_server.requests == []
