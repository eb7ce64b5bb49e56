"""What the Flask and Django recipes share: the client, the page, and run -> SSE.

The web recipes (``flask_app.py``, ``django_app.py``) only add the framework
glue. Three things here are worth copying into your own app:

* :func:`connect` makes one :class:`mantyx_sync.Client` per process (it is
  thread-safe and fork-safe: share it across requests, never build one per
  request);
* :func:`sse_run` turns one MANTYX run into Server-Sent Events and cancels the
  run when the browser goes away, so nothing keeps burning tokens;
* the page's Stop button posts to a cancel view that calls
  ``client.runs.cancel(run_id)``; the run's own stream then ends with "cancelled".

No state is kept between requests: each stream request owns its run, and the
run id travels to the page (and back with Stop) instead of living in a
server-side registry, so it works the same with many threads, processes or
machines behind a load balancer.
"""

from __future__ import annotations

import atexit
import html
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import mantyx_sync

__all__ = ["RUN_ID", "connect", "make_agent", "page", "read_prompt", "sse_run"]

log = logging.getLogger("recipes.web")

# What a MANTYX run id looks like; anything else never reaches the API URL.
RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
MAX_PROMPT_CHARS = 20_000


def connect() -> mantyx_sync.Client:
    """The process's MANTYX client: from MANTYX_* variables, else a local emulator.

    Without ``MANTYX_API_KEY`` a local MANTYX emulator is started in this
    process (offline demo: a stand-in model streams a canned answer word by
    word) and stopped when the process exits.
    """
    if os.environ.get("MANTYX_API_KEY"):
        return mantyx_sync.Client()  # MANTYX_API_KEY, MANTYX_WORKSPACE, MANTYX_BASE_URL
    from mantyx_sync.testing import LocalMantyx

    server = LocalMantyx(model=_SlowEcho()).start()
    atexit.register(server.stop)
    log.warning(
        "MANTYX_API_KEY is not set: using the local MANTYX emulator at %s "
        "(a stand-in model, not a real LLM)",
        server.base_url,
    )
    client: mantyx_sync.Client = server.client()
    return client


def make_agent(client: mantyx_sync.Client) -> mantyx_sync.Agent:
    """The agent the page talks to (immutable: one per process serves every request)."""
    return mantyx_sync.Agent(
        client, system_prompt="You are a helpful assistant. Answer in a few sentences."
    )


def read_prompt(body: bytes) -> str | None:
    """The ``prompt`` of a JSON request body, or ``None`` when missing or unusable."""
    try:
        prompt = json.loads(body or b"{}").get("prompt")
    except (ValueError, AttributeError):
        return None
    if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > MAX_PROMPT_CHARS:
        return None
    return prompt


def _frame(event: str, data: dict[str, Any]) -> bytes:
    # One SSE frame; JSON keeps newlines in the text from breaking the framing.
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def sse_run(agent: mantyx_sync.Agent, prompt: str) -> Iterator[bytes]:
    """Start a run for ``prompt`` and yield it as SSE frames, ending with ``end``.

    Frames: ``run {run_id}`` first (the page needs it for Stop), then
    ``delta {text}`` per chunk of the answer, then exactly one
    ``end {status: done|cancelled|failed, error?}``.

    If the client disconnects, the server closes this generator: the ``with``
    block then cancels the run on MANTYX.
    """
    try:
        run = agent.start(prompt)
    except mantyx_sync.MantyxError as exc:  # bad key, MANTYX unreachable, spec refused...
        log.warning("could not start a run: %s", exc)
        yield _frame("end", {"status": "failed", "error": str(exc)})
        return
    with run:  # leaving early (GeneratorExit on disconnect) cancels the run
        yield _frame("run", {"run_id": run.id})
        try:
            for event in run:
                if event.type == "assistant_delta" and event.text:
                    yield _frame("delta", {"text": event.text})
        except mantyx_sync.RunCancelledError:
            yield _frame("end", {"status": "cancelled"})
            return
        except mantyx_sync.MantyxError as exc:  # RunError, or a stream that broke for good
            log.warning("run %s failed: %s", run.id, exc)
            yield _frame("end", {"status": "failed", "error": str(exc)})
            return
    yield _frame("end", {"status": "done"})


SSE_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # tell nginx not to buffer the stream
}


