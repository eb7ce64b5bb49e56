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

from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(120)

APP_MODULE = '''
import os
import mantyx_sync
from mantyx_sync import serve


@mantyx_sync.local_tool
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
    env = dict(
        os.environ,
        MANTYX_API_KEY=mantyx_server.api_key,
        MANTYX_WORKSPACE=mantyx_server.workspace,
        MANTYX_BASE_URL=mantyx_server.base_url,
    )
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
