"""The served apps need nothing beyond the core install (no extra): a child
process that cannot import werkzeug, Flask, Django, gunicorn, a2a-sdk, httpx or
pydantic serves both apps with the standard library's ``wsgiref`` and answers
over both protocols, streaming, with a local tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)

CHILD = '''
import importlib.abc
import json
import socketserver
import sys
import threading

BLOCKED = {"werkzeug", "flask", "django", "gunicorn", "a2a", "httpx", "uvicorn",
           "starlette", "fastapi", "pydantic", "mcp"}


class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not installed here")
        return None


sys.meta_path.insert(0, Block())

from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import requests

import mantyx_sync
from mantyx_sync import serve


class Threaded(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@mantyx_sync.local_tool(read_only=True)
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


def start(app):
    httpd = make_server("127.0.0.1", 0, app, server_class=Threaded, handler_class=Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_port}"


def data(reply):
    return [json.loads(l[5:]) for l in reply.iter_lines() if l.startswith(b"data:")]


agent = mantyx_sync.Agent(system_prompt="Use tools.", tools=[shout])
out = {}
base = start(serve.a2a_app(agent))
out["card"] = requests.get(f"{base}/.well-known/agent-card.json", timeout=10).json()["skills"]
message = {"kind": "message", "messageId": "m", "role": "user",
           "parts": [{"kind": "text", "text": "hi"}]}
body = {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {"message": message}}
with requests.post(f"{base}/", json=body, stream=True, timeout=30) as reply:
    items = [i["result"] for i in data(reply)]
out["a2a"] = [items[-1]["status"]["state"],
              [i for i in items if i["kind"] == "artifact-update"][-1]["artifact"]["parts"]]
base = start(serve.agent_api_app(agent))
body = {"input": [{"role": "user", "content": "hi"}], "session_id": "s"}
with requests.post(f"{base}/process", json=body, stream=True, timeout=30) as reply:
    objects = data(reply)
out["agent_api"] = [objects[-1]["status"], objects[-1]["output"][-1]["content"][0]["text"],
                    [m["type"] for m in objects[-1]["output"]]]
out["loaded"] = sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)
print(json.dumps(out))
'''


def test_both_apps_run_on_the_core_install_alone(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    script = tmp_path / "core_only.py"
    script.write_text(CHILD)
    env = dict(
        os.environ,
        MANTYX_API_KEY=mantyx_server.api_key,
        MANTYX_WORKSPACE=mantyx_server.workspace,
        MANTYX_BASE_URL=mantyx_server.base_url,
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert [s["id"] for s in out["card"]] == ["shout"]
    assert out["a2a"] == ["completed", [{"kind": "text", "text": "You said: hi\nshout → EXAMPLE"}]]
    assert out["agent_api"] == [
        "completed",
        "You said: hi\nshout → EXAMPLE",
        ["message", "plugin_call", "plugin_call_output", "message"],
    ]
    assert out["loaded"] == []
