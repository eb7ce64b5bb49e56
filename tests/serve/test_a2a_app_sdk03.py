"""a2a_app against the official a2a-sdk 0.3 client (its own venv, in a subprocess)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import peerkit
import pytest

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import LocalMantyx

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(
        not peerkit.A2A03_PYTHON.exists(),
        reason="a2a-sdk 0.3 venv missing (run tests/peers/make_a2a03_venv.sh)",
    ),
]


def _peer(script: str, *args: str) -> dict[str, Any]:
    """Run ``script`` (of tests/peers) in the 0.3 venv; the JSON it printed last."""
    done = subprocess.run(
        [str(peerkit.A2A03_PYTHON), str(peerkit.PEERS / script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _client(url: str, text: str, *flags: str) -> dict[str, Any]:
    return _peer("a2a03_client.py", url, text, *flags)


@pytest.fixture
def url(mantyx_server: LocalMantyx, serve_wsgi: Any) -> str:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    return str(serve_wsgi(serve.a2a_app(agent, authenticate=serve.bearer_token("tok-123456"))).url)


def test_send_and_stream_in_0_3(url: str) -> None:
    plain = _client(url, "hi old client", "--token", "tok-123456")
    assert plain["state"] == "completed"
    assert plain["answer"] == "You said: hi old client"
    streamed = _client(url, "stream me along", "--stream", "--token", "tok-123456")
    assert streamed["kinds"][0] == "task" and "artifact-update" in streamed["kinds"]
    assert streamed["kinds"][-1] == "status-update"
    assert streamed["state"] == "completed"
    assert streamed["answer"] == "You said: stream me along"


def test_unauthenticated_client_is_refused(url: str) -> None:
    script = str(peerkit.PEERS / "a2a03_client.py")
    done = subprocess.run(
        [str(peerkit.A2A03_PYTHON), script, url, "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and "401" in done.stderr


def test_cancel_mid_stream_in_0_3(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any
) -> None:
    agent, _, release = slow_agent()
    url = serve_wsgi(serve.a2a_app(agent, heartbeat=0.2)).url
    try:
        out = _client(url, "long", "--stream", "--cancel")
    finally:
        release.set()
    assert out["cancelled_state"] == "canceled" and out["state"] == "canceled"
    assert mantyx_server.wait_for_run(status="cancelled", timeout=10).status == "cancelled"


def _ops(url: str, mode: str) -> dict[str, Any]:
    return _peer("a2a03_ops.py", url, mode)


def test_every_operation_the_card_advertises_in_0_3(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    out = _ops(str(serve_wsgi(serve.a2a_app(agent)).url), "ops")
    assert out["first_state"] == out["got_state"] == "completed"
    # The history holds the agent's reply as well as the caller's message.
    assert out["got_history"] == [["user", "first turn"], ["agent", "You said: first turn"]]
    assert out["second_context_same"] and out["second_answer"] == "You said: second turn"
    assert out["message_to_finished"] == -32004
    assert out["message_to_unknown"] == -32001
    assert out["resubscribe_finished"] == -32004
    assert out["resubscribe_unknown"] == -32001
    assert out["cancel_finished"] == -32002
    assert len(mantyx_server.sessions) == 1 and len(mantyx_server.runs) == 2


def test_resubscribe_streams_the_rest_of_a_task_in_0_3(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any, release_on_subscribe: Any
) -> None:
    agent, started, release = slow_agent(final="all done")
    subscribed = release_on_subscribe(release)
    out = _ops(str(serve_wsgi(serve.a2a_app(agent, heartbeat=0.5)).url), "resubscribe")
    assert subscribed.is_set() and started.is_set()
    assert out["started_state"] in ("submitted", "working")
    assert out["kinds"][0] == "task" and out["kinds"][-1] == "status-update"
    assert out["state"] == "completed" and out["answer"].endswith("all done")
