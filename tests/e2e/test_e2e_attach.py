"""Attaching to a run another process started: answered calls never run again."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import requests

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."


def _answers(ctx: Any) -> str:
    return " | ".join(f"{r['name']}={r.get('result')}" for r in ctx.tool_results)


def _raw_post(server: LocalMantyx, path: str, body: dict[str, Any]) -> requests.Response:
    return requests.post(
        f"{server.base_url}/api/v1/workspaces/{server.workspace}{path}",
        json=body,
        headers={"Authorization": f"Bearer {server.api_key}"},
        timeout=5,
    )


@pytest.mark.parametrize("stream_fault", [False, True], ids=["clean", "503-on-first-open"])
def test_attach_answers_only_the_pending_calls(
    mantyx_server: LocalMantyx, stream_fault: bool
) -> None:
    runs: list[str] = []
    lock = threading.Lock()

    @mantyx_sync.local_tool
    def first() -> str:
        """Answered already by the process that died."""
        with lock:
            runs.append("first")
        return "from the new process"

    @mantyx_sync.local_tool
    def second() -> str:
        """Still pending when the new process attaches."""
        with lock:
            runs.append("second")
        return "2"

    mantyx_server.set_model(
        [Turn(tool_calls=[ToolCall("first", {}), ToolCall("second", {})]), Turn(_answers)]
    )
    # The "old process": starts the run and answers only the first call, then dies.
    old = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[first, second])
    body = {"prompt": "x", **old.spec.to_body([first.to_wire(), second.to_wire()])}
    run_id = _raw_post(mantyx_server, "/agent-runs", body).json()["runId"]
    call = mantyx_server.wait_for_tool_call(timeout=5)
    assert call["name"] == "first"
    answered = _raw_post(
        mantyx_server,
        f"/agent-runs/{run_id}/tool-results",
        {"toolUseId": call["toolUseId"], "result": "1"},
    )
    assert answered.status_code in (200, 204)

    # The "new process" re-binds the handlers and follows the run from its start.
    if stream_fault:  # a failed first open must not pass for an empty log
        mantyx_server.fail_next("GET", r".*/stream$", 503, json={"error": "unavailable"})
    client = mantyx_server.client()
    run = client.runs.attach(run_id, tools=[first, second], settle=0.3)
    result = run.wait()
    assert runs == ["second"]
    assert result.text == "first=1 | second=2"
    types = [e.type for e in result.events]
    assert types.count("local_tool_call") == 2 and types[-1] == "result"
    seqs = [e.seq for e in result.events]
    assert seqs == sorted(set(seqs))


def test_attach_to_an_ended_run_returns_its_result(mantyx_server: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    done = agent.run("hello")
    again = agent.client.runs.attach(done.run_id, settle=0.3)
    replayed = list(again)
    assert [e.seq for e in replayed] == [e.seq for e in done.events]
    assert again.wait().text == done.text


def test_attach_to_an_unknown_run(mantyx_server: LocalMantyx) -> None:
    with pytest.raises(mantyx_sync.NotFoundError):
        mantyx_server.client().runs.attach("run_does_not_exist", settle=0.2)


def test_close_without_cancel_hands_the_run_over(mantyx_server: LocalMantyx) -> None:
    # A worker that loses a job (its lease lapsed, it is shutting down) stops
    # following the run without cancelling it; another process attaches and
    # answers the call the first one was still running, which is answered once.
    started, release, dropped = threading.Event(), threading.Event(), threading.Event()
    activity: list[Any] = []

    @mantyx_sync.local_tool
    def slow() -> str:
        """Still running when its process lets the run go."""
        started.set()
        release.wait(10)
        return "from the first process"

    def on_tool(step: Any) -> None:
        activity.append(step)
        if step.phase == "end":
            dropped.set()

    mantyx_server.set_model([Turn(tool_calls=[ToolCall("slow", {})]), Turn(_answers)])
    first = mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[slow], on_tool=on_tool
    )
    with first.start("x") as run:
        reader = threading.Thread(target=lambda: list(run), daemon=True)  # until closed
        reader.start()
        assert started.wait(5)
        run.close(cancel=False)
        reader.join(5)
        assert not reader.is_alive()
    # Neither close(cancel=False) nor leaving the with-block cancelled it.
    assert not [r for r in mantyx_server.requests if r.path.endswith("/cancel")]
    assert mantyx_server.runs[run.id].status == "running"
    release.set()
    assert dropped.wait(5)
    assert activity[-1].delivery == "run_terminal"  # the late answer was never sent

    @mantyx_sync.local_tool(name="slow")
    def slow_again() -> str:
        """The second process's handler."""
        return "from the second process"

    result = mantyx_server.client().runs.attach(run.id, tools=[slow_again], settle=0.3).wait()
    assert result.text == "slow=from the second process"
    posts = [r for r in mantyx_server.requests if r.path.endswith("/tool-results")]
    assert len(posts) == 1


def test_nothing_is_posted_once_close_has_returned(
    mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 29: the tool's answer had passed the executor's check when the run was
    # closed; its first POST went out after close() had returned.
    from mantyx_sync._http.poster import ResultPoster

    delivering, closed = threading.Event(), threading.Event()
    deliver = ResultPoster.post

    def post_once_closed(self: ResultPoster, tool_use_id: str, **answer: Any) -> Any:
        delivering.set()
        assert closed.wait(10)
        return deliver(self, tool_use_id, **answer)

    monkeypatch.setattr(ResultPoster, "post", post_once_closed)
    mantyx_server.set_model([Turn(tool_calls=[ToolCall("quick", {})]), Turn(_answers)])

    @mantyx_sync.local_tool
    def quick() -> str:
        """Answers at once."""
        return "late"

    ended: list[Any] = []
    answered = threading.Event()

    def on_tool(step: Any) -> None:
        if step.phase == "end":
            ended.append(step.delivery)
            answered.set()

    agent = mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[quick], on_tool=on_tool
    )
    run = agent.start("x")
    reader = threading.Thread(target=lambda: list(run), daemon=True)  # until closed
    reader.start()
    assert delivering.wait(10)
    run.close(cancel=False)
    closed.set()
    reader.join(10)
    assert answered.wait(10)
    monkeypatch.undo()
    assert ended == ["run_terminal"]
    assert not [r for r in mantyx_server.requests if r.path.endswith("/tool-results")]
    result = mantyx_server.client().runs.attach(run.id, tools=[quick], settle=0.3).wait()
    assert result.text == "quick=late"
    assert len([r for r in mantyx_server.requests if r.path.endswith("/tool-results")]) == 1


def test_close_without_cancel_after_the_end_is_harmless(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model([Turn("done")])
    run = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM).start("x")
    assert run.wait().text == "done"
    run.close(cancel=False)
    run.close()
    assert not [r for r in mantyx_server.requests if r.path.endswith("/cancel")]
