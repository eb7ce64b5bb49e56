"""Local tools end to end: parallelism, exactly-once answers, faults, limits, Ctrl-C."""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Any

import pytest
from tool_support import final_with_results, posted_results

import mantyx_sync
from mantyx_sync._base.limits import TOOL_ERROR_MAX_BYTES, TOOL_RESULT_MAX_BYTES
from mantyx_sync.testing import Emit, Faults, LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."


def test_sixteen_calls_really_run_in_parallel(mantyx_server: LocalMantyx) -> None:
    barrier = threading.Barrier(16, timeout=10)

    @mantyx_sync.local_tool
    def meet(i: int) -> int:
        """Wait for all sixteen calls to be running at once."""
        barrier.wait()
        return i

    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("meet", {"i": i}) for i in range(16)]),
            Turn(final_with_results),
        ]
    )
    result = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[meet]).run("x")
    assert sorted(result.text.split(" | ")) == sorted(f"meet={i}" for i in range(16))


def test_duplicate_calls_execute_once(mantyx_server: LocalMantyx) -> None:
    counter: list[int] = []

    @mantyx_sync.local_tool
    def once() -> str:
        """Count executions."""
        counter.append(1)
        return "ok"

    mantyx_server.set_model([Turn(tool_calls=[ToolCall("once", {})]), Turn(final_with_results)])
    mantyx_server.inject(Faults(duplicate_tool_calls=True))
    result = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[once]).run("x")
    assert result.text == "once=ok"
    assert counter == [1]
    assert len(posted_results(mantyx_server, result.run_id)) == 1
    calls = [e for e in result.events if e.type == "local_tool_call"]
    assert len(calls) == 2 and calls[0].data["toolUseId"] == calls[1].data["toolUseId"]


def test_replay_after_drop_while_tool_runs(mantyx_server: LocalMantyx) -> None:
    counter: list[int] = []
    release = threading.Event()

    @mantyx_sync.local_tool
    def slow() -> str:
        """Runs until released."""
        counter.append(1)
        release.wait(10)
        return "done"

    mantyx_server.set_model(
        [
            Turn("thinking", chunks=["thinking"], tool_calls=[ToolCall("slow", {})]),
            Turn(final_with_results),
        ]
    )
    # The connection drops right after the tool call; the reconnect replays it.
    mantyx_server.inject(Faults(drop_after=3, replay_overlap=3))
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[slow])
    run = agent.start("x")
    threading.Thread(
        target=lambda: (mantyx_server.wait_for_tool_call(timeout=5), release.set())
    ).start()
    result = run.wait()
    assert result.text == "slow=done"
    assert counter == [1]
    assert len(posted_results(mantyx_server, run.id)) == 1


def test_503_then_success(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model(
        [Turn(tool_calls=[ToolCall("echo", {"text": "hi"})]), Turn(final_with_results)]
    )
    mantyx_server.inject(Faults(tool_result_errors=2, tool_result_error_status=503))

    @mantyx_sync.local_tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    result = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[echo]).run("x")
    assert result.text == "echo=hi"
    assert len(posted_results(mantyx_server, result.run_id)) == 3


def test_lost_response_then_404_is_delivered(
    mantyx_server: LocalMantyx, caplog: pytest.LogCaptureFixture
) -> None:
    echo_done = threading.Event()
    outcomes: dict[str, str | None] = {}

    def record(activity: mantyx_sync.ToolActivity) -> None:
        if activity.phase == "end":
            outcomes[activity.name] = activity.delivery
            if activity.name == "echo":
                echo_done.set()

    @mantyx_sync.local_tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @mantyx_sync.local_tool
    def after_echo() -> str:
        """Keeps the run open until echo's delivery is settled."""
        assert echo_done.wait(10)
        return "ok"

    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("echo", {"text": "hi"})]),
            Turn(tool_calls=[ToolCall("after_echo", {})]),
            Turn(final_with_results),
        ]
    )
    # The first POST is accepted, then the connection drops before the answer.
    mantyx_server.inject(Faults(tool_result_accept_then_drop=1))
    agent = mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[echo, after_echo], on_tool=record
    )
    result = agent.run("x")
    assert result.text == "echo=hi | after_echo=ok"
    echo_posts = [
        p for p in posted_results(mantyx_server, result.run_id) if p["toolUseId"] == "tu_1_1"
    ]
    assert len(echo_posts) == 2
    statuses = [r.status for r in mantyx_server.requests if r.path.endswith("/tool-results")]
    assert statuses[:2] == [0, 404]
    assert outcomes["echo"] == "delivered"
    assert not [
        r
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith("mantyx_sync")
    ]


