"""20 concurrent conversations against one served app under gunicorn (gthread workers).

Each conversation sends two messages in its own conversation id (Agent API
``session_id``, A2A ``contextId``), so every one must land in its own MANTYX
session; the agent's local tool must run in the gunicorn worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import peerkit
import pytest
import requests

from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

pytestmark = pytest.mark.timeout(120)

APP_MODULE = '''
import os
import mantyx_sync
from mantyx_sync import serve


@mantyx_sync.local_tool(read_only=True)
def whoami() -> str:
    """The serving process id."""
    return str(os.getpid())


agent = mantyx_sync.Agent(system_prompt="Answer.", tools=[whoami])
app = serve.agent_api_app(agent)
a2a = serve.a2a_app(agent)
'''


def _agent_api_turn(url: str, index: int, turn: int) -> tuple[str, str, str]:
    """(status, conversation id, answer) of one Agent API message."""
    body = {
        "input": [{"role": "user", "content": [{"type": "text", "text": f"c{index} t{turn}"}]}],
        "session_id": f"conv-{index}",
    }
    with requests.post(f"{url}/process", json=body, stream=True, timeout=60) as reply:
        reply.raise_for_status()
        objects = [
            json.loads(line[6:]) for line in reply.iter_lines() if line.startswith(b"data: ")
        ]
    final = objects[-1]
    return final["status"], final["session_id"], final["output"][-1]["content"][0]["text"]


def _a2a_turn(url: str, index: int, turn: int) -> tuple[str, str, str]:
    """(state, conversation id, answer) of one streamed A2A 1.0 message."""
    message = {
        "messageId": f"m{index}-{turn}",
        "role": "ROLE_USER",
        "parts": [{"text": f"c{index} t{turn}"}],
        "contextId": f"conv-{index}",
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": message},
    }
    with requests.post(f"{url}/", json=body, stream=True, timeout=60) as reply:
        reply.raise_for_status()
        items = [
            json.loads(line[6:])["result"]
            for line in reply.iter_lines()
            if line.startswith(b"data: ")
        ]
    answer = [i["artifactUpdate"] for i in items if "artifactUpdate" in i][-1]
    status = items[-1]["statusUpdate"]
    return (
        status["status"]["state"],
        status["contextId"],
        answer["artifact"]["parts"][0]["text"],
    )


def _server_env(server: LocalMantyx) -> dict[str, str]:
    """This environment, with the served app pointed at ``server``."""
    return dict(
        os.environ,
        MANTYX_API_KEY=server.api_key,
        MANTYX_WORKSPACE=server.workspace,
        MANTYX_BASE_URL=server.base_url,
    )


@pytest.mark.parametrize(
    ("target", "send", "done"),
    [
        ("served_app:app", _agent_api_turn, "completed"),
        ("served_app:a2a", _a2a_turn, "TASK_STATE_COMPLETED"),
    ],
    ids=["agent-api", "a2a"],
)
def test_twenty_concurrent_conversations(
    mantyx_server: LocalMantyx, tmp_path: Path, target: str, send: Any, done: str
) -> None:
    (tmp_path / "served_app.py").write_text(APP_MODULE)
    port = peerkit.free_port()
    env = _server_env(mantyx_server)
    args = ["--worker-class", "gthread", "--workers", "1", "--threads", "24"]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            *args,
            "--bind",
            f"127.0.0.1:{port}",
            "--chdir",
            str(tmp_path),
            target,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        peerkit.wait_port(port, proc)
        url = f"http://127.0.0.1:{port}"
        start = threading.Barrier(20, timeout=30)

        def conversation(index: int) -> list[tuple[str, str, str]]:
            start.wait()
            return [send(url, index, turn) for turn in range(2)]

        with ThreadPoolExecutor(20) as pool:
            results = list(pool.map(conversation, range(20)))
    finally:
        peerkit.stop(proc)
    pids = set()
    for index, turns in enumerate(results):
        for turn, (status, conversation_id, text) in enumerate(turns):
            assert status == done, (index, turn, status)
            assert conversation_id == f"conv-{index}"
            assert text.startswith(f"You said: c{index} t{turn}\nwhoami → ")
            pids.add(text.rsplit(" ", 1)[-1])
    assert len(pids) == 1 and str(os.getpid()) not in pids  # tools ran in the worker
    assert len(mantyx_server.sessions) == 20
    runs = list(mantyx_server.runs.values())
    assert len(runs) == 40 and all(r.status == "succeeded" for r in runs)
    per_session: dict[str, int] = {}
    for run in runs:
        per_session[run.session_id] = per_session.get(run.session_id, 0) + 1
    assert set(per_session.values()) == {2}


HOLD_MODULE = '''
import json
import threading

import mantyx_sync
from mantyx_sync import serve

released = threading.Event()


@mantyx_sync.local_tool
def hold() -> str:
    """Wait until released."""
    released.wait(30)
    return "late"


agent = mantyx_sync.Agent(system_prompt="Hold.", tools=[hold])
apps = {
    "agent-api": serve.agent_api_app(agent, heartbeat=0.1),
    "a2a": serve.a2a_app(agent, heartbeat=0.1),
}


def make(name):
    served = apps[name]

    def app(environ, start_response):
        # Test-only routes: what runs in this worker, and letting the tool return.
        if environ["PATH_INFO"] in ("/threads", "/release"):
            if environ["PATH_INFO"] == "/release":
                released.set()
            names = sorted(t.name for t in threading.enumerate())
            data = json.dumps(names).encode()
            start_response("200 OK", [("Content-Type", "application/json")])
            return [data]
        return served(environ, start_response)

    return app


agent_api = make("agent-api")
a2a = make("a2a")
'''


def _start_stream(url: str, protocol: str) -> requests.Response:
    if protocol == "agent-api":
        body: dict[str, Any] = {
            "input": [{"role": "user", "content": "hold on"}],
            "session_id": "gone",
        }
        return requests.post(f"{url}/process", json=body, stream=True, timeout=30)
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hold on"}]}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": message},
    }
    return requests.post(f"{url}/", json=body, stream=True, timeout=30)


@pytest.mark.parametrize("protocol", ["agent-api", "a2a"])
def test_client_gone_mid_stream_under_gunicorn(
    mantyx_server: LocalMantyx, tmp_path: Path, protocol: str
) -> None:
    (tmp_path / "held_app.py").write_text(HOLD_MODULE)
    mantyx_server.set_model([Turn("", tool_calls=[ToolCall("hold")]), Turn("never")])
    port = peerkit.free_port()
    env = _server_env(mantyx_server)
    target = "held_app:agent_api" if protocol == "agent-api" else "held_app:a2a"
    args = ["--worker-class", "gthread", "--workers", "1", "--threads", "4"]
    args += ["--bind", f"127.0.0.1:{port}", "--chdir", str(tmp_path), target]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"

    def threads() -> list[str]:
        return list(requests.get(f"{url}/threads", timeout=10).json())

    try:
        peerkit.wait_port(port, proc)
        with _start_stream(url, protocol) as reply:
            for line in reply.iter_lines():
                if b"hold" in line:  # the tool call is on the wire: the tool is running
                    break
            assert mantyx_server.wait_for_tool_call(timeout=10)
        run = mantyx_server.wait_for_run(status="cancelled", timeout=10)
        assert run.status == "cancelled"
        gate = threading.Event()
        for _ in range(200):
            if not any(n.startswith("mantyx-serve") for n in threads()):
                break
            gate.wait(0.05)  # a poll interval, not synchronisation
        assert not any(n.startswith("mantyx-serve") for n in threads())
        requests.get(f"{url}/release", timeout=10)
        for _ in range(200):
            if not any(n.startswith("mantyx-tool") for n in threads()):
                break
            gate.wait(0.05)  # a poll interval, not synchronisation
        assert not any(n.startswith("mantyx-tool") for n in threads())
    finally:
        peerkit.stop(proc)
    assert len(mantyx_server.runs) == 1
