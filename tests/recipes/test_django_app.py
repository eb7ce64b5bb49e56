"""The Django recipe through Django's test client (the browser tests run it under gunicorn).

Importing the recipe configures Django for this process, once; its client
then points at this module's emulator, whose model each test sets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from recipe_support import GatedModel, cancel_requests, import_recipe

from mantyx_sync.testing import LocalMantyx

pytest.importorskip("django", reason="the Django recipe needs django: pip install --group test")

ANSWERS = {"story": ["Once", " upon", " a time."]}


@pytest.fixture(scope="module")
def recipe(emulator: LocalMantyx) -> ModuleType:
    return import_recipe("django_app", emulator, DJANGO_ALLOWED_HOSTS="testserver")


@pytest.fixture
def gated(emulator: LocalMantyx) -> Iterator[GatedModel]:
    model = GatedModel(ANSWERS, {"break": "no luck"})
    emulator.set_model(model)
    emulator.clear_requests()
    yield model
    model.close()


@pytest.fixture
def browser_like(recipe: ModuleType) -> Any:
    """A test client that enforces CSRF, as a browser's requests would meet it."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    page = client.get("/")
    assert page.status_code == 200
    token = client.cookies["csrftoken"].value
    assert 'name="csrf-token"' in page.content.decode()
    client.defaults["HTTP_X_CSRFTOKEN"] = token
    return client


def _frames(chunks: Iterator[bytes]) -> Iterator[tuple[str, dict[str, Any]]]:
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n\n" in buffer:
            frame, buffer = buffer.split(b"\n\n", 1)
            event, data = frame.decode().split("\n")
            yield event.removeprefix("event: "), json.loads(data.removeprefix("data: "))


def _post_prompt(client: Any, prompt: str) -> Any:
    return client.post(
        "/stream", data=json.dumps({"prompt": prompt}), content_type="application/json"
    )


def test_page_and_stream(browser_like: Any, gated: GatedModel, emulator: LocalMantyx) -> None:
    gated.release("story", 3)
    response = _post_prompt(browser_like, "story")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/event-stream"
    assert response["Cache-Control"] == "no-cache"
    frames = list(_frames(response.streaming_content))
    response.close()
    run = emulator.wait_for_run(status="succeeded")
    assert frames == [
        ("run", {"run_id": run.id}),
        ("delta", {"text": "Once"}),
        ("delta", {"text": " upon"}),
        ("delta", {"text": " a time."}),
        ("end", {"status": "done"}),
    ]


def test_stop_cancels_the_run(browser_like: Any, gated: GatedModel, emulator: LocalMantyx) -> None:
    response = _post_prompt(browser_like, "story")
    frames = _frames(response.streaming_content)
    kind, data = next(frames)
    assert kind == "run"
    gated.release("story")
    assert next(frames) == ("delta", {"text": "Once"})
    assert browser_like.post(f"/runs/{data['run_id']}/cancel").status_code == 204
    assert list(frames) == [("end", {"status": "cancelled"})]
    response.close()
    run = emulator.wait_for_run(str(data["run_id"]), status="cancelled")
    assert len(cancel_requests(emulator, run.id)) == 1


def test_a_dropped_stream_cancels_the_run(
    browser_like: Any, gated: GatedModel, emulator: LocalMantyx
) -> None:
    response = _post_prompt(browser_like, "story")
    kind, data = next(_frames(response.streaming_content))
    assert kind == "run"
    response.close()  # what the WSGI server does when the client goes away
    run = emulator.wait_for_run(str(data["run_id"]), status="cancelled")
    assert len(cancel_requests(emulator, run.id)) == 1


def test_a_failed_run(browser_like: Any, gated: GatedModel) -> None:
    response = _post_prompt(browser_like, "break")
    kind, data = list(_frames(response.streaming_content))[-1]
    response.close()
    assert kind == "end" and data["status"] == "failed" and "no luck" in data["error"]


def test_csrf_is_enforced(recipe: ModuleType, gated: GatedModel, emulator: LocalMantyx) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    assert _post_prompt(client, "story").status_code == 403
    assert client.post("/runs/run_1/cancel").status_code == 403
    assert emulator.requests == []


def test_bad_requests(browser_like: Any, gated: GatedModel, emulator: LocalMantyx) -> None:
    assert _post_prompt(browser_like, " ").status_code == 400
    assert browser_like.get("/stream").status_code == 405
    assert browser_like.post("/runs/run_nope/cancel").status_code == 404
    assert browser_like.post("/runs/a.b/cancel").status_code == 404
    assert not any(r.path.endswith("/agent-runs") for r in emulator.requests)