def page(csrf_token: str | None = None) -> str:
    """The HTML page; ``csrf_token`` (Django) is sent back in ``X-CSRFToken``."""
    meta = f'<meta name="csrf-token" content="{html.escape(csrf_token)}">' if csrf_token else ""
    return _PAGE.replace("<!--csrf-->", meta)


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<!--csrf-->
<title>MANTYX agent</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem;
         margin: 2rem auto; padding: 0 1rem; }
  textarea { width: 100%; box-sizing: border-box; font: inherit; padding: .5rem; }
  button { font: inherit; padding: .3rem 1rem; margin: .5rem .5rem .5rem 0; }
  #answer { white-space: pre-wrap; border: 1px solid #ccc; border-radius: 4px;
            padding: .75rem; min-height: 6rem; background: #fafafa; }
  #status { font-weight: bold; } #error { color: #b00020; }
</style>
</head>
<body>
<h1>Ask the agent</h1>
<textarea id="prompt" rows="3" placeholder="Ask something..."></textarea>
<div>
  <button id="send">Send</button><button id="stop" disabled>Stop</button>
  Status: <span id="status">idle</span> <span id="error"></span>
</div>
<div id="answer"></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const csrf = document.querySelector('meta[name="csrf-token"]');
let runId = null;           // the run this tab is showing
let stopRequested = false;  // Stop pressed before the run id arrived

function headers(extra) {
  return csrf ? { ...extra, "X-CSRFToken": csrf.content } : extra;
}

function cancelRun() {
  const url = `runs/${encodeURIComponent(runId)}/cancel`;
  return fetch(url, { method: "POST", headers: headers({}) });
}

function handle(frame) {  // one SSE frame: "event: NAME" and "data: JSON" lines
  let type = "message", data = "";
  for (const line of frame.split("\\n")) {
    if (line.startsWith("event: ")) type = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  const payload = JSON.parse(data);
  if (type === "run") {
    runId = payload.run_id;
    if (stopRequested) cancelRun();
  } else if (type === "delta") {
    $("answer").textContent += payload.text;
  } else if (type === "end") {
    $("status").textContent = payload.status;
    $("error").textContent = payload.error || "";
  }
}

$("send").addEventListener("click", async () => {
  runId = null; stopRequested = false;
  $("answer").textContent = ""; $("error").textContent = "";
  $("status").textContent = "running";
  $("send").disabled = true; $("stop").disabled = false;
  try {
    // fetch + POST rather than EventSource: the prompt stays out of URLs and
    // logs, and a dropped stream is never silently re-sent as a new run.
    const response = await fetch("stream", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ prompt: $("prompt").value }),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\\n\\n")) >= 0) {
        handle(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
    if ($("status").textContent === "running") throw new Error("the stream ended early");
  } catch (err) {
    $("status").textContent = "failed";
    $("error").textContent = String(err.message || err);
  } finally {
    $("send").disabled = false; $("stop").disabled = true;
  }
});

$("stop").addEventListener("click", () => {
  $("stop").disabled = true;
  if (runId) cancelRun(); else stopRequested = true;
  // The stream then ends with status "cancelled".
});
</script>
</body>
</html>
"""


class _SlowEcho:
    """The offline demo's stand-in model: a canned answer, one word every 80 ms.

    Only used with the local emulator (no MANTYX_API_KEY); a real MANTYX
    streams the model's own answer.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # run id -> words sent so far; a run stopped midway leaves its small
        # entry behind, which is fine for an offline demo's stand-in model.
        self._sent: dict[str, int] = {}

    def __call__(self, ctx: Any) -> Any:
        from mantyx_sync.testing import Emit, Turn

        words = (
            f"You asked: {ctx.prompt!r}. This answer comes from the local MANTYX "
            "emulator, one word at a time, so you can watch it stream and stop it. "
            "Set MANTYX_API_KEY and MANTYX_WORKSPACE to talk to a real model."
        ).split(" ")
        with self._lock:
            sent = self._sent.get(ctx.run_id, 0)
            self._sent[ctx.run_id] = sent + 1
        if sent < len(words):
            time.sleep(0.08)  # pacing for people watching, not synchronisation
            return Emit("assistant_delta", {"text": words[sent] + " "})
        with self._lock:
            del self._sent[ctx.run_id]
        return Turn(" ".join(words), chunks=())
