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


def _client(url: str, text: str, *flags: str) -> dict[str, Any]:
    script = str(peerkit.PEERS / "a2a03_client.py")
    done = subprocess.run(
        [str(peerkit.A2A03_PYTHON), script, url, text, *flags],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


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
