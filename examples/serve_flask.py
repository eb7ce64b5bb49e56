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
import sys
from typing import Any

try:
    from flask import Flask
except ImportError:
    sys.exit("this example needs Flask: pip install flask")
# Helpers beside this file: _connect picks MANTYX or the emulator; _served_agent is
# the agent served here.
from _connect import connect
from _served_agent import check_served, count_words_model, word_counter
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.serving import make_server

import mantyx_sync
from mantyx_sync import serve


def create_app(client: mantyx_sync.Client) -> Flask:
    """The Flask app, with both agent protocols mounted."""
    agent = word_counter(client)
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


def main(argv: list[str]) -> int:
    with contextlib.ExitStack() as stack:
        client = connect(stack, count_words_model)
        app = create_app(client)
        if "--check" not in argv:
            print("Serving on http://127.0.0.1:8000 (development server); Ctrl-C to stop.")
            app.run(host="127.0.0.1", port=8000, threaded=True)
            return 0
        httpd: Any = make_server("127.0.0.1", 0, app, threaded=True)
        check_served(httpd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
