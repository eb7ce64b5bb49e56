"""Regression tests for the Streamable HTTP client: close under load, re-init races, junk ids."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import peerkit
import pytest
from peerkit import tool_call
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from mantyx_sync.errors import ToolError, ToolResolutionError
from mantyx_sync.mcp import define_local_mcp

Handler = Callable[[Request, Any], Response | None]


class Server:
    """A werkzeug MCP endpoint: sessions, initialize and tools/list built in; the
    test's ``handler`` answers everything else (or returns None for the default)."""

    def __init__(self, handler: Handler | None = None, *, sse_listener: bool = False) -> None:
        self.handler = handler
        self.sse_listener = sse_listener
        self.sessions: set[str] = set()
        self.records: list[dict[str, Any]] = []
        self.inits = 0
        self.lock = threading.Lock()
        self.release = threading.Event()  # ends anything the handler holds open
        self.server = make_server("127.0.0.1", 0, self._app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}/mcp"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.thread.join(5)
        self.server.server_close()

    def _app(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        body = json.loads(request.get_data() or b"null")
        with self.lock:
            self.records.append(
                {
                    "verb": request.method,
                    "session": request.headers.get("Mcp-Session-Id"),
                    "body": body,
                }
            )
        return self._respond(request, body)(environ, start_response)

    def _respond(self, request: Request, body: Any) -> Response:
        if request.method == "DELETE":
            return Response(status=200)
        if request.method == "GET" and not self.sse_listener:
            return Response(status=405)
        method = body.get("method") if isinstance(body, dict) else None
        if method == "initialize":
            with self.lock:
                self.inits += 1
            custom = self.handler(request, body) if self.handler else None
            if custom is not None:
                return custom
            session = uuid.uuid4().hex
            with self.lock:
                self.sessions.add(session)
            result = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "srv", "version": "1"},
            }
            return _json(
                {"jsonrpc": "2.0", "id": body["id"], "result": result},
                headers={"Mcp-Session-Id": session},
            )
        session = request.headers.get("Mcp-Session-Id")
        with self.lock:
            known = session in self.sessions
        if not known:
            status = 404 if session else 400
            error = {"code": -32600, "message": "Session not found" if session else "No session"}
            return _json({"jsonrpc": "2.0", "id": None, "error": error}, status=status)
        custom = self.handler(request, body) if self.handler else None
        if custom is not None:
            return custom
        if request.method == "GET" or "id" not in body:
            return Response(status=202)
        if method == "tools/list":
            tools = [{"name": "t", "inputSchema": {"type": "object"}}]
            return _json({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": tools}})
        return _json(_ok(body["id"], "ok"))


def _ok(request_id: Any, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": text}]},
    }


def _json(payload: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        json.dumps(payload), status=status, content_type="application/json", headers=headers
    )


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(handler: Handler | None = None, **kw: Any) -> Server:
        server = Server(handler, **kw)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def _call(conn: Any, timeout: float) -> str:
    return str(conn.call(tool_call("s_t"), timeout=timeout))


def test_close_with_many_timed_out_calls_is_quick_and_leaves_no_threads(
    serve: Callable[..., Server],
) -> None:
    # JSON reply mode that holds each call before sending any header: a worker
    # has no response to abort, only its socket.
    def hold(request: Request, body: Any) -> Response | None:
        if isinstance(body, dict) and body.get("method") == "tools/call":
            server.release.wait(30)
            return _json(_ok(body["id"], "late"))
        return None

    server = serve(hold)
    conn = define_local_mcp("s", url=server.url, timeout=30).connect()
    errors: list[BaseException] = []

    def one() -> None:
        try:
            _call(conn, 0.5)
        except BaseException as exc:
            errors.append(exc)

    callers = [threading.Thread(target=one) for _ in range(12)]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join(10)
    assert len(errors) == 12 and all(isinstance(e, ToolError) for e in errors)
    assert len(peerkit.threads_named("mantyx-mcp-s-post")) == 12
    started = time.monotonic()
    conn.close()
    assert time.monotonic() - started < 2
    deadline = time.monotonic() + 3
    for thread in peerkit.threads_named("mantyx-mcp-s-"):
        thread.join(max(0.0, deadline - time.monotonic()))
    assert not peerkit.threads_named("mantyx-mcp-s-")


def test_calls_racing_close_fail_cleanly(serve: Callable[..., Server]) -> None:
    server = serve()
    conn = define_local_mcp("s", url=server.url, timeout=5).connect()
    go = threading.Event()
    outcomes: list[object] = []

    def caller() -> None:
        go.wait(5)
        for _ in range(20):
            try:
                outcomes.append(_call(conn, 5))
            except ToolError as exc:
                outcomes.append(exc)
            except BaseException as exc:  # anything else is the bug
                outcomes.append(("unexpected", exc))

    callers = [threading.Thread(target=caller) for _ in range(8)]
    for thread in callers:
        thread.start()
    go.set()
    conn.close()
    for thread in callers:
        thread.join(10)
    assert len(outcomes) == 160
    assert not [o for o in outcomes if isinstance(o, tuple)]


def test_concurrent_call_during_reinitialise_keeps_a_session(
    serve: Callable[..., Server],
) -> None:
    reinit_started = threading.Event()
    second_call_seen = threading.Event()

    def handler(request: Request, body: Any) -> Response | None:
        if body.get("method") == "initialize" and server.inits > 1:
            reinit_started.set()
            # The re-initialise answers only once the second call reached us.
            second_call_seen.wait(5)
        return None

    server = serve(handler)
    conn = define_local_mcp("s", url=server.url, timeout=10).connect()
    with server.lock:
        server.sessions.clear()  # the server restarts and forgets the session
    results: dict[str, object] = {}

    def call(key: str) -> None:
        try:
            results[key] = _call(conn, 10)
        except BaseException as exc:
            results[key] = exc

    first = threading.Thread(target=call, args=("A",))
    first.start()
    assert reinit_started.wait(5)
    marker = len(server.records)
    second = threading.Thread(target=call, args=("B",))
    second.start()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not second_call_seen.is_set():
        with server.lock:
            seen = [r for r in server.records[marker:] if r["body"].get("method") == "tools/call"]
        if seen:
            second_call_seen.set()
        else:
            threading.Event().wait(0.02)  # polling the server's log
    first.join(10)
    second.join(10)
    conn.close()
    assert results == {"A": "ok", "B": "ok"}
    assert server.inits == 2
    sessionless = [
        r
        for r in server.records
        if r["verb"] == "POST" and r["session"] is None and r["body"].get("method") != "initialize"
    ]
    assert sessionless == []


def test_second_404_after_reinitialise_is_a_resolution_error(
    serve: Callable[..., Server],
) -> None:
    # A load balancer without sticky sessions: no node knows any session.
    def forget(request: Request, body: Any) -> Response | None:
        if body.get("method") == "tools/list":
            error = {"code": -32600, "message": "Session not found"}
            return _json({"jsonrpc": "2.0", "id": None, "error": error}, status=404)
        return None

    server = serve(forget)
    with pytest.raises(ToolResolutionError, match="lost the session again"):
        define_local_mcp("s", url=server.url, timeout=5).connect()


def test_second_404_on_a_call_is_a_tool_error(serve: Callable[..., Server]) -> None:
    def forget(request: Request, body: Any) -> Response | None:
        if body.get("method") == "tools/call":
            error = {"code": -32600, "message": "Session not found"}
            return _json({"jsonrpc": "2.0", "id": None, "error": error}, status=404)
        return None

    server = serve(forget)
    conn = define_local_mcp("s", url=server.url, timeout=5).connect()
    try:
        with pytest.raises(ToolError, match="lost the session again"):
            _call(conn, 5)
    finally:
        conn.close()


def _sse(*messages: Any) -> Iterator[bytes]:
    for message in messages:
        yield f"event: message\ndata: {json.dumps(message)}\n\n".encode()


def test_malformed_ids_keep_reply_streams_and_listener_alive(
    serve: Callable[..., Server],
) -> None:
    ping_answered = threading.Event()
    bad = [{"jsonrpc": "2.0", "id": junk, "result": {}} for junk in ({"x": 1}, [1], True)]

    def handler(request: Request, body: Any) -> Response | None:
        if request.method == "GET":

            def stream() -> Iterator[bytes]:
                yield from _sse(*bad, {"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"})
                server.release.wait(30)

            return Response(stream(), content_type="text/event-stream")
        if body.get("id") == "srv-ping" and "method" not in body:
            ping_answered.set()
            return Response(status=202)
        if body.get("method") == "tools/call":
            return Response(_sse(*bad, _ok(body["id"], "ok")), content_type="text/event-stream")
        return None

    server = serve(handler, sse_listener=True)
    conn = define_local_mcp("s", url=server.url, timeout=5).connect()
    try:
        # The GET listener survived the junk and answered the ping after it.
        assert ping_answered.wait(5)
        assert peerkit.threads_named("mantyx-mcp-s-get")
        assert _call(conn, 5) == "ok"
        assert _call(conn, 5) == "ok"
    finally:
        conn.close()


def test_a_reply_stream_with_cr_line_ends_is_answered(serve: Callable[..., Server]) -> None:
    # CR alone ends a line too (the SSE spec's CR, LF and CRLF): the shared
    # event reader sees the answer; splitting on LF only never did.
    def handler(request: Request, body: Any) -> Response | None:
        if body.get("method") == "tools/call":
            answer = f"event: message\rdata: {json.dumps(_ok(body['id'], 'ok'))}\r\r"
            return Response([answer.encode()], content_type="text/event-stream")
        return None

    server = serve(handler)
    conn = define_local_mcp("s", url=server.url, timeout=5).connect()
    try:
        assert _call(conn, 5) == "ok"
    finally:
        conn.close()


def test_a_pretty_printed_reply_frame_of_70_data_lines_is_answered(
    serve: Callable[..., Server],
) -> None:
    def handler(request: Request, body: Any) -> Response | None:
        if body.get("method") == "tools/call":
            reply = _ok(body["id"], "ok")
            reply["result"]["_meta"] = {f"k{n}": n for n in range(70)}
            text = json.dumps(reply, indent=1).splitlines()
            assert len(text) >= 70
            frame = "".join(f"data: {line}\n" for line in text) + "\n"
            return Response([frame.encode()], content_type="text/event-stream")
        return None

    server = serve(handler)
    conn = define_local_mcp("s", url=server.url, timeout=5).connect()
    try:
        assert _call(conn, 5) == "ok"
    finally:
        conn.close()
