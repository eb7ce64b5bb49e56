"""The web recipes started as the README says, with no MANTYX_* set: their own emulator.

Without a key each recipe starts a local MANTYX emulator in its process, whose
stand-in model streams a canned answer word by word; the page and the stream
work as they do against MANTYX.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import requests
from recipe_support import RECIPES, serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

import peerkit

pytest.importorskip("flask", reason="the Flask recipe needs flask: pip install --group test")
pytest.importorskip("django", reason="the Django recipe needs django: pip install --group test")

REPO = RECIPES.parents[1]
BIN = Path(sys.executable).parent


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _stream(http: requests.Session, url: str, prompt: str, **headers: str) -> list[Any]:
    """POST ``prompt`` to the recipe's /stream; its SSE frames as (event, data)."""
    frames = []
    with http.post(
        f"{url}/stream", json={"prompt": prompt}, headers=headers, stream=True, timeout=30
    ) as response:
        response.raise_for_status()
        assert response.headers["Content-Type"].startswith("text/event-stream")
        event = None
        for line in response.iter_lines(decode_unicode=True):
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                frames.append((event, json.loads(line.removeprefix("data: "))))
    return frames


def _check(frames: list[Any], prompt: str) -> None:
    assert frames[0][0] == "run" and frames[-1] == ("end", {"status": "done"})
    text = "".join(data["text"] for event, data in frames if event == "delta")
    assert text.startswith(f"You asked: {prompt!r}. This answer comes from the local MANTYX")
    assert sum(1 for event, _ in frames if event == "delta") > 10  # word by word


def test_flask_recipe_without_a_key() -> None:
    args = [str(BIN / "flask"), "--app", "examples/recipes/flask_app.py", "run", "--port", "0"]
    ready = r"Running on (http://127\.0\.0\.1:\d+)"
    with serve(args, _offline_env(), ready, cwd=REPO) as url, requests.Session() as http:
        assert 'id="answer"' in http.get(url, timeout=10).text
        _check(_stream(http, url, "hi"), "hi")


def test_django_recipe_without_a_key() -> None:
    port = peerkit.free_port()
    args = [
        sys.executable,
        "examples/recipes/django_app.py",
        "runserver",
        f"127.0.0.1:{port}",
        "--noreload",  # one process, so that stopping it stops everything
    ]
    ready = r"Starting development server at (http://127\.0\.0\.1:\d+)/"
    with serve(args, _offline_env(), ready, cwd=REPO) as url, requests.Session() as http:
        assert 'id="answer"' in http.get(url, timeout=10).text
        token = http.cookies["csrftoken"]
        _check(_stream(http, url, "hi", **{"X-CSRFToken": token}), "hi")
