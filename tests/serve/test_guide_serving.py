"""The guide's "Serving an agent" page: its Flask and Django snippets, run as written.

Each snippet becomes a module in a child process (Django configures itself once
per process), is served by werkzeug, and is talked to over both protocols; then
a client hangs up mid-stream on each protocol, which through the framework
must cancel the MANTYX run. The child shortens the apps' heartbeat (how soon a
hang-up is noticed) before importing the snippet; the snippet is run as written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import peerkit
import pytest

from mantyx_sync.testing import LocalMantyx, Turn

pytestmark = pytest.mark.timeout(90)

SERVING = Path(__file__).resolve().parents[2] / "docs" / "guide" / "serving.rst"

RUNNER = """
import functools
import json
import sys
import threading

import requests
from werkzeug.serving import make_server

from mantyx_sync import serve

serve.a2a_app = functools.partial(serve.a2a_app, heartbeat=0.1)
serve.agent_api_app = functools.partial(serve.agent_api_app, heartbeat=0.1)
framework, token = sys.argv[1], sys.argv[2]
if framework == "django":
    import django
    from django.conf import settings

    settings.configure(ROOT_URLCONF="snippet", ALLOWED_HOSTS=["127.0.0.1"], SECRET_KEY="t")
    django.setup()
    from django.core.wsgi import get_wsgi_application

    app = get_wsgi_application()
else:
    from snippet import app

httpd = make_server("127.0.0.1", 0, app, threaded=True)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{httpd.server_port}"
auth = {"Authorization": f"Bearer {token}"} if token else {}
# The card is public (a client discovers there that it must authenticate); the calls are not.
card = requests.get(f"{base}/a2a/.well-known/agent-card.json", timeout=10).json()
out = {"card": [card["name"], card["url"]]}
message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}
if token:  # (without one, this call would be a run of its own)
    out["refused"] = requests.post(card["url"], json=body, timeout=10).status_code
with requests.post(card["url"], json=body, headers=auth, stream=True, timeout=30) as reply:
    items = [json.loads(l[5:])["result"] for l in reply.iter_lines() if l.startswith(b"data:")]
out["a2a"] = items[-1]["statusUpdate"]["status"]["state"]
body = {"input": [{"role": "user", "content": "hello"}], "session_id": "s"}
with requests.post(
    f"{base}/agent-api/process", json=body, headers=auth, stream=True, timeout=30
) as reply:
    objects = [json.loads(l[6:]) for l in reply.iter_lines() if l.startswith(b"data: ")]
out["agent_api"] = [objects[-1]["status"], objects[-1]["output"][-1]["content"][0]["text"]]
print(json.dumps(out), flush=True)

# Hang up mid-stream on each protocol (the model holds "hold" runs until the test
# lets them go); the test checks each run is cancelled before it answers here.
message = {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "hold"}]}
streams = [
    (card["url"], {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage",
                   "params": {"message": message}}),
    (f"{base}/agent-api/process", {"input": [{"role": "user", "content": "hold"}]}),
]
for url, body in streams:
    with requests.post(url, json=body, headers=auth, stream=True, timeout=30) as reply:
        next(l for l in reply.iter_lines() if l.startswith(b"data:"))
    print("hung up", flush=True)
    sys.stdin.readline()
gate = threading.Event()
for _ in range(200):
    if not [t for t in threading.enumerate() if t.name.startswith("mantyx-serve")]:
        break
    gate.wait(0.05)  # a poll interval, not synchronisation
print(sorted(t.name for t in threading.enumerate() if t.name.startswith("mantyx-serve")))
httpd.shutdown()
"""


def _snippets() -> list[str]:
    """The page's shown Python blocks (``testcode`` without ``:hide:``), as written."""
    blocks = []
    for chunk in SERVING.read_text(encoding="utf-8").split(".. testcode::\n")[1:]:
        lines = []
        for line in chunk.splitlines():
            if line and not line.startswith("    "):
                break
            lines.append(line)
        if lines[0].strip() != ":hide:":
            blocks.append(textwrap.dedent("\n".join(lines)).strip() + "\n")
    return blocks


@pytest.mark.parametrize(("index", "framework"), [(0, "flask"), (1, "django")])
def test_guide_snippet_serves_both_protocols(
    mantyx_server: LocalMantyx, tmp_path: Path, index: int, framework: str
) -> None:
    held = threading.Event()

    def model(ctx: Any) -> Any:
        if ctx.prompt == "hold":
            held.wait(20)
        return Turn(f"You said: {ctx.prompt}")

    mantyx_server.set_model(model)
    # The page's Flask app and its Django urls.py, each run as the page shows it
    # (the page's other blocks make the token and try the Flask app in memory).
    marks = ["from flask import Flask", "# urls.py"]
    [snippet] = [block for block in _snippets() if marks[index] in block]
    (tmp_path / "snippet.py").write_text(snippet)
    (tmp_path / "runner.py").write_text(RUNNER)
    token = "readme-token" if framework == "flask" else ""
    env = dict(
        os.environ,
        MANTYX_API_KEY=mantyx_server.api_key,
        MANTYX_WORKSPACE=mantyx_server.workspace,
        MANTYX_BASE_URL=mantyx_server.base_url,
        AGENT_TOKEN=token,
        PYTHONPATH=str(tmp_path),
    )
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "runner.py"), framework, token],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        first = proc.stdout.readline()
        assert first, proc.stderr.read()[-3000:] if proc.stderr else ""
        out = json.loads(first)
        assert out.get("refused") == (401 if token else None)
        assert out["card"][0] == "helper" and out["card"][1].endswith("/a2a/")
        assert out["a2a"] == "TASK_STATE_COMPLETED"
        assert out["agent_api"] == ["completed", "You said: hello"]
        for _ in range(2):  # A2A, then the Agent API
            assert proc.stdout.readline().strip() == "hung up"
            run = mantyx_server.wait_for_run(status="cancelled", timeout=10)
            assert run.status == "cancelled"
            proc.stdin.write("next\n")
            proc.stdin.flush()
        assert proc.stdout.readline().strip() == "[]"  # no pump thread left behind
        assert proc.wait(20) == 0
    finally:
        held.set()
        peerkit.stop(proc)  # type: ignore[arg-type]
    statuses = sorted(r.status for r in mantyx_server.runs.values())
    assert statuses == ["cancelled", "cancelled", "succeeded", "succeeded"]
