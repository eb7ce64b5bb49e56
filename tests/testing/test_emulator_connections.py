"""The emulator keeps HTTP/1.1 connections open, as the hosted service does, and
closes them when HTTP says it must."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

import pytest
import urllib3.util.connection

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

TIMEOUT = 5.0
SPEC = {"systemPrompt": "You are a test.", "prompt": "hello"}


NOOP = {
    "kind": "local",
    "name": "noop",
    "description": "Do nothing.",
    "parameters": {"type": "object", "properties": {}},
}


def _base(srv: LocalMantyx) -> str:
    return f"/api/v1/workspaces/{srv.workspace}"


def _connection(srv: LocalMantyx) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", srv.port, timeout=TIMEOUT)


def _request(
    conn: http.client.HTTPConnection,
    srv: LocalMantyx,
    method: str,
    path: str,
    body: Any = None,
    **headers: str,
) -> tuple[http.client.HTTPResponse, bytes]:
    headers = {"Authorization": f"Bearer {srv.api_key}", **headers}
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, _base(srv) + path, body=data, headers=headers)
    response = conn.getresponse()
    return response, response.read()


def _raw(srv: LocalMantyx, request: bytes, *, then_stop_sending: bool = False) -> bytes:
    """Send ``request`` on a new socket and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", srv.port), timeout=TIMEOUT) as sock:
        sock.sendall(request)
        if then_stop_sending:
            sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_connections_stay_open_through_a_run_and_its_stream(srv: LocalMantyx) -> None:
    srv.set_model([Turn(tool_calls=[ToolCall("noop", {})]), Turn("done")])
    stream, posts = _connection(srv), _connection(srv)
    response, body = _request(posts, srv, "POST", "/agent-runs", {**SPEC, "tools": [NOOP]})
    assert response.status in (201, 202), body
    assert not response.will_close
    run_id = json.loads(body)["runId"]

    # An event stream has no length: it comes in chunks, and the last chunk ends it.
    headers = {"Authorization": f"Bearer {srv.api_key}"}
    stream.request("GET", f"{_base(srv)}/agent-runs/{run_id}/stream", headers=headers)
    events = stream.getresponse()
    assert events.getheader("Transfer-Encoding") == "chunked"
    seen = b""
    while b"event: local_tool_call" not in seen:
        seen += events.readline()
    call = json.loads(events.readline().removeprefix(b"data: "))
    answer = {"toolUseId": call["data"]["toolUseId"], "result": "ok"}
    response, body = _request(posts, srv, "POST", f"/agent-runs/{run_id}/tool-results", answer)
    assert response.status == 200, body
    rest = events.read()  # to the last chunk, not to the end of the connection
    assert rest.endswith(b"}\n\n")
    assert not events.will_close

    for conn in (stream, posts):  # both still open, each serves one more request
        before = conn.sock.getsockname()
        response, _ = _request(conn, srv, "GET", "/models")
        assert response.status == 200
        assert conn.sock.getsockname() == before
    posted = [r for r in srv.requests if r.path.endswith("/tool-results")]
    assert [r.json for r in posted] == [answer]  # the body was read whole, once


def test_a_client_that_asks_to_close_is_answered_and_closed(srv: LocalMantyx) -> None:
    conn = _connection(srv)
    response, _ = _request(conn, srv, "GET", "/models", Connection="close")
    assert response.status == 200
    assert response.getheader("Connection") == "close"
    assert response.will_close


def test_an_http_1_0_client_reads_a_stream_to_the_end_of_the_connection(
    srv: LocalMantyx,
) -> None:
    srv.set_model([Turn("done")])
    conn = _connection(srv)
    _, body = _request(conn, srv, "POST", "/agent-runs", SPEC)
    path = f"{_base(srv)}/agent-runs/{json.loads(body)['runId']}/stream"
    request = f"GET {path} HTTP/1.0\r\nAuthorization: Bearer {srv.api_key}\r\n\r\n"
    received = _raw(srv, request.encode())
    head, _, body = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding" not in head.lower()
    assert b"connection: close" in head.lower()
    assert body.startswith(b"id: 1\n")  # no chunk sizes: the bytes end where the body ends
    assert body.endswith(b"}\n\n")


