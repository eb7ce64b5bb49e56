"""Django recipe, in one file: stream a MANTYX run to the browser, with a Stop button.

The same page and stream as the Flask recipe, as a ``StreamingHttpResponse``.
Run it with Django's development server or any WSGI server::

    pip install -e ".[testing]" django gunicorn
    python examples/recipes/django_app.py runserver
    gunicorn --chdir examples/recipes -k gthread --threads 8 django_app:application

then open http://127.0.0.1:8000/. With MANTYX_API_KEY and MANTYX_WORKSPACE set
it talks to MANTYX; otherwise to a local MANTYX emulator started in-process.

Every open stream holds a worker thread while its run lasts, so use threaded
workers (gunicorn's ``gthread``), not gunicorn's default one-request ``sync``
worker. In a real project these settings go in settings.py, the views in
views.py, and ``client``/``agent`` in a module both import.
"""

from __future__ import annotations

import os
import secrets
import sys

import django
import web_stream  # the page and run -> SSE, shared with the Flask recipe
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    StreamingHttpResponse,
)
from django.middleware.csrf import get_token
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

import mantyx_sync

settings.configure(
    DEBUG=os.environ.get("DJANGO_DEBUG") == "1",
    # Set DJANGO_SECRET_KEY in production; a random one only suits a demo.
    SECRET_KEY=os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50),
    ALLOWED_HOSTS=os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(","),
    ROOT_URLCONF=__name__,
    # POSTs carry the CSRF token the page got from get_token() (X-CSRFToken).
    MIDDLEWARE=["django.middleware.csrf.CsrfViewMiddleware"],
)
django.setup()

# One client and one agent per process, shared by every request (both are
# thread-safe). Per-request state lives in the stream's generator only.
client = web_stream.connect()
agent = web_stream.make_agent(client)


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return HttpResponse(web_stream.page(csrf_token=get_token(request)))


@require_POST
def stream(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    prompt = web_stream.read_prompt(request.body)
    if prompt is None:
        return HttpResponseBadRequest('send JSON {"prompt": "<non-empty text>"}')
    # Django closes the generator when the client goes away, which cancels the run.
    return StreamingHttpResponse(
        web_stream.sse_run(agent, prompt),
        content_type="text/event-stream",
        headers=web_stream.SSE_HEADERS,
    )


@require_POST
def cancel(request: HttpRequest, run_id: str) -> HttpResponse:
    # Run ids are unguessable; in an app with user accounts, also check that
    # this run belongs to the signed-in user before cancelling it.
    if not web_stream.RUN_ID.fullmatch(run_id):
        raise Http404("no such run")
    try:
        client.runs.cancel(run_id)
    except mantyx_sync.NotFoundError:
        raise Http404("no such run") from None
    return HttpResponse(status=204)


urlpatterns = [
    path("", index),
    path("stream", stream),
    path("runs/<str:run_id>/cancel", cancel),
]

application = get_wsgi_application()

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
