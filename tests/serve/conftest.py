"""Fixtures for the served apps: a real WSGI server on 127.0.0.1 in front of them."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from werkzeug.serving import BaseWSGIServer, make_server

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))


class Served:
    """A WSGI app served by werkzeug's threaded server on an ephemeral port."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.server: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="test-wsgi", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(10)


@pytest.fixture
def serve_wsgi() -> Iterator[Callable[[Callable[..., Any]], Served]]:
    """``serve_wsgi(app)`` -> a running :class:`Served`; all stopped after the test."""
    started: list[Served] = []

    def start(app: Callable[..., Any]) -> Served:
        served = Served(app)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


class SlowAgent(NamedTuple):
    """An agent whose run waits in its local tool ``slow`` until :attr:`release` is set."""

    agent: mantyx_sync.Agent
    started: threading.Event
    """Set once the tool runs."""
    release: threading.Event
    """Lets the tool return (set by the fixture after the test, at the latest)."""


@pytest.fixture
def slow_agent(mantyx_server: LocalMantyx) -> Iterator[Callable[..., SlowAgent]]:
    """``slow_agent(text, final)``: the model says ``text`` and calls ``slow``, then ``final``."""
    made: list[SlowAgent] = []

    def make(text: str = "working", final: str = "done") -> SlowAgent:
        started, release = threading.Event(), threading.Event()

        @mantyx_sync.local_tool
        def slow() -> str:
            """Wait for the test."""
            started.set()
            release.wait(20)
            return "late"

        mantyx_server.set_model([Turn(text, tool_calls=[ToolCall("slow")]), Turn(final)])
        agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Wait.", tools=[slow])
        made.append(SlowAgent(agent, started, release))
        return made[-1]

    yield make
    for each in made:
        each.release.set()


@pytest.fixture
def release_on_subscribe(
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[threading.Event], threading.Event]:
    """``release_on_subscribe(release)``: set ``release`` once a client has subscribed to an
    A2A task; the returned event says that it did."""
    from mantyx_sync.serve import _a2a_tasks

    def arm(release: threading.Event) -> threading.Event:
        subscribed = threading.Event()
        original = _a2a_tasks.A2ATask.subscribe

        def subscribe(self: Any, heartbeat: float) -> Any:
            events = original(self, heartbeat)
            subscribed.set()
            release.set()
            return events

        monkeypatch.setattr(_a2a_tasks.A2ATask, "subscribe", subscribe)
        return subscribed

    return arm