def test_a_chunked_upload_is_read_and_its_connection_closed(srv: LocalMantyx) -> None:
    data = json.dumps(SPEC).encode()
    path = f"{_base(srv)}/agent-runs"
    request = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {srv.api_key}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode() + b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)
    received = _raw(srv, request)  # returns only because the server closes
    assert received.startswith((b"HTTP/1.1 201", b"HTTP/1.1 202"))
    assert b"connection: close" in received.lower()
    assert srv.requests[-1].json == SPEC


def test_a_body_cut_short_is_not_served_and_its_connection_closed(srv: LocalMantyx) -> None:
    path = f"{_base(srv)}/agent-runs"
    request = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {srv.api_key}\r\n"
        "Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{"
    ).encode()
    received = _raw(srv, request, then_stop_sending=True)  # the client gives up mid-body
    assert received == b""  # nobody left to answer
    assert srv.requests == []


def test_stopping_closes_a_connection_waiting_for_its_next_request() -> None:
    srv = LocalMantyx().start()
    try:
        conn = _connection(srv)
        response, _ = _request(conn, srv, "GET", "/models")
        assert not response.will_close
    finally:
        srv.stop()
    assert conn.sock is not None
    assert conn.sock.recv(1) == b""  # closed by the server, not left to time out


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every connection urllib3 opens (requests' and so the SDK's), in order."""
    opened: list[object] = []
    real = urllib3.util.connection.create_connection

    def counted(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        opened.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(urllib3.util.connection, "create_connection", counted)
    return opened


def test_the_sdk_sends_one_request_after_another_on_one_connection(
    srv: LocalMantyx, connections: list[object]
) -> None:
    with srv.client() as client:
        for _ in range(5):
            list(client.runs.list(limit=5))
    assert len(srv.requests) == 5
    assert len(connections) == 1


def test_the_sdk_answers_tool_calls_on_connections_it_already_has(
    srv: LocalMantyx, connections: list[object]
) -> None:
    @mantyx_sync.local_tool(read_only=True)
    def noop() -> str:
        """Do nothing."""
        return "ok"

    srv.set_model([Turn(tool_calls=[ToolCall("noop", {})]) for _ in range(16)] + [Turn("done")])
    with srv.client() as client:
        result = mantyx_sync.Agent(client, system_prompt="t", tools=[noop]).run("go")
    assert result.text == "done"
    assert len([r for r in srv.requests if r.path.endswith("/tool-results")]) == 16
    # The stream holds a connection of its own. The next call can arrive before
    # the answer to the last is read, so how many more the answers need depends
    # on the threads' timing; never one each.
    assert len(connections) < len(srv.requests), connections


def _answering(srv: LocalMantyx, answer: Any) -> None:
    """From now on ``answer`` (a WSGI app) answers every request ``srv`` serves
    (its app is switched to a subclass of its own class)."""
    app = srv.app
    app.__class__ = type("Answering", (type(app),), {"__call__": lambda _, e, s: answer(e, s)})


def test_an_app_that_fails_is_answered_500_and_its_connection_closed(srv: LocalMantyx) -> None:
    def app(environ: Any, start_response: Any) -> Any:
        raise RuntimeError("a bug in the app")

    _answering(srv, app)
    conn = _connection(srv)
    conn.request("GET", "/")
    response = conn.getresponse()
    response.read()
    assert response.status == 500
    assert response.will_close


def test_an_answer_that_fails_half_way_is_cut_short(srv: LocalMantyx) -> None:
    def app(environ: Any, start_response: Any) -> Any:
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        yield b"data: one\n\n"
        raise RuntimeError("a bug in the app")

    _answering(srv, app)
    conn = _connection(srv)
    conn.request("GET", "/")
    response = conn.getresponse()
    assert response.status == 200
    with pytest.raises(http.client.IncompleteRead) as cut:
        response.read()  # no last chunk: the client can tell the answer is incomplete
    assert cut.value.partial == b"data: one\n\n"


def test_small_answers_are_sent_at_once_on_an_open_connection(srv: LocalMantyx) -> None:
    # With Nagle's algorithm on, a second small write on a kept-open connection
    # waits for the client's delayed ACK (40 ms on Linux) before it is sent.
    def app(environ: Any, start_response: Any) -> Any:
        sock = environ["werkzeug.socket"]
        nodelay = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        start_response("200 OK", [("Content-Length", "1")])
        return [b"1" if nodelay else b"0"]

    _answering(srv, app)
    conn = _connection(srv)
    conn.request("GET", "/")
    assert conn.getresponse().read() == b"1"
