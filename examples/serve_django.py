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
import sys
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
# Helpers beside this file: _connect picks MANTYX or the emulator; _served_agent is
# the agent served here.
from _connect import connect
from _served_agent import check_served, count_words_model, word_counter
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
    agent = word_counter(client)
    # In production pass authenticate=serve.bearer_token(os.environ["AGENT_TOKEN"]).
    urlpatterns[:] = [
        path("", index),
        wsgi_route("a2a", serve.a2a_app(agent)),
        wsgi_route("agent-api", serve.agent_api_app(agent)),
    ]
    return get_wsgi_application()


def main(argv: list[str]) -> int:
    with contextlib.ExitStack() as stack:
        client = connect(stack, count_words_model)
        application = configure(client)
        port = 0 if "--check" in argv else 8000
        httpd: Any = make_server("127.0.0.1", port, application, threaded=True)
        if "--check" not in argv:
            print("Serving on http://127.0.0.1:8000 (development server); Ctrl-C to stop.")
            with contextlib.suppress(KeyboardInterrupt):
                httpd.serve_forever()
            return 0
        check_served(httpd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
