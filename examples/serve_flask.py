"""Serve a MANTYX agent from a Flask app, over A2A and the Agent API protocol.

    python examples/serve_flask.py            # serve on http://127.0.0.1:8000 until Ctrl-C
    python examples/serve_flask.py --check    # serve on a free port, talk to it once, stop

The two apps are plain WSGI apps, mounted beside Flask's own routes with
werkzeug's ``DispatcherMiddleware`` on ``app.wsgi_app``:

* ``/a2a/``: A2A 0.3 and 1.0 (card at ``/a2a/.well-known/agent-card.json``);
* ``/agent-api/process``: the Agent API protocol (agentscope-runtime clients);
* ``/``: an ordinary Flask view.

The agent's local tool runs in this process. Uses MANTYX when MANTYX_API_KEY
is set (with MANTYX_WORKSPACE), and otherwise the bundled local emulator (no
account, no network). Needs ``pip install flask``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from typing import Any

try:
    from flask import Flask
except ImportError:
    sys.exit("this example needs Flask: pip install flask")
import requests
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.serving import make_server

import mantyx_sync
from mantyx_sync import serve


@mantyx_sync.local_tool
def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


def create_app(client: mantyx_sync.Client) -> Flask:
    """The Flask app, with both agent protocols mounted."""
    agent = mantyx_sync.Agent(
        client, name="word_counter", system_prompt="Count words.", tools=[word_count]
    )
    # In production pass authenticate=serve.bearer_token(os.environ["AGENT_TOKEN"]).
    app = Flask(__name__)

    @app.get("/")
    def index() -> str:
        return "The agent is served at /a2a/ and /agent-api/process."

    app.wsgi_app = DispatcherMiddleware(  # type: ignore[method-assign]
        app.wsgi_app,
        {"/a2a": serve.a2a_app(agent), "/agent-api": serve.agent_api_app(agent)},
    )
    return app


def check(base: str) -> None:
    """Talk to the served agent once over each protocol, as a remote system would."""
    card = requests.get(f"{base}/a2a/.well-known/agent-card.json", timeout=10).json()
    print(f"A2A card: {card['name']} at {card['url']}")
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "one two three"}]}
    reply = requests.post(
        card["url"],
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
        timeout=60,
    ).json()
    task = reply["result"]["task"]
    print(f"A2A task {task['status']['state']}: {task['artifacts'][0]['parts'][0]['text']!r}")
    body = {
        "input": [{"role": "user", "content": [{"type": "text", "text": "four five"}]}],
        "session_id": "demo",
    }
    with requests.post(f"{base}/agent-api/process", json=body, stream=True, timeout=60) as resp:
        objects = [json.loads(line[6:]) for line in resp.iter_lines() if line.startswith(b"data: ")]
    final = objects[-1]
    print(f"Agent API response {final['status']} after {len(objects)} streamed objects")
    print(f"Agent API answer: {final['output'][-1]['content'][0]['text']!r}")


def main(argv: list[str]) -> int:
    with contextlib.ExitStack() as stack:
        if os.environ.get("MANTYX_API_KEY"):
            client = stack.enter_context(mantyx_sync.Client())
        else:
            from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

            server = stack.enter_context(LocalMantyx())
            # A scripted model: count the words of the message, then say how many.
            server.set_model(
                lambda ctx: (
                    Turn("", tool_calls=[ToolCall("word_count", {"text": ctx.prompt})])
                    if ctx.turn == 0
                    else Turn(f"{ctx.tool_results[-1]['result']} words.")
                )
            )
            client = stack.enter_context(server.client())
            print(f"(local MANTYX emulator at {server.base_url})")
        app = create_app(client)
        if "--check" not in argv:
            print("Serving on http://127.0.0.1:8000 (development server); Ctrl-C to stop.")
            app.run(host="127.0.0.1", port=8000, threaded=True)
            return 0
        httpd: Any = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            print(requests.get(f"http://127.0.0.1:{httpd.server_port}/", timeout=10).text)
            check(f"http://127.0.0.1:{httpd.server_port}")
        finally:
            httpd.shutdown()
            thread.join(10)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
