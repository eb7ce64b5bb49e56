"""Evaluations end to end (EVALS.md): every case's local tool call answered exactly once."""

from __future__ import annotations

import collections
import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync.evals import EvalDataset, EvalRun, EvalRunDetail
from mantyx_sync.testing import LocalMantyx, ModelContext, ToolCall, Turn

CITIES = ("Paris", "Oslo", "Lima")


def weather_model(ctx: ModelContext) -> Any:
    """Calls lookup(city=<prompt>) once, then answers with what the tool said."""
    if ctx.turn == 0:
        return Turn("Let me check.", tool_calls=[ToolCall("lookup", {"city": ctx.prompt})])
    last = ctx.tool_results[-1]
    return Turn(f"Weather: {last.get('result', last.get('error'))}")


class Lookup:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.lock = threading.Lock()

        @mantyx_sync.local_tool(name="lookup")
        def lookup(city: str) -> str:
            """Look up the weather.

            Args:
                city: The city.
            """
            with self.lock:
                self.calls.append(city)
            return f"sunny in {city}"

        self.tool = lookup


def _dataset(server: LocalMantyx) -> str:
    return server.add_eval_dataset(
        "weather",
        [
            {
                "name": city,
                "input": {"prompt": city},
                "scorers": [{"type": "contains", "value": f"sunny in {city}"}],
            }
            for city in CITIES
        ],
        description="three cities",
    )


def _tool_result_posts(server: LocalMantyx) -> collections.Counter[tuple[str, str]]:
    return collections.Counter(
        (r.path.split("/")[-2], r.json["toolUseId"])
        for r in server.requests
        if r.method == "POST" and r.path.endswith("/tool-results") and r.status == 200
    )


@pytest.fixture
def server() -> Any:
    with LocalMantyx(model=weather_model) as srv:
        yield srv


def test_eval_cases_call_a_local_tool_each_answered_once(server: LocalMantyx) -> None:
    dataset_id = _dataset(server)
    client = server.client()
    lookup = Lookup()
    agent = mantyx_sync.Agent(client, system_prompt="Weather bot.", tools=[lookup.tool])

    listed = client.evals.datasets()
    assert [(d.id, d.name, d.case_count) for d in listed] == [(dataset_id, "weather", 3)]
    dataset = client.evals.dataset(dataset_id)
    assert isinstance(dataset, EvalDataset) and [c.name for c in dataset.cases] == list(CITIES)

    seen: list[str] = []
    with client.evals.start(dataset=dataset_id, agent=agent) as run:
        assert isinstance(run, EvalRun)
        detail = run.wait(on_event=lambda e: seen.append(e.type))
    assert isinstance(detail, EvalRunDetail)
    assert detail.status == "succeeded" and detail.done
    assert (detail.total_cases, detail.passed_cases) == (3, 3)
    assert [r.final_text for r in detail.results] == [f"Weather: sunny in {c}" for c in CITIES]
    assert all(r.passed for r in detail.results)

    assert sorted(lookup.calls) == sorted(CITIES), "each case's call ran once"
    evaluation = server.evals[run.id]
    assert list(run.case_run_ids) == evaluation.case_runs and len(evaluation.case_runs) == 3
    answered = {}
    for run_id in evaluation.case_runs:
        case_run = server.runs[run_id]
        calls = [e["data"]["toolUseId"] for e in case_run.events if e["type"] == "local_tool_call"]
        assert len(calls) == 1
        assert set(case_run.tool_results) == set(calls)
        answered[run_id] = case_run.tool_results[calls[0]]["result"]
    assert sorted(answered.values()) == sorted(f"sunny in {c}" for c in CITIES)
    posts = _tool_result_posts(server)
    assert len(posts) == 3 and set(posts.values()) == {1}, "one POST per toolUseId"
    assert {run_id for run_id, _ in posts} == set(evaluation.case_runs)
    assert seen[-1] == "run_completed" and seen.count("local_tool_call") == 3
    created = next(r for r in server.requests if r.path.endswith("/eval-runs"))
    assert created.json["datasetId"] == dataset_id
    assert created.json["agent"]["tools"][0]["name"] == "lookup"


