"""Run feedback end to end: create then update, listing, limits, scopes (NEWER.md item 14)."""

from __future__ import annotations

import pickle

import pytest

import mantyx_sync
from mantyx_sync.feedback import Feedback
from mantyx_sync.testing import Fail, LocalMantyx


def _feedback_posts(server: LocalMantyx) -> list[int]:
    return [
        r.status for r in server.requests if r.method == "POST" and r.path.endswith("/feedback")
    ]


def test_feedback_created_then_updated(emulator: LocalMantyx) -> None:
    client = emulator.client(in_memory=True)
    result = mantyx_sync.Agent(client, system_prompt="s").run("hello")

    first = client.feedback.create(result.run_id, "up", content_snapshot=result.text)
    assert isinstance(first, Feedback)
    assert first.created is True and first.verdict == "up"
    assert first.agent_run_id == result.run_id and first.target_kind == "agent_run"
    stored = emulator.feedback[result.run_id]
    assert stored["verdict"] == "UP" and stored["contentSnapshot"] == result.text

    second = client.feedback.create(result.run_id, "DOWN", explanation="It only echoed me.")
    assert second.created is False and second.id == first.id and second.verdict == "down"
    assert emulator.feedback[result.run_id]["explanation"] == "It only echoed me."
    assert _feedback_posts(emulator) == [201, 200]
    sent = [r.json for r in emulator.requests if r.path.endswith("/feedback")]
    assert sent == [
        {"verdict": "UP", "contentSnapshot": result.text},
        {"verdict": "DOWN", "explanation": "It only echoed me."},
    ]

    listed = list(client.feedback.list(run_id=result.run_id))
    assert [(f.id, f.verdict, f.created) for f in listed] == [(first.id, "down", None)]


def test_feedback_on_a_failed_run_through_its_error(emulator: LocalMantyx) -> None:
    client = emulator.client(in_memory=True)
    emulator.queue_script([Fail("boom", code="provider_error")])
    with pytest.raises(mantyx_sync.RunError) as caught:
        mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt="s").run("x")
    given = client.feedback.create(caught.value.run_id or "", "down", explanation="failed")
    assert given.created is True
    assert emulator.feedback[caught.value.run_id]["verdict"] == "DOWN"


def test_list_feedback_filters_and_pages(emulator: LocalMantyx) -> None:
    client = emulator.client(in_memory=True)
    agent = mantyx_sync.Agent(client, system_prompt="s")
    results = [agent.run(f"q{i}") for i in range(5)]
    for i, result in enumerate(results):
        client.feedback.create(result.run_id, "up" if i % 2 else "down")
    emulator.clear_requests()
    downs = list(client.feedback.list(verdict="down", limit=2))
    assert [f.agent_run_id for f in downs] == [
        results[4].run_id,
        results[2].run_id,
        results[0].run_id,
    ]
    assert len([r for r in emulator.requests if r.path.endswith("/reply-feedback")]) == 2
    assert [f.agent_run_id for f in client.feedback.list(max_items=1)] == [results[4].run_id]


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"verdict": "maybe"}, "verdict"),
        ({"verdict": None}, "verdict"),
        ({"verdict": "up", "explanation": "x" * 8001}, "explanation"),
        ({"verdict": "up", "explanation": 3}, "explanation"),
        ({"verdict": "up", "content_snapshot": object()}, "content_snapshot"),
    ],
)
def test_feedback_limits_are_checked_before_sending(
    emulator: LocalMantyx, kwargs: dict[str, object], path: str
) -> None:
    client = emulator.client(in_memory=True)
    emulator.clear_requests()
    with pytest.raises(mantyx_sync.SpecError) as caught:
        client.feedback.create("run_x", **kwargs)  # type: ignore[arg-type]
    assert caught.value.path == path
    assert emulator.requests == []
    with pytest.raises(mantyx_sync.SpecError):
        client.feedback.list(verdict="sideways")


def test_an_explanation_of_exactly_8000_characters_is_accepted(emulator: LocalMantyx) -> None:
    client = emulator.client(in_memory=True)
    result = mantyx_sync.Agent(client, system_prompt="s").run("x")
    assert client.feedback.create(result.run_id, "up", explanation="x" * 8000).created is True


def test_feedback_on_an_unknown_run_is_not_found(emulator: LocalMantyx) -> None:
    with pytest.raises(mantyx_sync.NotFoundError):
        emulator.client(in_memory=True).feedback.create("run_missing", "up")


def test_a_pickled_result_cannot_reach_the_client(emulator: LocalMantyx) -> None:
    result = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt="s").run("x")
    copy = pickle.loads(pickle.dumps(result))
    assert copy == result
    with (
        pytest.warns(DeprecationWarning, match=r"client\.feedback\.create"),
        pytest.raises(mantyx_sync.MantyxError, match=r"client\.feedback"),
    ):
        copy.feedback("up")
    assert emulator.feedback == {}


def test_feedback_needs_the_feedback_write_scope() -> None:
    with LocalMantyx(oauth_tokens={"mantyx_at_reader": ["runs:read", "runs:write"]}) as server:
        client = server.client(api_key="mantyx_at_reader")
        result = mantyx_sync.Agent(client, system_prompt="s").run("x")
        with pytest.raises(mantyx_sync.PermissionDeniedError) as caught:
            client.feedback.create(result.run_id, "up")
        assert list(caught.value.required_scopes) == ["feedback:write"]


def test_result_feedback_is_deprecated_and_still_sends(emulator: LocalMantyx) -> None:
    result = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt="s").run("x")
    with pytest.warns(DeprecationWarning, match=r"client\.feedback\.create") as caught:
        given = result.feedback("up")
    assert len(caught) == 1 and caught[0].filename == __file__
    assert given.created is True and emulator.feedback[result.run_id]["verdict"] == "UP"
