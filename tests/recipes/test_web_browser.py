"""The web recipes in a real headless Chromium, against the emulator as MANTYX.

Each recipe runs as its users start it (``flask --app ... run``) in a
subprocess pointed at the test's emulator through MANTYX_* variables. The
emulator's model streams each delta only when the test releases it, so every
partial state of the answer is observed on the page, in order, with no sleeps.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gunicorn.config
import pytest
import requests
from recipe_support import RECIPES, GatedModel, cancel_requests, recipe_env, serve

from mantyx_sync.testing import LocalMantyx

expect: Any = pytest.importorskip("playwright.sync_api").expect

ANSWERS = {
    "alpha": ["Alpha one,", " alpha two,", " alpha three."],
    "beta": ["Beta one,", " beta two."],
    "stop me": ["Partial answer", " that is never shown."],
}
FAILURES = {"break": "the model fell over"}


def _console_script(name: str) -> list[str]:
    script = Path(sys.executable).parent / name
    return [str(script)] if script.exists() else [sys.executable, "-m", name]


def _gunicorn() -> list[str]:
    args = [*_console_script("gunicorn"), "--chdir", str(RECIPES), "-k", "gthread"]
    args += ["--threads", "8", "-w", "1", "-b", "127.0.0.1:0"]
    if any(s.name == "control_socket_disable" for s in gunicorn.config.KNOWN_SETTINGS):
        args.append("--no-control-socket")  # gunicorn 24+: no shared ~/.gunicorn socket
    return [*args, "django_app:application"]


# Each recipe started the way its docstring and the README say.
APPS = {
    "flask": (
        [*_console_script("flask"), "--app", str(RECIPES / "flask_app.py"), "run", "--port", "0"],
        r"Running on (http://127\.0\.0\.1:\d+)",
    ),
    "django-gunicorn": (_gunicorn(), r"Listening at: (http://127\.0\.0\.1:\d+)"),
}


@pytest.fixture
def gated(mantyx_server: LocalMantyx) -> Iterator[GatedModel]:
    model = GatedModel(ANSWERS, FAILURES)
    mantyx_server.set_model(model)
    yield model
    model.close()


@pytest.fixture(params=sorted(APPS))
def app_url(request: pytest.FixtureRequest, mantyx_server: LocalMantyx) -> Iterator[str]:
    args, ready = APPS[request.param]
    with serve(args, recipe_env(mantyx_server), ready) as url:
        yield url


def _open(context: Any, url: str) -> Any:
    page = context.new_page()
    page.goto(url)
    expect(page.locator("#status")).to_have_text("idle")
    return page


def _send(page: Any, prompt: str, *, wait_running: bool = True) -> None:
    page.fill("#prompt", prompt)
    page.click("#send")
    if wait_running:  # the gated model holds the run here until the test releases it
        expect(page.locator("#status")).to_have_text("running")


def test_answer_streams_into_the_page_progressively(
    app_url: str, gated: GatedModel, mantyx_server: LocalMantyx, browser_context: Any
) -> None:
    page = _open(browser_context, app_url)
    _send(page, "alpha")
    chunks = ANSWERS["alpha"]
    shown = ""
    for i, chunk in enumerate(chunks):
        gated.release("alpha")
        shown += chunk
        expect(page.locator("#answer")).to_have_text(shown)
        if i < len(chunks) - 1:  # a partial answer, the run still going
            expect(page.locator("#status")).to_have_text("running")
    expect(page.locator("#status")).to_have_text("done")
    expect(page.locator("#answer")).to_have_text("Alpha one, alpha two, alpha three.")
    run = mantyx_server.wait_for_run(status="succeeded")
    assert run.final_text == "".join(chunks)
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator("#stop")).to_be_disabled()


def test_stop_cancels_the_run_on_mantyx(
    app_url: str, gated: GatedModel, mantyx_server: LocalMantyx, browser_context: Any
) -> None:
    page = _open(browser_context, app_url)
    _send(page, "stop me")
    gated.release("stop me")
    expect(page.locator("#answer")).to_have_text("Partial answer")
    page.click("#stop")
    expect(page.locator("#status")).to_have_text("cancelled")
    run = mantyx_server.wait_for_run(status="cancelled")
    cancels = cancel_requests(mantyx_server, run.id)
    assert len(cancels) == 1 and 200 <= cancels[0].status < 300
    assert not any(e["type"] == "result" for e in run.events)
    gated.release("stop me")  # a later delta would have nowhere to go
    expect(page.locator("#answer")).to_have_text("Partial answer")
    expect(page.locator("#send")).to_be_enabled()


def test_two_tabs_stream_separate_runs(
    app_url: str, gated: GatedModel, mantyx_server: LocalMantyx, browser_context: Any
) -> None:
    first, second = _open(browser_context, app_url), _open(browser_context, app_url)
    _send(first, "alpha")
    _send(second, "beta")
    gated.release("beta")
    expect(second.locator("#answer")).to_have_text("Beta one,")
    gated.release("alpha")
    expect(first.locator("#answer")).to_have_text("Alpha one,")
    expect(second.locator("#answer")).to_have_text("Beta one,")
    gated.release("beta")
    expect(second.locator("#status")).to_have_text("done")
    expect(second.locator("#answer")).to_have_text("Beta one, beta two.")
    expect(first.locator("#status")).to_have_text("running")
    expect(first.locator("#answer")).to_have_text("Alpha one,")
    gated.release("alpha", 2)
    expect(first.locator("#status")).to_have_text("done")
    expect(first.locator("#answer")).to_have_text("Alpha one, alpha two, alpha three.")
    texts = sorted(run.final_text or "" for run in mantyx_server.runs.values())
    assert texts == ["Alpha one, alpha two, alpha three.", "Beta one, beta two."]


def test_a_failed_run_says_failed(
    app_url: str, gated: GatedModel, mantyx_server: LocalMantyx, browser_context: Any
) -> None:
    page = _open(browser_context, app_url)
    _send(page, "break", wait_running=False)  # fails at once
    expect(page.locator("#status")).to_have_text("failed")
    expect(page.locator("#error")).to_contain_text("the model fell over")
    assert mantyx_server.wait_for_run().status == "failed"


def test_bad_requests_are_refused(app_url: str, mantyx_server: LocalMantyx) -> None:
    with requests.Session() as http:
        http.get(app_url).raise_for_status()  # Django's CSRF cookie, if any
        token = {"X-CSRFToken": http.cookies.get("csrftoken", "")}
        assert http.post(f"{app_url}/stream", data=b"{}", headers=token).status_code == 400
        assert http.post(f"{app_url}/runs/run_nope/cancel", headers=token).status_code == 404
        assert http.post(f"{app_url}/runs/a.b/cancel", headers=token).status_code == 404
    assert mantyx_server.runs == {}
