"""Callers never share conversations, tasks or the session cap (issue 20, item 3).

``authenticate`` names the caller; a conversation id (A2A ``contextId``, Agent
API ``session_id``) or a task id only means something to the caller that made
it, and one caller opening many conversations evicts only its own.
"""

from __future__ import annotations

from typing import Any

import peerkit
import pytest
import requests

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)

ALICE = {"Authorization": "Bearer alice-token-0123"}
BOB = {"Authorization": "Bearer bob-token-4567"}


def _tokens() -> Any:
    return serve.bearer_token("alice-token-0123", "bob-token-4567")


def _a2a(url: str, who: dict[str, str], method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = requests.post(f"{url}/", json=body, headers=who, timeout=30)
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _say(url: str, who: dict[str, str], text: str, context: str, **config: Any) -> dict[str, Any]:
    message = {
        "messageId": "m",
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "contextId": context,
    }
    params: dict[str, Any] = {"message": message}
    if config:
        params["configuration"] = config
    return dict(_a2a(url, who, "SendMessage", params)["result"]["task"])


def _sessions_of_runs(server: LocalMantyx) -> list[str | None]:
    return [run.session_id for run in server.runs.values()]


def test_a2a_context_ids_are_per_caller(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    app = serve.a2a_app(agent, authenticate=_tokens())
    url = serve_wsgi(app).url
    _say(url, ALICE, "my secret", "ctx-1")
    stolen = _say(url, BOB, "what did they say?", "ctx-1")
    assert stolen["contextId"] == "ctx-1"  # Bob's own conversation of that name
    _say(url, ALICE, "still me", "ctx-1")
    alice, bob, alice_again = _sessions_of_runs(mantyx_server)
    assert alice == alice_again and bob not in (None, alice)
    # Bob's session holds his message, and never saw Alice's.
    seen = str(mantyx_server.sessions[bob].messages)
    assert "what did they say?" in seen and "secret" not in seen


def test_a2a_tasks_are_per_caller(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any
) -> None:
    agent, started, release = slow_agent("", "finished")
    url = serve_wsgi(serve.a2a_app(agent, authenticate=_tokens())).url
    try:
        task = _say(url, ALICE, "bg", "ctx-a", returnImmediately=True)
        assert started.wait(10)
        for method in ("tasks/get", "GetTask", "tasks/cancel", "CancelTask"):
            error = _a2a(url, BOB, method, {"id": task["id"]})["error"]
            assert error["code"] == -32001, (method, error)  # not found, for Bob
        mine = _a2a(url, ALICE, "GetTask", {"id": task["id"]})["result"]
        assert mine["status"]["state"] == "TASK_STATE_WORKING"
        assert mantyx_server.wait_for_run(status="running", timeout=5).status == "running"
    finally:
        release.set()

    def state() -> str:
        return str(_a2a(url, ALICE, "GetTask", {"id": task["id"]})["result"]["status"]["state"])

    assert peerkit.wait_until(lambda: state() == "TASK_STATE_COMPLETED")
    assert _a2a(url, BOB, "GetTask", {"id": task["id"]})["error"]["code"] == -32001


def test_one_callers_flood_evicts_only_its_own_sessions(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    app = serve.a2a_app(agent, authenticate=_tokens(), max_sessions=2)
    url = serve_wsgi(app).url
    _say(url, ALICE, "keep me", "alice-ctx")
    (alice_session,) = _sessions_of_runs(mantyx_server)
    for index in range(5):
        _say(url, BOB, "flood", f"bob-{index}")
    assert alice_session is not None
    assert mantyx_server.sessions[alice_session].status == "active"
    assert sum(s.status == "active" for s in mantyx_server.sessions.values()) == 3
    _say(url, ALICE, "still there?", "alice-ctx")
    assert _sessions_of_runs(mantyx_server)[-1] == alice_session
    app.close()


def test_agent_api_session_ids_are_per_caller(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.agent_api_app(agent, authenticate=_tokens(), max_sessions=1)).url

    def say(who: dict[str, str], text: str, session: str) -> dict[str, Any]:
        body = {
            "input": [{"role": "user", "content": text}],
            "session_id": session,
            "stream": False,
        }
        reply = requests.post(f"{url}/process", json=body, headers=who, timeout=30)
        assert reply.status_code == 200, reply.text
        return dict(reply.json())

    say(ALICE, "my secret", "s-1")
    assert say(BOB, "hi", "s-1")["session_id"] == "s-1"
    say(BOB, "flood", "s-2")  # evicts Bob's s-1, not Alice's
    say(ALICE, "again", "s-1")
    alice, bob, bob_2, alice_again = _sessions_of_runs(mantyx_server)
    assert alice == alice_again and len({alice, bob, bob_2}) == 3
    assert mantyx_server.sessions[bob].status == "ended"
    assert mantyx_server.sessions[alice].status == "active"


def test_an_authenticate_hook_names_the_caller(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    def by_header(environ: dict[str, Any]) -> str | bool:
        return environ.get("HTTP_X_USER") or False

    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.a2a_app(agent, authenticate=by_header)).url
    _say(url, {"X-User": "ann"}, "one", "ctx")
    _say(url, {"X-User": "ben"}, "two", "ctx")
    _say(url, {"X-User": "ann"}, "three", "ctx")
    ann, ben, ann_again = _sessions_of_runs(mantyx_server)
    assert ann == ann_again and ben != ann
    refused = requests.post(f"{url}/", json={}, timeout=10)
    assert refused.status_code == 401


def test_a_hook_returning_true_is_one_anonymous_caller(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.a2a_app(agent, authenticate=lambda environ: True)).url
    _say(url, {}, "one", "ctx")
    _say(url, {}, "two", "ctx")
    first, second = _sessions_of_runs(mantyx_server)
    assert first == second is not None
