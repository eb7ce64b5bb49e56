"""a2a_app: a client gone mid-stream, LRU eviction of sessions, stateless mode, auth."""

from __future__ import annotations

import json
import threading
from typing import Any

import peerkit
import pytest
import requests

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import Fail, LocalMantyx, Turn

pytestmark = pytest.mark.timeout(60)


def _send(url: str, text: str, context: str | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    if context:
        message["contextId"] = context
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    reply = requests.post(f"{url}/", json=body, timeout=30, **extra)
    reply.raise_for_status()
    return dict(reply.json()["result"]["task"])


def test_client_gone_mid_stream_cancels_the_run_and_leaks_nothing(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any
) -> None:
    agent, started, release = slow_agent()
    app = serve.a2a_app(agent, heartbeat=0.1)
    url = serve_wsgi(app).url
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "SendStreamingMessage",
        "params": {
            "message": {
                "messageId": "m",
                "role": "ROLE_USER",
                "parts": [{"text": "x"}],
                "contextId": "ctx-gone",
            }
        },
    }
    try:
        with requests.post(f"{url}/", json=body, stream=True, timeout=30) as reply:
            lines = reply.iter_lines()
            first = next(line for line in lines if line.startswith(b"data:"))
            assert "task" in json.loads(first[5:])["result"]
            assert started.wait(10)
        # The connection is closed: the next heartbeat write fails.
        run = mantyx_server.wait_for_run(status="cancelled", timeout=10)
        assert run.status == "cancelled"
        assert peerkit.wait_until(lambda: not peerkit.threads_named("mantyx-serve"))
        assert app.tasks.running() == []
        session = next(iter(mantyx_server.sessions.values()))
        assert session.status == "active"  # the conversation lives on, its run ended
        # ...and is free at once: the next message is not held behind the cancelled one.
        mantyx_server.set_model(lambda ctx: Turn("next"))
        task = _send(url, "again", "ctx-gone")
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert [r.session_id for r in mantyx_server.runs.values()] == [session.id] * 2
    finally:
        release.set()
    # Once the tool returns, its thread ends too; closing the app ends the session.
    assert peerkit.wait_until(lambda: not peerkit.threads_named("mantyx-tool"))
    app.close()
    assert all(s.status == "ended" for s in mantyx_server.sessions.values())


def test_lru_eviction_ends_the_oldest_session(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    app = serve.a2a_app(agent, max_sessions=2)
    url = serve_wsgi(app).url
    _send(url, "one", "ctx-a")
    _send(url, "two", "ctx-b")
    _send(url, "again", "ctx-a")  # ctx-a is now the most recent
    first_b = app.conversations.session_id("ctx-b")
    _send(url, "three", "ctx-c")
    assert app.conversations.session_id("ctx-b") is None
    assert len(app.conversations) == 2
    sessions = mantyx_server.sessions
    assert first_b is not None and sessions[first_b].status == "ended"
    assert sum(s.status == "active" for s in sessions.values()) == 2
    # An evicted context starts over in a new session.
    _send(url, "back", "ctx-b")
    assert app.conversations.session_id("ctx-b") not in (None, first_b)
    app.close()
    assert all(s.status == "ended" for s in mantyx_server.sessions.values())


def test_stateless_mode_uses_one_shot_runs(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.a2a_app(agent, conversation="stateless")).url
    task = _send(url, "one", "ctx")
    _send(url, "two", "ctx")
    assert task["contextId"] == "ctx"
    assert mantyx_server.sessions == {}
    assert len(mantyx_server.runs) == 2


def test_bearer_token(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.a2a_app(agent, authenticate=serve.bearer_token("right-token"))).url
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    assert requests.post(f"{url}/", json=rpc, timeout=10).status_code == 401
    refused = requests.post(
        f"{url}/", json=rpc, headers={"Authorization": "Bearer wrong"}, timeout=10
    )
    assert refused.status_code == 401 and "right-token" not in refused.text
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    good = {"Authorization": "Bearer right-token"}
    assert requests.get(f"{url}/health", timeout=10).status_code == 200
    assert _send(url, "hi", headers=good)["status"]["state"] == "TASK_STATE_COMPLETED"
    with pytest.raises(ValueError):
        serve.bearer_token()


def test_bad_arguments() -> None:
    agent = mantyx_sync.Agent(mantyx_sync.Client(api_key="k", workspace="w"), system_prompt="x")
    with pytest.raises(ValueError, match="conversation"):
        serve.a2a_app(agent, conversation="nope")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_sessions"):
        serve.a2a_app(agent, max_sessions=0)


def test_return_immediately_then_get_task(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any
) -> None:
    agent, _, release = slow_agent("", "finished")
    url = serve_wsgi(serve.a2a_app(agent)).url
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "bg"}]}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    try:
        task = requests.post(f"{url}/", json=body, timeout=30).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_WORKING"
    finally:
        release.set()

    def state() -> Any:
        get = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task["id"]}}
        return requests.post(f"{url}/", json=get, timeout=30).json()["result"]

    assert peerkit.wait_until(lambda: state()["status"]["state"] == "completed")
    final = state()
    assert final["kind"] == "task"  # asked in 0.3, answered in 0.3
    assert final["artifacts"][0]["parts"] == [{"kind": "text", "text": "finished"}]


