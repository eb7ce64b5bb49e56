"""README.rst "Serving an agent": its Flask and Django snippets, run as written.

Each snippet becomes a module in a child process (Django configures itself once
per process), is served by werkzeug, and is talked to over both protocols.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(90)

README = Path(__file__).resolve().parents[2] / "README.rst"

RUNNER = """
import json
import sys
import threading

import requests
from werkzeug.serving import make_server

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
out = {"refused": requests.get(f"{base}/a2a/.well-known/agent-card.json", timeout=10).status_code}
card = requests.get(f"{base}/a2a/.well-known/agent-card.json", headers=auth, timeout=10).json()
out["card"] = [card["name"], card["url"]]
message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}
with requests.post(card["url"], json=body, headers=auth, stream=True, timeout=30) as reply:
    items = [json.loads(l[5:])["result"] for l in reply.iter_lines() if l.startswith(b"data:")]
out["a2a"] = items[-1]["statusUpdate"]["status"]["state"]
body = {"input": [{"role": "user", "content": "hello"}], "session_id": "s"}
with requests.post(
    f"{base}/agent-api/process", json=body, headers=auth, stream=True, timeout=30
) as reply:
    objects = [json.loads(l[6:]) for l in reply.iter_lines() if l.startswith(b"data: ")]
out["agent_api"] = [objects[-1]["status"], objects[-1]["output"][-1]["content"][0]["text"]]
httpd.shutdown()
print(json.dumps(out))
"""


def _snippets() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("Serving an agent\n----") : text.index("Notebooks\n----")]
    blocks = []
    for chunk in section.split(".. code-block:: python\n")[1:]:
        lines = []
        for line in chunk.splitlines()[1:]:
            if line and not line.startswith("    "):
                break
            lines.append(line)
        blocks.append(textwrap.dedent("\n".join(lines)))
    return blocks


@pytest.mark.parametrize(("index", "framework"), [(0, "flask"), (1, "django")])
def test_readme_snippet_serves_both_protocols(
    mantyx_server: LocalMantyx, tmp_path: Path, index: int, framework: str
) -> None:
    snippets = _snippets()
    assert len(snippets) == 2
    (tmp_path / "snippet.py").write_text(snippets[index])
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
    done = subprocess.run(
        [sys.executable, str(tmp_path / "runner.py"), framework, token],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=80,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["refused"] == (401 if token else 200)
    assert out["card"][0] == "helper" and out["card"][1].endswith("/a2a/")
    assert out["a2a"] == "TASK_STATE_COMPLETED"
    assert out["agent_api"] == ["completed", "You said: hello"]
