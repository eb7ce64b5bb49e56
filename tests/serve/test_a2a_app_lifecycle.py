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
from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)


def _send(url: str, text: str, context: str | None = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    if context:
        message["contextId"] = context
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    reply = requests.post(f"{url}/", json=body, timeout=30, **extra)
    reply.raise_for_status()
    return dict(reply.json()["result"]["task"])


def _wait_until(predicate: Any, timeout: float = 10.0) -> bool:
    gate = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return True
        gate.wait(0.05)  # a poll interval, not synchronisation
    return bool(predicate())


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
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}},
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
        assert _wait_until(lambda: not peerkit.threads_named("mantyx-serve"))
        assert app.tasks.running() == []
        session = next(iter(mantyx_server.sessions.values()))
        assert session.status == "active"  # the conversation lives on, its run ended
    finally:
        release.set()


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
    card = f"{url}/.well-known/agent-card.json"
    assert requests.get(card, timeout=10).status_code == 401
    refused = requests.get(card, headers={"Authorization": "Bearer wrong"}, timeout=10)
    assert refused.status_code == 401 and "right-token" not in refused.text
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    good = {"Authorization": "Bearer right-token"}
    assert requests.get(card, headers=good, timeout=10).status_code == 200
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

    assert _wait_until(lambda: state()["status"]["state"] == "completed")
    final = state()
    assert final["kind"] == "task"  # asked in 0.3, answered in 0.3
    assert final["artifacts"][0]["parts"] == [{"kind": "text", "text": "finished"}]
