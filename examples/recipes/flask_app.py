"""Flask recipe: stream a MANTYX run to the browser over SSE, with a Stop button.

    pip install -e ".[testing]" flask
    flask --app examples/recipes/flask_app.py run

then open http://127.0.0.1:5000/. With MANTYX_API_KEY and MANTYX_WORKSPACE set
it talks to MANTYX; otherwise to a local MANTYX emulator started in-process.

Routes: ``GET /`` the page; ``POST /stream`` ``{"prompt": ...}`` answers
``text/event-stream`` (see ``web_stream.sse_run``); ``POST /runs/<id>/cancel``
cancels a run. Serve it with a threaded or async-capable server (``flask run``
is threaded; with gunicorn use ``-k gthread --threads N``): each open stream
holds a thread for as long as its run lasts.
"""

from __future__ import annotations

import web_stream  # the page and run -> SSE, shared with the Django recipe
from flask import Flask, Response, abort, request

import mantyx_sync

app = Flask(__name__)

# One client and one agent per process, shared by every request (both are
# thread-safe). Per-request state lives in the stream's generator only.
client = web_stream.connect()
agent = web_stream.make_agent(client)


@app.get("/")
def index() -> str:
    return web_stream.page()


@app.post("/stream")
def stream() -> Response:
    prompt = web_stream.read_prompt(request.get_data())
    if prompt is None:
        abort(400, description='send JSON {"prompt": "<non-empty text>"}')
    return Response(
        web_stream.sse_run(agent, prompt),
        mimetype="text/event-stream",
        headers=web_stream.SSE_HEADERS,
    )


@app.post("/runs/<run_id>/cancel")
def cancel(run_id: str) -> tuple[str, int]:
    # Run ids are unguessable; in an app with user accounts, also check that
    # this run belongs to the signed-in user before cancelling it.
    if not web_stream.RUN_ID.fullmatch(run_id):
        abort(404)
    try:
        client.runs.cancel(run_id)
    except mantyx_sync.NotFoundError:
        abort(404)
    return "", 204