def test_inline_dataset_stored_agent_mocks_overrides_list_get_compare(
    server: LocalMantyx,
) -> None:
    client = server.client()
    lookup = Lookup()
    inline = {
        "name": "mocked",
        "cases": [
            {"input": {"prompt": "Rome"}, "scorers": [{"type": "tool_called", "name": "lookup"}]}
        ],
    }
    with client.evals.start(
        dataset=inline,
        agent="agent_weather",
        tools=[lookup.tool],
        tool_mocks={"lookup": "mocked rain"},
        overrides={"system_prompt": "Be brief."},
    ) as mocked:
        first = mocked.wait()
    assert lookup.calls == [], "a mocked tool is answered by the server"
    assert first.results[0].final_text == "Weather: mocked rain" and first.passed_cases == 1
    body = next(r.json for r in server.requests if r.path.endswith("/eval-runs"))
    assert body["agentId"] == "agent_weather" and body["tools"][0]["name"] == "lookup"
    assert body["dataset"]["toolMocks"] == {"lookup": "mocked rain"}
    assert body["overrides"] == {"systemPrompt": "Be brief."}

    with client.evals.start(
        dataset=inline,
        agent="agent_weather",
        tools=[lookup.tool],
        tool_mocks={"lookup": "mocked rain"},
        overrides={"disabledMocks": ["lookup"]},
    ) as live:
        second = live.wait()
    assert lookup.calls == ["Rome"]
    assert second.results[0].final_text == "Weather: sunny in Rome"

    assert [e.id for e in client.evals.list()] == [live.id, mocked.id]
    # One auto-paging Listing, as every list: a page of one, then the next one.
    listing = client.evals.list(limit=1)
    assert isinstance(listing, mantyx_sync.Listing)
    before = len(server.requests)
    assert [e.id for e in listing] == [live.id, mocked.id]
    pages = [r.query for r in server.requests[before:]]
    assert [(q["limit"], q["offset"]) for q in pages] == [("1", "0"), ("1", "1"), ("1", "2")]
    assert [e.id for e in client.evals.list(max_items=1)] == [live.id]
    with pytest.warns(DeprecationWarning, match=r"Evals.list\(offset=\) is deprecated"):
        assert [e.id for e in client.evals.list(offset=1)] == [mocked.id]
    assert client.evals.get(mocked.id).results[0].final_text == "Weather: mocked rain"
    comparison = client.evals.compare(mocked.id, live.id)
    assert comparison.run_a is not None and comparison.run_a.id == mocked.id
    (case,) = comparison.cases
    assert case.a is not None and case.b is not None
    assert (case.a.final_text, case.b.final_text) == (
        "Weather: mocked rain",
        "Weather: sunny in Rome",
    )
    assert client.evals.cancel(live.id) is False, "already over"


def _eval_waiting_in_its_tool(
    server: LocalMantyx,
) -> tuple[mantyx_sync.Client, EvalRun, Iterator[Any], threading.Event]:
    """An evaluation iterated until its first case's tool runs; the tool waits for the event."""
    dataset_id = _dataset(server)
    client = server.client()
    entered, release = threading.Event(), threading.Event()

    @mantyx_sync.local_tool(name="lookup")
    def slow_lookup(city: str) -> str:
        """Look up slowly.

        Args:
            city: The city.
        """
        entered.set()
        release.wait(10)
        return "late"

    run = client.evals.start(
        dataset=dataset_id,
        agent=mantyx_sync.AgentSpec.build(system_prompt="s", tools=[slow_lookup]),
    )
    events = iter(run)
    while not entered.is_set():
        next(events)
    return client, run, events, release


def test_cancelling_an_evaluation_ends_iteration_with_run_cancelled(server: LocalMantyx) -> None:
    client, run, events, release = _eval_waiting_in_its_tool(server)
    with run:
        client.evals.cancel(run.id)
        with pytest.raises(mantyx_sync.RunCancelledError):
            for _ in events:
                pass
    release.set()
    assert server.evals[run.id].status == "cancelled"


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"dataset": "", "agent": "a"}, "dataset"),
        ({"dataset": {"cases": []}, "agent": "a"}, "dataset.cases"),
        ({"dataset": {"cases": [{"prompt": "x"}]}, "agent": "a"}, "dataset.cases[0]"),
        ({"dataset": "ds", "agent": 3}, "agent"),
        ({"dataset": "ds", "agent": "a", "tool_mocks": {"x": "y"}}, "tool_mocks"),
        ({"dataset": "ds", "agent": "a", "overrides": {"temperature": 1}}, "overrides"),
        ({"dataset": "ds", "agent": "a", "model_id": ""}, "model_id"),
    ],
)
def test_bad_eval_arguments_raise_before_sending(
    server: LocalMantyx, kwargs: dict[str, Any], path: str
) -> None:
    client = server.client()
    with pytest.raises(mantyx_sync.SpecError) as caught:
        client.evals.start(**kwargs)
    assert caught.value.path == path
    assert server.requests == []