def _stream_body(method: str, text: str, context: str | None = None) -> dict[str, Any]:
    if method == "message/stream":
        message: dict[str, Any] = {
            "kind": "message",
            "messageId": "m",
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
        }
    else:
        message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    if context:
        message["contextId"] = context
    return {"jsonrpc": "2.0", "id": 3, "method": method, "params": {"message": message}}


def _item(line: bytes) -> dict[str, Any]:
    return dict(json.loads(line[5:])["result"])


@pytest.mark.parametrize("method", ["message/stream", "SendStreamingMessage"])
def test_stream_is_written_while_the_run_goes_on(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any, method: str
) -> None:
    # The model says "working" and then waits in the tool until released: every
    # frame read before the release was written while the MANTYX run was going.
    agent, started, release = slow_agent("working", "done")
    url = serve_wsgi(serve.a2a_app(agent)).url
    early: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    try:
        with requests.post(
            f"{url}/", json=_stream_body(method, "go"), stream=True, timeout=30
        ) as reply:
            assert reply.headers["Content-Type"].startswith("text/event-stream")
            lines = (line for line in reply.iter_lines() if line.startswith(b"data:"))
            for line in lines:
                early.append(_item(line))
                if "calling slow" in json.dumps(early[-1]):
                    break
            assert started.wait(10) and not release.is_set()
            assert mantyx_server.wait_for_run(status="running", timeout=5).status == "running"
            release.set()
            late = [_item(line) for line in lines]
    finally:
        release.set()
    text = json.dumps(early)
    if method == "message/stream":
        assert [i["kind"] for i in early[:2]] == ["task", "status-update"]
        chunks = [i for i in early if i["kind"] == "artifact-update"]
        assert chunks[0]["artifact"]["parts"] == [{"kind": "text", "text": "working"}]
        assert late[-1]["kind"] == "status-update" and late[-1]["final"] is True
        assert late[-1]["status"]["state"] == "completed"
    else:
        assert "task" in early[0] and "statusUpdate" in early[1]
        chunks = [i["artifactUpdate"] for i in early if "artifactUpdate" in i]
        assert chunks[0]["artifact"]["parts"] == [{"text": "working"}]
        assert late[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "calling slow" in text and "done" not in text


def test_card_is_built_from_the_agent(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    @mantyx_sync.local_tool
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    def whisper(text: str) -> str:
        """Lower-case the text."""
        return text.lower()

    agent = mantyx_sync.Agent(
        mantyx_server.client(), name="loud", system_prompt="x", tools=[shout, whisper]
    )
    url = serve_wsgi(serve.a2a_app(agent)).url
    card = requests.get(f"{url}/.well-known/agent-card.json", timeout=10).json()
    assert card["name"] == "loud" and "loud" in card["description"]
    skills = {s["id"]: s for s in card["skills"]}
    assert set(skills) == {"shout", "whisper"}
    assert skills["shout"]["description"] == "Upper-case the text."
    assert skills["whisper"]["description"] == "Lower-case the text."
    assert {i["protocolVersion"] for i in card["supportedInterfaces"]} == {"0.3", "1.0"}
    assert card["protocolVersion"].startswith("0.3") and card["url"] == f"{url}/"
    # Given fields replace the built ones; the rest stays built.
    given = {"description": "Shouts.", "provider": {"organization": "Acme", "url": "https://a"}}
    url = serve_wsgi(serve.a2a_app(agent, card=given)).url
    card = requests.get(f"{url}/.well-known/agent.json", timeout=10).json()
    assert card["description"] == "Shouts." and card["provider"]["organization"] == "Acme"
    assert card["name"] == "loud" and len(card["skills"]) == 2


def test_nothing_listens_by_itself(mantyx_server: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="x")
    before = set(threading.enumerate())
    apps = [serve.a2a_app(agent), serve.agent_api_app(agent)]
    assert set(threading.enumerate()) == before  # no server thread, no socket
    assert mantyx_server.runs == {} and mantyx_server.sessions == {}
    for app in apps:
        app.close()


def test_a_session_that_cannot_be_created_is_a_json_rpc_error(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    app = serve.a2a_app(agent)
    url = serve_wsgi(app).url
    mantyx_server.fail_next("POST", r"/agent-sessions/?$", 400)
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}], "contextId": "c"}
    body = {"jsonrpc": "2.0", "id": 9, "method": "SendMessage", "params": {"message": message}}
    error = requests.post(f"{url}/", json=body, timeout=30).json()["error"]
    assert error["code"] == -32603 and "could not start" in error["message"]
    assert mantyx_server.runs == {} and len(app.conversations) == 0
    # The same context tries again with the next message.
    assert _send(url, "again", "c")["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(app.conversations) == 1


def test_a_failed_run_is_a_failed_task_with_its_error(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    mantyx_server.set_model([Fail("model exploded", code="provider_error")])
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="x")
    url = serve_wsgi(serve.a2a_app(agent, conversation="stateless")).url
    task = _send(url, "hi")
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert "model exploded" in task["status"]["message"]["parts"][0]["text"]
    mantyx_server.set_model([Fail("model exploded again", code="provider_error")])
    with requests.post(
        f"{url}/", json=_stream_body("message/stream", "hi"), stream=True, timeout=30
    ) as reply:
        last = [_item(line) for line in reply.iter_lines() if line.startswith(b"data:")][-1]
    assert last["kind"] == "status-update" and last["final"] is True
    assert last["status"]["state"] == "failed"
    assert "model exploded again" in last["status"]["message"]["parts"][0]["text"]
