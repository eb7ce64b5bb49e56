"""Fixtures for the emulator tests: a started server and a raw-HTTP helper.

These tests talk to the emulator with ``requests``/sockets only, never the SDK
(but for the cassettes', which replay the SDK's exchanges with ``offline``).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from mantyx_sync.testing import LocalMantyx

TIMEOUT = 5.0


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Split an SSE body into frames: ``{"id", "event", "data", "comment"}`` (present keys)."""
    frames: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        frame: dict[str, Any] = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                frame.setdefault("comment", []).append(line[1:].strip())
                continue
            field, _, value = line.partition(":")
            frame[field] = value[1:] if value.startswith(" ") else value
        frames.append(frame)
    return frames


def envelopes(text: str) -> list[dict[str, Any]]:
    """The JSON envelopes of the data frames of an SSE body."""
    return [json.loads(f["data"]) for f in parse_sse(text) if "data" in f]


class Api:
    """Raw HTTP against the emulator's workspace routes."""

    def __init__(self, server: LocalMantyx) -> None:
        self.server = server
        self.base = f"{server.base_url}/api/v1/workspaces/{server.workspace}"
        self.headers = {"Authorization": f"Bearer {server.api_key}"}

    def url(self, path: str) -> str:
        return self.base + path

    def get(self, path: str, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", TIMEOUT)
        headers = {**self.headers, **kw.pop("headers", {})}
        return requests.get(self.url(path), headers=headers, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", TIMEOUT)
        headers = {**self.headers, **kw.pop("headers", {})}
        return requests.post(self.url(path), json=body, headers=headers, **kw)

    def delete(self, path: str, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", TIMEOUT)
        return requests.delete(self.url(path), headers=self.headers, **kw)

    def create_run(self, **spec: Any) -> str:
        body = {"systemPrompt": "You are a test.", "prompt": "hello", **spec}
        response = self.post("/agent-runs", body)
        assert response.status_code in (201, 202), response.text
        run_id: str = response.json()["runId"]
        return run_id

    def stream_text(self, run_id: str, **kw: Any) -> str:
        """The whole stream body (the server closes it after the terminal event)."""
        response = self.get(f"/agent-runs/{run_id}/stream", **kw)
        assert response.status_code == 200, response.text
        return response.text

    def events(self, run_id: str, **kw: Any) -> list[dict[str, Any]]:
        return envelopes(self.stream_text(run_id, **kw))

    def tool_result(self, run_id: str, tool_use_id: str, **kw: Any) -> requests.Response:
        body = {"toolUseId": tool_use_id, **kw}
        return self.post(f"/agent-runs/{run_id}/tool-results", body)

    parse_sse = staticmethod(parse_sse)
    envelopes = staticmethod(envelopes)

    @staticmethod
    def types(events: list[dict[str, Any]]) -> list[str]:
        return [e["type"] for e in events]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every socket connection refused; the attempts are listed."""
    attempts: list[object] = []

    def refuse(*args: Any, **kwargs: Any) -> None:
        attempts.append(args)
        raise ConnectionRefusedError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield attempts


@pytest.fixture
def srv(mantyx_server: LocalMantyx) -> LocalMantyx:
    """The emulator under test: the plugin's ``mantyx_server``, by a short name."""
    return mantyx_server


@pytest.fixture
def api(srv: LocalMantyx) -> Api:
    return Api(srv)


@pytest.fixture
def make_api() -> Iterator[Any]:
    """A factory: ``make_api(**LocalMantyx kwargs) -> Api`` (servers stopped after the test)."""
    started: list[LocalMantyx] = []

    def factory(**kwargs: Any) -> Api:
        server = LocalMantyx(**kwargs)
        server.start()
        started.append(server)
        return Api(server)

    try:
        yield factory
    finally:
        for server in started:
            server.stop()
