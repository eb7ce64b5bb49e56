"""Whole runs through the in-memory transport, with every socket refused.

``LocalMantyx.client(in_memory=True)`` plugs a :class:`WSGITransport` over the
emulator's WSGI app into ``Client(transport=...)``: the server is never
started, and a guard makes creating any socket fail the test. Local tools,
sessions, streams and attaching to a run then work end to end, and the same
credential, retry and error handling apply as over HTTP.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn, WSGITransport

SYSTEM = "You are a test agent."
pytestmark = pytest.mark.usefixtures("no_sockets")


class SocketUsed(AssertionError):
    """A socket was created while the guard was up."""


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise SocketUsed("a socket was opened")

    monkeypatch.setattr(socket.socket, "__init__", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@mantyx_sync.local_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _answers(ctx: Any) -> str:
    return " | ".join(f"{r['name']}={r.get('result')}" for r in ctx.tool_results)


def test_the_guard_refuses_sockets(no_sockets: None) -> None:
    with pytest.raises(SocketUsed):
        socket.socket()
    with pytest.raises(SocketUsed):
        mantyx_sync.Client("k", workspace="w", base_url="http://127.0.0.1:9").models.list()


def test_an_agent_with_local_tools_runs_with_no_socket(emulator: LocalMantyx) -> None:
    emulator.set_model(
        [
            Turn(
                "Adding.",
                tool_calls=[ToolCall("add", {"a": 2, "b": 3}), ToolCall("add", {"a": 1, "b": 1})],
            ),
            Turn(_answers),
        ]
    )
    with emulator.client(in_memory=True) as client:
        result = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[add]).run("sum")
    assert sorted(result.text.split(" | ")) == ["add=2", "add=5"]  # answered in parallel
    run = emulator.runs[result.run_id]
    assert sorted(r["result"] for r in run.tool_results.values()) == ["2", "5"]


def test_a_session_and_a_stream_with_no_socket(emulator: LocalMantyx) -> None:
    emulator.set_model(
        lambda ctx: (
            Turn(tool_calls=[ToolCall("add", {"a": 1, "b": 2})])
            if not ctx.tool_results
            else Turn(f"{len(ctx.messages)} messages, {_answers(ctx)}")
        )
    )
    with emulator.client(in_memory=True) as client:
        agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[add])
        with agent.session() as chat:
            first = chat.run("one")
            second = chat.run("two")
        types = [event.type for event in agent.stream("three")]
    assert first.text.endswith("add=3") and second.text.endswith("add=3")
    assert first.text != second.text  # the session remembered the first turn
    assert types.count("local_tool_call") == 1 and types[-1] == "result"
    assert any(r.method == "DELETE" for r in emulator.requests)  # the session was ended


def _post(transport: WSGITransport, srv: LocalMantyx, path: str, body: dict[str, Any]) -> Any:
    request = mantyx_sync.HttpRequest(
        "POST",
        f"http://emulator/api/v1/workspaces/{srv.workspace}{path}",
        {"Authorization": f"Bearer {srv.api_key}", "Content-Type": "application/json"},
        json.dumps(body).encode(),
    )
    response = transport.send(request)
    assert response.status in (200, 201, 202, 204), response.status
    content = b"".join(response)
    return json.loads(content) if content else None


def test_attach_run_with_no_socket(emulator: LocalMantyx) -> None:
    ran: list[str] = []

    @mantyx_sync.local_tool
    def first() -> str:
        """Answered by the process that died."""
        ran.append("first")
        return "again"

    @mantyx_sync.local_tool
    def second() -> str:
        """Still pending when the new process attaches."""
        ran.append("second")
        return "2"

    emulator.set_model(
        [Turn(tool_calls=[ToolCall("first", {}), ToolCall("second", {})]), Turn(_answers)]
    )
    # The "old process" starts the run and answers only the first call.
    raw = WSGITransport(emulator.app)
    spec = mantyx_sync.AgentSpec.build(system_prompt=SYSTEM, tools=[first, second])
    body = {"prompt": "x", **spec.to_body([first.to_wire(), second.to_wire()])}
    run_id = _post(raw, emulator, "/agent-runs", body)["runId"]
    call = emulator.wait_for_tool_call(timeout=5)
    _post(
        raw,
        emulator,
        f"/agent-runs/{run_id}/tool-results",
        {"toolUseId": call["toolUseId"], "result": "1"},
    )

    with emulator.client(in_memory=True) as client:
        result = client.runs.attach(run_id, tools=[first, second], settle=0.2).wait()
    assert ran == ["second"]
    assert result.text == "first=1 | second=2"


def test_a_transport_answers_with_the_client_s_credential_and_rate_limits() -> None:
    srv = LocalMantyx(rate_limits={"reads": 100})
    try:
        with srv.client(in_memory=True) as client:
            assert client.models.list().default_model_id
            assert client.rate_limits["reads"].remaining == 99
        with (
            srv.client(in_memory=True, api_key="mantyx_wrong") as client,
            pytest.raises(mantyx_sync.AuthError),
        ):
            client.models.list()
    finally:
        srv.stop()
