"""Serve a MANTYX agent from a Django project, over A2A and the Agent API protocol.

    python examples/serve_django.py            # serve on http://127.0.0.1:8000 until Ctrl-C
    python examples/serve_django.py --check    # serve on a free port, talk to it once, stop

A one-file Django project. The served apps are plain WSGI apps; ``wsgi_route``
turns one into a Django URL route (a view that hands the request's WSGI
environ to the app and streams its answer back), so the agent sits beside
ordinary views:

* ``/a2a/``: A2A 0.3 and 1.0 (card at ``/a2a/.well-known/agent-card.json``);
* ``/agent-api/process``: the Agent API protocol (agentscope-runtime clients);
* ``/``: an ordinary Django view.

Django's streaming response closes the app's body when the client goes away,
which cancels the MANTYX run. Uses MANTYX when MANTYX_API_KEY is set (with
MANTYX_WORKSPACE), and otherwise the bundled local emulator (no account, no
network). Needs ``pip install django``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

try:
    import django
    from django.conf import settings
    from django.core.wsgi import get_wsgi_application
    from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
    from django.urls import path, re_path
    from django.views.decorators.csrf import csrf_exempt
except ImportError:
    sys.exit("this example needs Django: pip install django")
import requests
from werkzeug.serving import make_server

import mantyx_sync
from mantyx_sync import serve

urlpatterns: list[Any] = []


def wsgi_route(prefix: str, app: Callable[..., Any]) -> Any:
    """A Django URL pattern serving the WSGI ``app`` under ``/<prefix>/``."""

    @csrf_exempt
    def view(request: HttpRequest, rest: str = "") -> HttpResponse | StreamingHttpResponse:
        environ = dict(request.META)  # the WSGI environ (wsgi.input not read by Django)
        environ["SCRIPT_NAME"] = f"{environ.get('SCRIPT_NAME', '').rstrip('/')}/{prefix}"
        environ["PATH_INFO"] = f"/{rest}"
        started: dict[str, Any] = {}

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> None:
            started.update(status=int(status.split()[0]), headers=headers)

        body = app(environ, start_response)
        if isinstance(body, list):
            response: HttpResponse | StreamingHttpResponse = HttpResponse(
                b"".join(body), status=started["status"]
            )
        else:
            # Django calls body.close() when the response ends or the client leaves.
            response = StreamingHttpResponse(body, status=started["status"])
        for name, value in started["headers"]:
            response[name] = value
        return response

    return re_path(rf"^{prefix}/(?P<rest>.*)$", view)


@mantyx_sync.local_tool
def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


def index(request: HttpRequest) -> HttpResponse:
    return HttpResponse("The agent is served at /a2a/ and /agent-api/process.")


def configure(client: mantyx_sync.Client) -> Any:
    """Settings, URL routes, and the Django WSGI application."""
    settings.configure(
        DEBUG=False,
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        SECRET_KEY="example-only",
        MIDDLEWARE=["django.middleware.common.CommonMiddleware"],
    )
    django.setup()
    agent = mantyx_sync.Agent(
        client, name="word_counter", system_prompt="Count words.", tools=[word_count]
    )
    # In production pass authenticate=serve.bearer_token(os.environ["AGENT_TOKEN"]).
    urlpatterns[:] = [
        path("", index),
        wsgi_route("a2a", serve.a2a_app(agent)),
        wsgi_route("agent-api", serve.agent_api_app(agent)),
    ]
    return get_wsgi_application()


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
        application = configure(client)
        port = 0 if "--check" in argv else 8000
        httpd: Any = make_server("127.0.0.1", port, application, threaded=True)
        if "--check" not in argv:
            print("Serving on http://127.0.0.1:8000 (development server); Ctrl-C to stop.")
            with contextlib.suppress(KeyboardInterrupt):
                httpd.serve_forever()
            return 0
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
