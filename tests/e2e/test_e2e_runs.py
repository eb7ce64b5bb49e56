"""End-to-end runs against the local MANTYX emulator on 127.0.0.1 (real HTTP, real SSE)."""

from __future__ import annotations

import gc
import logging
import threading
import time

import pytest

import mantyx_sync
from mantyx_sync.testing import Emit, Fail, FailResult, Faults, LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."


@pytest.fixture
def agent(mantyx_server: LocalMantyx) -> mantyx_sync.Agent:
    return mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)


def _types(events: tuple[mantyx_sync.RunEvent, ...] | list[mantyx_sync.RunEvent]) -> list[str]:
    return [e.type for e in events]


def test_run_returns_text_and_every_event_once(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    mantyx_server.set_model([Turn("Hello there, friend.", chunks=["Hello ", "there, ", "friend."])])
    result = agent.run("hi")
    assert result.text == "Hello there, friend."
    seqs = [e.seq for e in result.events]
    assert seqs == sorted(set(seqs))
    assert result.events[-1].type == "result"
    deltas = [e.text for e in result.events if e.type == "assistant_delta"]
    assert deltas == ["Hello ", "there, ", "friend."]
    assert result.run_id in mantyx_server.runs
    body = mantyx_server.runs[result.run_id].spec
    assert body["prompt"] == "hi" and body["systemPrompt"] == SYSTEM


def test_usage_fields_present_and_absent(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    result = agent.run("hi")
    assert result.tokens is not None and result.turns is not None and result.model is not None
    with LocalMantyx(usage=False) as old:
        old_result = mantyx_sync.Agent(old.client(), system_prompt=SYSTEM).run("hi")
    assert old_result.tokens is None and old_result.turns is None and old_result.model is None


def test_ok_true_success_shape(agent: mantyx_sync.Agent) -> None:
    with LocalMantyx(result_shape="ok", model=[Turn("fine")]) as srv:
        assert mantyx_sync.Agent(srv.client(), system_prompt=SYSTEM).run("x").text == "fine"


def test_messages_input(mantyx_server: LocalMantyx, agent: mantyx_sync.Agent) -> None:
    agent.run(messages=[{"role": "user", "content": "hello"}])
    run = list(mantyx_server.runs.values())[-1]
    assert run.spec["messages"] == [{"role": "user", "content": "hello"}]
    assert "prompt" not in run.spec


def test_stream_yields_terminal_then_raises_on_error(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    mantyx_server.set_model(
        [
            Fail(
                "output truncated",
                code="truncation",
                error_class="truncation",
                finish_reason="max_tokens",
                partial_text='{"a": 1',
                retryable=False,
            )
        ]
    )
    seen: list[str] = []
    with pytest.raises(mantyx_sync.RunError) as info, agent.stream("x") as run:
        for event in run:
            seen.append(event.type)
    assert seen[-1] == "error"
    err = info.value
    assert err.code == "truncation" and err.error_class == "truncation"
    assert err.finish_reason == "max_tokens" and err.partial_text == '{"a": 1'
    assert err.retryable is False and err.run_id
    assert err.result is not None and err.result.events[-1].type == "error"


def test_non_success_result_is_a_run_error(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    mantyx_server.set_model([FailResult("error_max_turns", error="too many turns")])
    with pytest.raises(mantyx_sync.RunError) as info:
        agent.run("x")
    assert info.value.code == "error_max_turns"
    assert not isinstance(info.value, mantyx_sync.RunCancelledError)


def test_start_gives_id_before_events_and_wait(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    run = agent.start("hi")
    assert run.id and run.events == () and not run.done
    result = run.wait()
    assert result.run_id == run.id and run.done


def test_cancel_from_another_thread(mantyx_server: LocalMantyx) -> None:
    release = threading.Event()

    @mantyx_sync.local_tool
    def block() -> str:
        """Blocks until released."""
        release.wait(10)
        return "done"

    mantyx_server.set_model([Turn(tool_calls=[ToolCall("block", {})]), Turn("never")])
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[block])
    run = agent.start("go")
    watchdog = threading.Thread(
        target=lambda: (mantyx_server.wait_for_tool_call(timeout=5), run.cancel())
    )
    watchdog.start()
    try:
        with pytest.raises(mantyx_sync.RunCancelledError):
            run.wait()
    finally:
        release.set()
        watchdog.join(5)
    assert mantyx_server.runs[run.id].status == "cancelled"
    assert run.result is not None and run.result.events[-1].type == "cancelled"


def test_leaving_stream_early_cancels_the_run(
    mantyx_server: LocalMantyx, held_agent: mantyx_sync.Agent
) -> None:
    with held_agent.stream("x") as run:
        for event in run:
            if event.type == "assistant_delta":
                break
    assert mantyx_server.wait_for_run(run.id, status="cancelled", timeout=5).status == "cancelled"
    assert any(r.path.endswith(f"/agent-runs/{run.id}/cancel") for r in mantyx_server.requests)


def test_a_best_effort_cancel_is_retried_like_any_cancel(
    mantyx_server: LocalMantyx, held_agent: mantyx_sync.Agent
) -> None:
    # A cancel is idempotent: leaving the block early retries it after a 503
    # (within cancel_timeout), as Runs.cancel and Run.cancel do, instead of
    # leaving the run burning.
    mantyx_server.fail_next("POST", r"/cancel$", 503, headers={"Retry-After": "0"})
    with held_agent.stream("x") as run:
        next(event for event in run if event.type == "assistant_delta")
    assert mantyx_server.wait_for_run(run.id, status="cancelled", timeout=5).status == "cancelled"
    assert [r.status for r in mantyx_server.requests if r.path.endswith("/cancel")] == [503, 200]


def test_passthrough_and_observability_events(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    mantyx_server.set_model(
        [
            Emit(
                "loop_detected", {"consecutiveCount": 3, "hardCutoff": False, "tools": ["recall"]}
            ),
            Emit("tool_budget_exceeded", {"tool": "recall", "maxCalls": 4, "callIndex": 5}),
            Emit("brand_new_event", {"x": 1}),
            Turn("done", thinking="hmm"),
        ]
    )
    result = agent.run("x")
    types = _types(result.events)
    for t in (
        "loop_detected",
        "tool_budget_exceeded",
        "brand_new_event",
        "thinking_delta",
        "assistant_message",
    ):
        assert t in types
    unknown = next(e for e in result.events if e.type == "brand_new_event")
    assert unknown.data == {"x": 1}


@pytest.mark.parametrize(
    "faults",
    [
        Faults(strip_event_lines=True),
        Faults(no_event_field_in_data=True),
        Faults(unknown_event_after=1),
    ],
    ids=["no-event-lines", "type-only-in-event-line", "unknown-event"],
)
def test_frame_shapes(mantyx_server: LocalMantyx, agent: mantyx_sync.Agent, faults: Faults) -> None:
    mantyx_server.set_model([Turn("abc def")])
    mantyx_server.inject(faults)
    result = agent.run("x")
    assert result.text == "abc def"
    assert result.events[-1].type == "result"


def test_malformed_frame_is_logged_and_skipped(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent, caplog: pytest.LogCaptureFixture
) -> None:
    mantyx_server.set_model([Turn("abc def")])
    mantyx_server.inject(Faults(malformed_frame_after=1))
    assert agent.run("x").text == "abc def"
    assert any(
        "malformed" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
    )


def test_drop_and_resume_with_last_event_id(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    mantyx_server.set_model([Turn("a b c d e f", chunks=list("abcdef"))])
    mantyx_server.inject(Faults(drop_after=3, replay_overlap=2))
    result = agent.run("x")
    assert result.text == "a b c d e f"
    assert "".join(e.text or "" for e in result.events if e.type == "assistant_delta") == "abcdef"
    seqs = [e.seq for e in result.events]
    assert seqs == sorted(set(seqs))
    streams = [r for r in mantyx_server.requests if r.path.endswith("/stream")]
    assert len(streams) >= 2
    assert streams[1].query.get("lastSeq") == "3"
    assert streams[1].headers.get("Last-Event-ID") == "3"


def test_stall_is_noticed_and_resumed(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model([Turn("a b c", chunks=["a", "b", "c"])])
    mantyx_server.inject(Faults(stall_after=2, stall_seconds=30))
    client = mantyx_server.client(stream_idle_timeout=0.5)
    result = mantyx_sync.Agent(client, system_prompt=SYSTEM).run("x")
    assert result.text == "a b c"
    assert len([r for r in mantyx_server.requests if r.path.endswith("/stream")]) >= 2


def test_stream_open_errors_are_retried(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    mantyx_server.inject(Faults(stream_open_errors=2, stream_open_status=503))
    assert agent.run("x").text
    assert len([r for r in mantyx_server.requests if r.path.endswith("/stream")]) == 3


def test_create_retried_on_429_not_on_500(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    mantyx_server.fail_next(
        "POST", r".*/agent-runs$", 429, json={"error": "rate_limited"}, headers={"Retry-After": "0"}
    )
    assert agent.run("x").text
    assert (
        len(
            [
                r
                for r in mantyx_server.requests
                if r.method == "POST" and r.path.endswith("/agent-runs")
            ]
        )
        == 2
    )
    mantyx_server.fail_next("POST", r".*/agent-runs$", 500, json={"error": "internal"})
    before = len(mantyx_server.requests)
    with pytest.raises(mantyx_sync.ServerError):
        agent.run("x")
    assert len([r for r in mantyx_server.requests[before:] if r.method == "POST"]) == 1


def test_auth_and_workspace_errors(mantyx_server: LocalMantyx) -> None:
    bad_key = mantyx_sync.Client(
        "mantyx_wrong_key_000", workspace=mantyx_server.workspace, base_url=mantyx_server.base_url
    )
    with pytest.raises(mantyx_sync.AuthError):
        bad_key.models.list()
    bad_ws = mantyx_sync.Client(
        mantyx_server.api_key, workspace="not-mine", base_url=mantyx_server.base_url
    )
    with pytest.raises(mantyx_sync.NotFoundError) as info:
        bad_ws.models.list()
    assert info.value.hint == mantyx_server.workspace


def test_models_snapshot_and_cancel_routes(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    catalog = agent.client.models.list()
    assert catalog.models and catalog.default_model_id in {m.id for m in catalog.models}
    result = agent.run("x")
    snap = agent.client.runs.get(result.run_id)
    assert snap.status == "succeeded" and snap.final_text == result.text
    agent.client.runs.cancel(result.run_id)  # idempotent on an ended run


def test_spec_errors_send_nothing(mantyx_server: LocalMantyx) -> None:
    client = mantyx_server.client()
    with pytest.raises(mantyx_sync.SpecError):
        mantyx_sync.Agent(client, system_prompt=SYSTEM, metadata={"bad key!": "x"})
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
    with pytest.raises(mantyx_sync.SpecError):
        agent.run("x", messages=[{"role": "user", "content": "y"}])
    assert mantyx_server.requests == []


def test_output_schema_parse(mantyx_server: LocalMantyx) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    agent = mantyx_sync.Agent(
        mantyx_server.client(),
        system_prompt=SYSTEM,
        output_schema={"name": "report", "schema": schema},
    )
    mantyx_server.set_model([Turn('{"city": "Oslo"}')])
    assert agent.run("x").parse() == {"city": "Oslo"}
    mantyx_server.set_model([Turn('{"town": "Oslo"}')])
    with pytest.raises(mantyx_sync.OutputParseError) as info:
        agent.run("x").parse()
    assert info.value.raw_text == '{"town": "Oslo"}'
    assert mantyx_server.runs[list(mantyx_server.runs)[-1]].spec["outputSchema"]["name"] == "report"


def test_many_threads_one_client(mantyx_server: LocalMantyx) -> None:
    client = mantyx_server.client()
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            results[i] = agent.run(f"prompt {i}").text
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not errors
    assert sorted(results) == list(range(12))
    assert all(f"prompt {i}" in text for i, text in results.items())


def test_debug_logs_never_show_the_key(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    agent.run("x")
    assert caplog.records
    assert mantyx_server.api_key not in caplog.text
    assert mantyx_server.api_key not in repr(agent.client)


def test_keepalives_do_not_count_as_events() -> None:
    # The server sends ": ping" comments every 50 ms while a tool runs; with a
    # 0.4 s idle deadline the client must still notice that no *event* came,
    # resume the stream, and finish normally.
    resumed = threading.Event()

    with LocalMantyx(keepalive=0.05) as srv:

        @mantyx_sync.local_tool
        def slow() -> str:
            """Returns once the client has reopened its stream."""
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not resumed.is_set():
                streams = [r for r in srv.requests if r.path.endswith("/stream")]
                if len(streams) >= 2:
                    resumed.set()
                else:
                    resumed.wait(0.05)
            return "done"

        srv.set_model([Turn(tool_calls=[ToolCall("slow", {})]), Turn("finished")])
        client = srv.client(stream_idle_timeout=0.4)
        result = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[slow]).run("x")
    assert resumed.is_set()
    assert result.text == "finished"


def test_dropping_a_stream_without_close_cancels_the_run(
    mantyx_server: LocalMantyx, held_agent: mantyx_sync.Agent, caplog: pytest.LogCaptureFixture
) -> None:
    for event in held_agent.stream("x"):  # no with-block: the Run is dropped on break
        if event.type == "assistant_delta":
            run_id = list(mantyx_server.runs)[-1]
            break
    gc.collect()
    assert mantyx_server.wait_for_run(run_id, status="cancelled", timeout=5).status == "cancelled"
    assert any("dropped before it ended" in r.getMessage() for r in caplog.records)


def test_stream_that_cannot_be_reopened_raises_stream_error(mantyx_server: LocalMantyx) -> None:
    mantyx_server.inject(Faults(stream_open_errors=10, stream_open_status=503))
    client = mantyx_server.client(stream_reconnects=2)
    with pytest.raises(mantyx_sync.StreamError) as info:
        mantyx_sync.Agent(client, system_prompt=SYSTEM).run("x")
    run_id = info.value.run_id
    assert run_id in mantyx_server.runs
    streams = [r for r in mantyx_server.requests if r.path.endswith("/stream")]
    assert len(streams) == 3  # the first attempt and two reconnects
    # run() gave up following the run, so it cancelled it rather than leave it going.
    assert any(r.path.endswith(f"/agent-runs/{run_id}/cancel") for r in mantyx_server.requests)


@pytest.mark.parametrize(
    ("terminal", "data", "error"),
    [
        ("cancelled", {"reason": {"by": "user"}}, mantyx_sync.RunCancelledError),
        ("error", {"error": "model exploded", "retryable": "yes"}, mantyx_sync.RunError),
        (
            "result",
            {"subtype": "error_local_tool_timeout", "error": {"m": 1}},
            mantyx_sync.RunError,
        ),
        ("result", {"subtype": "error_max_turns", "ok": "no"}, mantyx_sync.RunError),
        ("result", {"ok": False, "text": "partial"}, mantyx_sync.RunError),
    ],
)
def test_odd_terminal_fields_never_turn_a_failure_into_success(
    mantyx_server: LocalMantyx, terminal: str, data: dict[str, object], error: type[Exception]
) -> None:
    mantyx_server.set_model([Emit(terminal, data)])
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    with pytest.raises(error) as info:
        agent.run("x")
    if terminal == "error":
        assert info.value.message == "model exploded"  # type: ignore[attr-defined]
        assert info.value.retryable is None  # type: ignore[attr-defined]


def test_success_text_survives_odd_usage_fields(mantyx_server: LocalMantyx) -> None:
    data = {"subtype": "success", "text": "the answer is 42", "tokens": {"inputTokens": "12"}}
    mantyx_server.set_model([Emit("result", data)])
    result = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM).run("x")
    assert result.text == "the answer is 42"


def test_quiet_periods_while_a_tool_runs_do_not_use_up_reconnects() -> None:
    # Each idle deadline reopens the stream; with a budget of one reconnect, three
    # quiet periods in a row must still not end the run (they are not failures).
    reopened = threading.Event()

    with LocalMantyx(keepalive=0.05) as srv:

        @mantyx_sync.local_tool
        def slow() -> str:
            """Returns once the client has reopened its stream three times."""
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not reopened.is_set():
                if len([r for r in srv.requests if r.path.endswith("/stream")]) >= 4:
                    reopened.set()
                else:
                    reopened.wait(0.05)
            return "done"

        srv.set_model([Turn(tool_calls=[ToolCall("slow", {})]), Turn("finished")])
        client = srv.client(stream_idle_timeout=0.3, stream_reconnects=1)
        result = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[slow]).run("x")
    assert reopened.is_set()
    assert result.text == "finished"
