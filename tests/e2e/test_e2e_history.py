"""Run and session history end to end: cursor paging, filters, replay (NEWER.md 10, 12, 13)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

import mantyx_sync
from mantyx_sync.history import RunSummary, SessionEvent, SessionSummary
from mantyx_sync.testing import Fail, LocalMantyx

MODEL_A = "platform:cm6abc123"
MODEL_B = "platform:cm6ghi789"


def _seed_runs(server: LocalMantyx, count: int) -> list[str]:
    """Create ``count`` runs over raw HTTP (run ``i`` has metadata n=i) and wait for each."""
    url = f"{server.base_url}/api/v1/workspaces/{server.workspace}/agent-runs"
    headers = {"Authorization": f"Bearer {server.api_key}"}

    def create(i: int) -> str:
        body = {
            "systemPrompt": "s",
            "prompt": f"question {i}",
            "modelId": MODEL_B if i % 5 == 0 else MODEL_A,
            "metadata": {"n": str(i), "batch": "odd" if i % 2 else "even"},
        }
        reply = requests.post(url, json=body, headers=headers, timeout=10)
        reply.raise_for_status()
        return str(reply.json()["runId"])

    ids = []
    # Sequential creation keeps the newest-first order equal to i descending.
    with requests.Session():
        for i in range(count):
            ids.append(create(i))
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda rid: server.wait_for_run(rid, timeout=10), ids))
    return ids


def _list_gets(server: LocalMantyx, suffix: str) -> list[dict[str, str]]:
    return [r.query for r in server.requests if r.method == "GET" and r.path.endswith(suffix)]


def test_paging_through_250_runs_one_request_per_page(mantyx_server: LocalMantyx) -> None:
    ids = _seed_runs(mantyx_server, 250)
    client = mantyx_server.client()
    mantyx_server.clear_requests()

    runs = client.runs.list(limit=100, include_total=True)
    assert _list_gets(mantyx_server, "/agent-runs") == [], "nothing is fetched before iterating"
    first = next(runs)
    assert len(_list_gets(mantyx_server, "/agent-runs")) == 1
    assert runs.total == 250
    rest = list(runs)
    listed = [first, *rest]

    assert all(isinstance(r, RunSummary) for r in listed)
    assert [r.id for r in listed] == list(reversed(ids)), "newest first, each run once"
    queries = _list_gets(mantyx_server, "/agent-runs")
    assert len(queries) == 3
    assert queries[0] == {"limit": "100", "includeTotal": "1"}
    assert "cursor" in queries[1] and queries[2]["cursor"] != queries[1]["cursor"]
    top = listed[0]
    assert top.metadata == {"n": "249", "batch": "odd"}
    assert top.status == "succeeded" and top.model_id == MODEL_A
    assert top.input_preview == "question 249" and top.output_preview
    assert top.tokens is not None and top.tokens.input_tokens > 0
    assert top.created_at and top.completed_at and top.duration_ms is not None

    # The same 250, filtered: every page carries the filters along with the cursor.
    mantyx_server.clear_requests()
    odd = client.runs.list(metadata={"batch": "odd"}, status="succeeded", limit=50)
    assert [int(r.metadata["n"]) for r in odd] == list(range(249, 0, -2))
    queries = _list_gets(mantyx_server, "/agent-runs")
    assert len(queries) == 3
    assert all(q["metadata"] == "batch:odd" and q["status"] == "succeeded" for q in queries)
    assert ["cursor" in q for q in queries] == [False, True, True]
    fifths = client.runs.list(model_id=MODEL_B, limit=20, include_total=True)
    assert fifths.total == 50
    assert [r.id for r in fifths] == [ids[i] for i in range(245, -1, -5)]


def test_filters_combine_and_max_items_caps_the_requests(mantyx_server: LocalMantyx) -> None:
    _seed_runs(mantyx_server, 40)
    client = mantyx_server.client()

    even_b = list(client.runs.list(metadata={"batch": "even"}, model_id=MODEL_B, limit=3))
    assert [r.metadata["n"] for r in even_b] == ["30", "20", "10", "0"]
    assert {r.model_id for r in even_b} == {MODEL_B}

    both = list(client.runs.list(metadata={"batch": "odd", "n": "7"}))
    assert [r.metadata["n"] for r in both] == ["7"], "repeated metadata filters are ANDed"

    mantyx_server.clear_requests()
    capped = list(client.runs.list(limit=10, max_items=25))
    assert len(capped) == 25
    assert len(_list_gets(mantyx_server, "/agent-runs")) == 3

    mantyx_server.clear_requests()
    small = list(client.runs.list(max_items=5))
    assert len(small) == 5
    assert _list_gets(mantyx_server, "/agent-runs") == [{"limit": "5"}]
    assert list(client.runs.list(status="failed")) == []
    assert client.runs.list().total is None, "no count unless asked"


def test_status_filter_finds_failed_runs(mantyx_server: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="s")
    agent.run("fine")
    mantyx_server.queue_script([Fail("boom", code="provider_error")])
    with pytest.raises(mantyx_sync.RunError) as caught:
        agent.run("breaks")
    failed = list(agent.client.runs.list(status="failed"))
    assert [r.id for r in failed] == [caught.value.run_id]
    assert failed[0].error == "boom"


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"limit": True}, "limit"),
        ({"max_items": 0}, "max_items"),
        ({"metadata": {"bad key": "x"}}, "metadata"),
        ({"metadata": {"k": 1}}, "metadata['k']"),
        ({"status": ""}, "status"),
        ({"include_total": "yes"}, "include_total"),
    ],
)
def test_bad_list_arguments_raise_before_sending(
    mantyx_server: LocalMantyx, kwargs: dict[str, object], path: str
) -> None:
    client = mantyx_server.client()
    mantyx_server.clear_requests()
    with pytest.raises(mantyx_sync.SpecError) as caught:
        client.runs.list(**kwargs)  # type: ignore[arg-type]
    assert caught.value.path == path
    assert mantyx_server.requests == []


def test_sessions_list_filters_and_pages(mantyx_server: LocalMantyx) -> None:
    client = mantyx_server.client()
    agent = mantyx_sync.Agent(client, system_prompt="s")
    sessions = []
    for i in range(5):
        chat = agent.session(metadata={"team": "a" if i < 3 else "b"})
        chat.run(f"hello {i}")
        sessions.append(chat)
    sessions[1].end()

    listed = list(client.sessions.list(limit=2))
    assert all(isinstance(s, SessionSummary) for s in listed)
    assert [s.id for s in listed] == [s.id for s in reversed(sessions)]
    assert listed[-1].summary == "hello 0" and listed[-1].created_at
    assert len(_list_gets(mantyx_server, "/agent-sessions")) == 3

    assert [s.id for s in client.sessions.list(status="ended")] == [sessions[1].id]
    team_a = client.sessions.list(metadata={"team": "a"}, status="active")
    assert team_a.total == 2
    assert [s.id for s in team_a] == [sessions[2].id, sessions[0].id]
    with pytest.raises(mantyx_sync.SpecError, match="active"):
        client.sessions.list(status="open")
    for chat in sessions:
        chat.end()


def test_session_replay_oldest_first_typed(mantyx_server: LocalMantyx) -> None:
    client = mantyx_server.client()
    agent = mantyx_sync.Agent(client, system_prompt="s")
    long_prompt = "word " * 400
    with agent.session() as chat:
        chat.run("first")
        chat.run(
            messages=[
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "second"},
            ]
        )
        chat.run(long_prompt)

        events = list(chat.events())
        assert all(isinstance(e, SessionEvent) for e in events)
        assert [e.seq for e in events] == list(range(1, 8))
        assert [e.type for e in events] == [
            "user_message",
            "assistant_message",
            "message",
            "user_message",
            "assistant_message",
            "user_message",
            "assistant_message",
        ]
        assert [e.role for e in events][:4] == ["user", "assistant", "system", "user"]
        assert events[0].text == "first" and events[3].text == "second"
        assert events[5].text != long_prompt and events[5].text.startswith("word word")

        replay = client.sessions.events(chat.id, last=3, full=True)
        tail = list(replay)
        assert [e.seq for e in tail] == [5, 6, 7]
        assert tail[1].text == long_prompt
        assert replay.total == 7 and replay.truncated is False
        query = _list_gets(mantyx_server, "/events")[-1]
        assert query == {"lastMessages": "3", "full": "1"}
        assert chat.events().truncated is True


def test_a_sessions_history_is_the_same_typed_messages_however_it_is_read(
    mantyx_server: LocalMantyx,
) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="s")
    with agent.session() as chat:
        chat.run("first")
        chat.run("second")
        history = chat.history()
        expected = [
            mantyx_sync.Message("user", "first"),
            mantyx_sync.Message("assistant", "You said: first"),
            mantyx_sync.Message("user", "second"),
            mantyx_sync.Message("assistant", "You said: second"),
        ]
        assert history == expected
        assert list(chat.info().messages) == expected
        assert [event.message for event in chat.events(full=True)] == expected
        # The shape a run takes as input: a history can be sent on as it is.
        again = agent.run(messages=[*history, mantyx_sync.Message("user", "third")])
        assert again.text == "You said: third"
        # Reading it the old dict way still works, with a warning saying what to use.
        with pytest.warns(DeprecationWarning, match=r"use message\.content"):
            assert history[0]["content"] == "first"


def test_every_summary_names_its_timestamps_alike(mantyx_server: LocalMantyx) -> None:
    client = mantyx_server.client()
    with mantyx_sync.Agent(client, system_prompt="s").session() as chat:
        chat.run("hello")
        (run,) = client.runs.list()
        (session,) = client.sessions.list()
    assert run.created_at and session.created_at and session.last_interaction_at
    # The old names still answer, with a warning naming the new one.
    with pytest.warns(DeprecationWarning, match=r"use \.created_at"):
        assert session.creation_date == session.created_at
    with pytest.warns(DeprecationWarning, match=r"use \.last_interaction_at"):
        assert session.last_interaction_date == session.last_interaction_at


def test_replay_of_an_unknown_session_is_not_found(mantyx_server: LocalMantyx) -> None:
    client = mantyx_server.client()
    with pytest.raises(mantyx_sync.NotFoundError):
        list(client.sessions.events("ses_missing"))
    with pytest.raises(mantyx_sync.SpecError):
        client.sessions.events("ses_x", last=0)


def test_replay_pages_backwards_through_the_server(
    mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real server pages at 500 events; three here, so a short session spans pages.
    monkeypatch.setattr(mantyx_sync.history, "REPLAY_PAGE_MAX", 3)
    client = mantyx_server.client()
    with mantyx_sync.Agent(client, system_prompt="s").session() as chat:
        for i in range(4):
            chat.run(f"turn {i}")
        mantyx_server.clear_requests()

        everything = chat.events()
        assert _list_gets(mantyx_server, "/events") == [], "nothing is fetched before iterating"
        events = list(everything)
        assert [e.seq for e in events] == list(range(1, 9)), "oldest first, each event once"
        assert [e.text for e in events if e.type == "user_message"] == [
            f"turn {i}" for i in range(4)
        ]
        assert [q.get("beforeSeq") for q in _list_gets(mantyx_server, "/events")] == [
            None,
            "6",
            "3",
        ], "each page asks for the events before the oldest one in hand (nextBeforeSeq)"
        assert everything.total == 8

        mantyx_server.clear_requests()
        tail = list(client.sessions.events(chat.id, last=5))
        assert [e.seq for e in tail] == [4, 5, 6, 7, 8]
        assert _list_gets(mantyx_server, "/events") == [
            {"lastMessages": "3"},
            {"lastMessages": "2", "beforeSeq": "6"},
        ], "stops once `last` events are in hand"