@pytest.mark.parametrize("live_tail", [True, False])
def test_a_broken_eval_stream_is_resumed_and_missed_calls_still_answered_once(
    server: LocalMantyx, live_tail: bool
) -> None:
    # The first connection is cut right after the first case starts, before its
    # tool call is relayed; with live_tail the call never reaches the reopened
    # stream and is found in the case run's own log instead.
    dataset_id = _dataset(server)
    server.inject_eval_stream_fault(drop_after=1, live_tail_on_reconnect=live_tail)
    client = server.client()
    lookup = Lookup()
    agent = mantyx_sync.Agent(client, system_prompt="Weather bot.", tools=[lookup.tool])
    with client.evals.start(dataset=dataset_id, agent=agent) as run:
        detail = run.wait()
    evaluation = server.evals[run.id]
    assert evaluation.stream_connections == 2
    assert detail.status == "succeeded" and detail.passed_cases == 3
    assert sorted(lookup.calls) == sorted(CITIES)
    posts = _tool_result_posts(server)
    assert len(posts) == 3 and set(posts.values()) == {1}
    first_case = evaluation.case_runs[0]
    followed = [
        r
        for r in server.requests
        if r.method == "GET" and r.path.endswith(f"/agent-runs/{first_case}/stream")
    ]
    assert len(followed) == 1, "the case run seen before the break is read once on reopening"
    types = [e.type for e in run.events]
    assert types.count("case_started") == 3 and types[-1] == "run_completed"
    # Live tail: the first case's call was sent while the client was away.
    assert types.count("local_tool_call") == (2 if live_tail else 3), "no replay twice"


def test_an_eval_that_ends_while_its_stream_is_down_ends_with_the_polled_outcome(
    server: LocalMantyx,
) -> None:
    # The connection is cut just before the terminal frame, and a reopened one
    # would start at the end of the log: only polling the evaluation finds its end.
    client = server.client()
    agent = mantyx_sync.Agent(client, system_prompt="Weather bot.", tools=[Lookup().tool])
    with client.evals.start(dataset=_dataset(server), agent=agent) as run:
        run.wait()
    frames = len(run.events)
    server.inject_eval_stream_fault(drop_after=frames - 1, live_tail_on_reconnect=True)
    lookup = Lookup()
    agent = mantyx_sync.Agent(client, system_prompt="Weather bot.", tools=[lookup.tool])
    with client.evals.start(dataset=_dataset(server), agent=agent) as run:
        detail = run.wait()
    assert detail.status == "succeeded" and sorted(lookup.calls) == sorted(CITIES)
    last = run.events[-1]
    assert last.type == "run_completed" and last.data["polled"] is True
    assert len(run.events) == frames and run.done


def test_a_dropped_unfinished_eval_run_is_cancelled_when_collected(server: LocalMantyx) -> None:
    _client, run, events, release = _eval_waiting_in_its_tool(server)  # the client stays open
    eval_id = run.id
    del run, events
    gc.collect()
    release.set()
    assert server.evals[eval_id].status == "cancelled"
    assert any(r.path.endswith(f"/eval-runs/{eval_id}/cancel") for r in server.requests)


def test_an_eval_stream_that_cannot_be_reopened_names_the_evaluation(server: LocalMantyx) -> None:
    server.fail_next("GET", r"/eval-runs/[^/]+/stream$", 500, times=10)
    client = server.client(stream_reconnects=1)
    agent = mantyx_sync.Agent(client, system_prompt="Weather bot.", tools=[Lookup().tool])
    run = client.evals.start(dataset=_dataset(server), agent=agent)
    with run, pytest.raises(mantyx_sync.StreamError) as caught:
        run.wait()
    assert str(caught.value).startswith(f"event stream for evaluation {run.id} could not be")