def test_409_after_server_timeout_is_normal(caplog: pytest.LogCaptureFixture) -> None:
    release = threading.Event()

    @mantyx_sync.local_tool
    def late() -> str:
        """Answers after the server gave up."""
        release.wait(10)
        return "too late"

    with LocalMantyx(
        tool_timeout=0.3, model=[Turn(tool_calls=[ToolCall("late", {})]), Turn("x")]
    ) as srv:
        agent = mantyx_sync.Agent(srv.client(), system_prompt=SYSTEM, tools=[late])
        run = agent.start("x")
        with pytest.raises(mantyx_sync.RunError) as info:
            run.wait()
        assert info.value.code == "error_local_tool_timeout"
        # The handler finishes after the run ended: its answer is dropped, no error.
        release.set()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_handler_errors_invalid_args_and_unknown_tools(mantyx_server: LocalMantyx) -> None:
    called: list[str] = []

    @mantyx_sync.local_tool
    def boom(n: int) -> str:
        """Always fails."""
        called.append("boom")
        raise ValueError(f"bad n {n}")

    @mantyx_sync.local_tool
    def polite(n: int) -> str:
        """Fails with a message for the model."""
        raise mantyx_sync.ToolError("please pass a smaller n")

    mantyx_server.set_model(
        [
            Turn(
                tool_calls=[
                    ToolCall("boom", {"n": 1}),
                    ToolCall("boom", {"n": "not a number"}),
                    ToolCall("polite", {"n": 9}),
                    ToolCall("ghost", {}, kind="local"),
                ]
            ),
            Turn(final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[boom, polite])
    run = agent.start("x")
    run.wait()
    posted = {p["toolUseId"]: p for p in posted_results(mantyx_server, run.id)}
    assert len(posted) == 4
    errors = sorted(p["error"] for p in posted.values())
    assert any(e == "ValueError: bad n 1" for e in errors)
    assert any("invalid arguments" in e for e in errors)
    assert "please pass a smaller n" in errors
    assert any("unknown tool 'ghost'" in e for e in errors)
    assert called == ["boom"]


def test_oversized_results_and_errors_are_cut(mantyx_server: LocalMantyx) -> None:
    @mantyx_sync.local_tool
    def huge() -> str:
        """Returns too much."""
        return "é" * (TOOL_RESULT_MAX_BYTES)

    @mantyx_sync.local_tool
    def loud() -> str:
        """Fails with too much."""
        raise mantyx_sync.ToolError("x" * (TOOL_ERROR_MAX_BYTES * 2))

    mantyx_server.set_model(
        [Turn(tool_calls=[ToolCall("huge", {}), ToolCall("loud", {})]), Turn("ok")]
    )
    run = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[huge, loud]).start(
        "x"
    )
    run.wait()
    posted = posted_results(mantyx_server, run.id)
    result = next(p["result"] for p in posted if "result" in p)
    error = next(p["error"] for p in posted if "error" in p)
    assert len(result.encode()) <= TOOL_RESULT_MAX_BYTES and "cut from" in result
    assert len(error.encode()) <= TOOL_ERROR_MAX_BYTES and "cut from" in error


def test_handler_timeout(mantyx_server: LocalMantyx) -> None:
    release = threading.Event()

    def stuck() -> str:
        release.wait(10)
        return "late"

    tool = mantyx_sync.define_local_tool(
        name="stuck", description="Hangs.", execute=lambda args: stuck(), timeout=0.2
    )
    mantyx_server.set_model([Turn(tool_calls=[ToolCall("stuck", {})]), Turn(final_with_results)])
    try:
        result = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[tool]).run(
            "x"
        )
    finally:
        release.set()
    assert "timed out after 0.2s" in result.text


def test_on_tool_reports_start_and_end(mantyx_server: LocalMantyx) -> None:
    seen: list[mantyx_sync.ToolActivity] = []
    ended = threading.Event()
    lock = threading.Lock()

    def record(activity: mantyx_sync.ToolActivity) -> None:
        with lock:
            seen.append(activity)
        if activity.phase == "end":
            ended.set()

    @mantyx_sync.local_tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    mantyx_server.set_model([Turn(tool_calls=[ToolCall("echo", {"text": "a"})]), Turn("ok")])
    mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[echo], on_tool=record
    ).run("x")
    # Every callback of the run has been made when run() returns.
    assert ended.is_set()
    assert [a.phase for a in seen] == ["start", "end"]
    end = seen[1]
    assert end.ok is True and end.duration is not None and end.name == "echo"
    assert end.delivery in ("delivered", "run_terminal")


