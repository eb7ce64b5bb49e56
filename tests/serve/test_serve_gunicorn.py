"""20 concurrent conversations against one served app under gunicorn (gthread workers)."""

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


def _converse(url: str, index: int) -> list[dict[str, Any]]:
    finals = []
    for turn in range(2):
        body = {
            "input": [{"role": "user", "content": [{"type": "text", "text": f"c{index} t{turn}"}]}],
            "session_id": f"conv-{index}",
        }
        with requests.post(f"{url}/process", json=body, stream=True, timeout=60) as reply:
            reply.raise_for_status()
            objects = [
                json.loads(line[6:]) for line in reply.iter_lines() if line.startswith(b"data: ")
            ]
        finals.append(objects[-1])
    return finals


def test_twenty_concurrent_conversations(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    (tmp_path / "served_app.py").write_text(APP_MODULE)
    port = peerkit.free_port()
    env = dict(
        os.environ,
        MANTYX_API_KEY=mantyx_server.api_key,
        MANTYX_WORKSPACE=mantyx_server.workspace,
        MANTYX_BASE_URL=mantyx_server.base_url,
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--worker-class",
            "gthread",
            "--workers",
            "1",
            "--threads",
            "24",
            "--bind",
            f"127.0.0.1:{port}",
            "--chdir",
            str(tmp_path),
            "served_app:app",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        peerkit.wait_port(port, proc)
        url = f"http://127.0.0.1:{port}"
        start = threading.Barrier(20, timeout=30)

        def conversation(index: int) -> list[dict[str, Any]]:
            start.wait()
            return _converse(url, index)

        with ThreadPoolExecutor(20) as pool:
            results = list(pool.map(conversation, range(20)))
    finally:
        peerkit.stop(proc)
    pids = set()
    for index, finals in enumerate(results):
        for turn, final in enumerate(finals):
            assert final["status"] == "completed", final
            assert final["session_id"] == f"conv-{index}"
            text = final["output"][-1]["content"][0]["text"]
            assert text.startswith(f"You said: c{index} t{turn}\nwhoami → ")
            pids.add(text.rsplit(" ", 1)[-1])
    assert len(pids) == 1 and str(os.getpid()) not in pids  # tools ran in the worker
    sessions = mantyx_server.sessions
    assert len(sessions) == 20
    runs = list(mantyx_server.runs.values())
    assert len(runs) == 40 and all(r.status == "succeeded" for r in runs)
    per_session: dict[str, int] = {}
    for run in runs:
        per_session[run.session_id] = per_session.get(run.session_id, 0) + 1
    assert set(per_session.values()) == {2}
