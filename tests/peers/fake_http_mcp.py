"""A minimal Streamable HTTP MCP server (werkzeug, in-process) that records what it receives.

It exists to observe the client's HTTP behaviour precisely: session-id echo,
``MCP-Protocol-Version``, the DELETE at close, and re-initialisation after the
session is forgotten (:meth:`FakeHttpMcp.expire_sessions`). Tool calls are
answered as an SSE stream that first carries a comment, a notification and a
server ``ping`` request (id 0), whose answer the client POSTs back.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response


class FakeHttpMcp:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.sessions: set[str] = set()
        self._lock = threading.Lock()
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}/mcp"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHttpMcp:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join(5)
        self._server.server_close()

    def expire_sessions(self) -> None:
        with self._lock:
            self.sessions.clear()

    def _app(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        body = json.loads(request.get_data() or b"null")
        record = {
            "verb": request.method,
            "session": request.headers.get("Mcp-Session-Id"),
            "version": request.headers.get("MCP-Protocol-Version"),
            "auth": request.headers.get("Authorization"),
            "accept": request.headers.get("Accept"),
            "body": body,
        }
        with self._lock:
            self.records.append(record)
        return self._respond(request, body)(environ, start_response)

    def _respond(self, request: Request, body: Any) -> Response:
        if request.method == "GET":
            return Response(status=405)
        if request.method == "DELETE":
            with self._lock:
                self.sessions.discard(request.headers.get("Mcp-Session-Id", ""))
            return Response(status=200)
        method = body.get("method") if isinstance(body, dict) else None
        if method == "initialize":
            session = uuid.uuid4().hex
            with self._lock:
                self.sessions.add(session)
            result = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-http", "version": "1"},
            }
            return Response(
                json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}),
                content_type="application/json",
                headers={"Mcp-Session-Id": session},
            )
        session = request.headers.get("Mcp-Session-Id")
        with self._lock:
            known = session in self.sessions
        if not known:
            status = 404 if session else 400
            error = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "Session not found"},
            }
            return Response(json.dumps(error), status=status, content_type="application/json")
        if method is None or "id" not in body:
            return Response(status=202)
        if method == "tools/list":
            tools = [{"name": "do-it", "inputSchema": {"type": "object"}}]
            payload = {"jsonrpc": "2.0", "id": body["id"], "result": {"tools": tools}}
            return Response(json.dumps(payload), content_type="application/json")
        if method == "tools/call":
            return Response(self._sse(body), content_type="text/event-stream")
        error = {"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601, "message": "nope"}}
        return Response(json.dumps(error), content_type="application/json")

    def _sse(self, body: dict[str, Any]) -> Iterator[bytes]:
        yield b": ping\r\n\r\n"
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
        yield f"event: message\r\ndata: {json.dumps(note)}\r\n\r\n".encode()
        ping = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
        yield f"event: message\r\ndata: {json.dumps(ping)}\r\n\r\n".encode()
        text = "did " + json.dumps(body["params"]["arguments"], sort_keys=True)
        result = {"content": [{"type": "text", "text": text}]}
        reply = {"jsonrpc": "2.0", "id": body["id"], "result": result}
        yield f"id: 1\nevent: message\ndata: {json.dumps(reply)}\n\n".encode()