def test_run_end_does_not_wait_for_running_handlers(mantyx_server: LocalMantyx) -> None:
    release = threading.Event()

    @mantyx_sync.local_tool
    def forever() -> str:
        """Never returns on its own."""
        release.wait(10)
        return "x"

    mantyx_server.set_model([Turn(tool_calls=[ToolCall("forever", {})]), Turn("never")])
    run = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[forever]).start(
        "x"
    )
    threading.Thread(
        target=lambda: (mantyx_server.wait_for_tool_call(timeout=5), run.cancel())
    ).start()
    try:
        with pytest.raises(mantyx_sync.RunCancelledError):
            run.wait()
        assert not release.is_set()  # returned while the handler still runs
    finally:
        release.set()


def test_ctrl_c_while_tools_run_cancels_the_run() -> None:
    release = threading.Event()
    started = threading.Event()

    @mantyx_sync.local_tool
    def wait_here() -> str:
        """Blocks while the main thread is interrupted."""
        started.set()
        release.wait(10)
        return "x"

    main = threading.main_thread().ident
    assert main is not None and threading.current_thread() is threading.main_thread()

    def interrupt() -> None:
        # The handler runs only once the SDK has read the call off the stream.
        if started.wait(5):
            signal.pthread_kill(main, signal.SIGINT)

    # A SIGINT that lands just before the main thread enters its blocking read is
    # only acted on when the read returns (a CPython property); keep-alives bound that.
    with LocalMantyx(keepalive=0.05) as srv:
        srv.set_model([Turn(tool_calls=[ToolCall("wait_here", {})]), Turn("never")])
        agent = mantyx_sync.Agent(srv.client(), system_prompt=SYSTEM, tools=[wait_here])
        threading.Thread(target=interrupt).start()
        try:
            with pytest.raises(KeyboardInterrupt):
                agent.run("x")
            run_id = list(srv.runs)[-1]
            assert srv.wait_for_run(run_id, status="cancelled", timeout=5).status == "cancelled"
            # One cancel, however many layers (next, wait, with-block) saw the Ctrl-C.
            assert len([r for r in srv.requests if r.path.endswith("/cancel")]) == 1
        finally:
            release.set()


def test_ctrl_c_in_on_event_cancels(
    mantyx_server: LocalMantyx, held_agent: mantyx_sync.Agent
) -> None:
    def on_event(event: mantyx_sync.RunEvent) -> None:
        if event.type == "assistant_delta":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        held_agent.run("x", on_event=on_event)
    run_id = list(mantyx_server.runs)[-1]
    assert mantyx_server.wait_for_run(run_id, status="cancelled", timeout=5).status == "cancelled"


def test_malformed_calls_still_get_one_answer(mantyx_server: LocalMantyx) -> None:
    posted = threading.Event()

    def bodies() -> dict[str, dict[str, Any]]:
        return {
            r.json["toolUseId"]: r.json
            for r in mantyx_server.requests
            if r.path.endswith("/tool-results") and r.json
        }

    @mantyx_sync.local_tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @mantyx_sync.local_tool
    def gate() -> str:
        """Keeps the run open until both odd calls were answered."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not posted.is_set():
            if {"tu_str", "tu_bad"} <= set(bodies()):
                posted.set()
            else:
                posted.wait(0.02)
        return "ok"

    mantyx_server.set_model(
        [
            # Arguments as a JSON string (some model APIs send them so): decoded and run.
            Emit(
                "local_tool_call", {"toolUseId": "tu_str", "name": "echo", "args": '{"text": "hi"}'}
            ),
            # Arguments of the wrong type: answered with an error, never left hanging.
            Emit("local_tool_call", {"toolUseId": "tu_bad", "name": "echo", "args": [1, 2]}),
            Turn(tool_calls=[ToolCall("gate", {})]),
            Turn("done"),
        ]
    )
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[echo, gate])
    assert agent.run("x").text == "done"
    answers = bodies()
    assert answers["tu_str"] == {"toolUseId": "tu_str", "result": "hi"}
    assert "malformed tool call" in answers["tu_bad"]["error"]


def test_timeout_counts_while_queued_behind_hung_handlers(mantyx_server: LocalMantyx) -> None:
    release = threading.Event()

    @mantyx_sync.local_tool
    def hung() -> str:
        """Holds the only worker."""
        release.wait(10)
        return "late"

    @mantyx_sync.local_tool
    def quick() -> str:
        """Would be quick, but waits in the queue."""
        return "quick"

    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("hung", {}), ToolCall("quick", {})]),
            Turn(final_with_results),
        ]
    )
    client = mantyx_server.client(tool_timeout=0.3)
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[hung, quick], max_workers=1)
    try:
        result = agent.run("x")
    finally:
        release.set()
    assert "hung=ERR:tool 'hung' timed out after 0.3s" in result.text
    assert "quick=ERR:tool 'quick' timed out after 0.3s" in result.text
