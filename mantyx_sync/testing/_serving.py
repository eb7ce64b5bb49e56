"""The emulator's HTTP server: werkzeug's threaded WSGI server, keeping connections open.

werkzeug's development server answers one request per connection (it cannot
tell where a request body ends, so it closes after every answer). The hosted
service keeps HTTP/1.1 connections open, and a client's connection pool is
part of what tests should exercise, so this handler serves many requests on
one connection:

* a request body is read to its declared length before the app runs, so the
  next read on the connection starts at the next request line;
* an answer of unknown length (an event stream) is sent in chunks, each chunk
  in one write (the head with the first), and ended with the last chunk;
* the connection closes when the client asks, on HTTP/1.0, after a body of
  unknown or oversized length, and when an answer fails half-way.

Stopping the server closes the connections that wait for their next request
(their threads would otherwise wait for the client); a connection in the
middle of an answer closes once it is sent.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.exceptions import InternalServerError
from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

from ._sse import drop_connection

__all__ = ["KeepAliveServer"]

log = logging.getLogger(__name__)

_BACKLOG = 4096
"""Connections the emulator lets wait to be accepted."""

_BODY_READ_AHEAD = 16 * 1024 * 1024
"""A declared body up to this size is read before the app runs; a larger one
is left to the app and its connection closed afterwards."""


class KeepAliveServer(ThreadedWSGIServer):
    """A thread per connection, many requests per connection; bound, not yet serving."""

    def __init__(self, host: str, port: int, app: Callable[..., Iterable[bytes]]) -> None:
        self._guard = threading.Lock()
        self._idle: set[socket.socket] = set()
        self._closing = False
        super().__init__(host, port, app, handler=_Handler)
        # werkzeug listens with a backlog of 128: a thousand clients connecting at
        # once overflowed it, and a create whose connection the kernel dropped
        # is not retried. Listening again raises it (the kernel caps it at somaxconn).
        self.socket.listen(_BACKLOG)

    def log(self, type: str, message: str, *args: Any) -> None:
        # werkzeug's own would print every request to stderr.
        log.debug("werkzeug %s: " + message, type, *args)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # socketserver would print the traceback to stderr.
        log.debug("error on a connection from %s", client_address, exc_info=True)

    def finish_request(self, request: Any, client_address: Any) -> None:
        if not self.rest(request):
            return
        try:
            super().finish_request(request, client_address)
        finally:
            self.busy(request)

    def rest(self, connection: socket.socket) -> bool:
        """``connection`` waits for its next request; ``False``: close it instead."""
        with self._guard:
            if not self._closing:
                self._idle.add(connection)
            return not self._closing

    def busy(self, connection: socket.socket) -> None:
        """``connection`` is answering a request (or gone)."""
        with self._guard:
            self._idle.discard(connection)

    def server_close(self) -> None:
        """Stop listening and close every connection waiting for a request."""
        super().server_close()
        with self._guard:
            self._closing = True
            idle, self._idle = self._idle, set()
        for connection in idle:
            drop_connection(connection)


class _Handler(WSGIRequestHandler):
    """One connection: requests answered one after another until either side closes."""

    server: KeepAliveServer
    protocol_version = "HTTP/1.1"
    # A connection carries many answers: small writes must not wait for the
    # client's delayed ACK (up to 40 ms each), and an answer's head and body go
    # out in one write (the writer is buffered and flushed once per piece).
    disable_nagle_algorithm = True
    wbufsize = -1

    def log(self, type: str, message: str, *args: Any) -> None:
        self.server.log(type, message, *args)

    def finish(self) -> None:
        # Closing flushes what a write to a client that left could not send.
        with contextlib.suppress(OSError):
            super().finish()

    def run_wsgi(self) -> None:
        self.server.busy(self.connection)
        if self.headers.get("Expect", "").lower().strip(" \t") == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.wfile.flush()
        self.environ = environ = self.make_environ()
        if not self._read_ahead(environ):
            self.close_connection = True  # the client left mid-body: nobody to answer
            return
        answer = _Answer(self)
        try:
            answer.send(self.server.app(environ, answer.start))
        except ConnectionError:
            self.close_connection = True
        except Exception as exc:  # the app's own failure: a 500 if nothing was sent yet
            self.close_connection = True
            self.log_error("error on request: %r", exc)
            if not answer.started:
                answer.send(InternalServerError()(environ, answer.start))
        if not self.close_connection and not self.server.rest(self.connection):
            self.close_connection = True

    def _read_ahead(self, environ: dict[str, Any]) -> bool:
        """Read the body now, so the connection is at the next request whatever the
        app reads; ``False`` if the client left before sending all of it."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True  # its end is for werkzeug's request to find
            return True
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= _BODY_READ_AHEAD:
            self.close_connection = True
            return True
        body = self.rfile.read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        return len(body) == length


class _Answer:
    """One response written to the handler's connection (the WSGI ``start_response``)."""

    def __init__(self, handler: _Handler) -> None:
        self._handler = handler
        self._status = ""
        self._headers: list[tuple[str, str]] = []
        self.started = False
        self._chunked = False

    def start(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        if exc_info is not None and self.started:
            raise exc_info[1].with_traceback(exc_info[2])
        self._status, self._headers = status, headers
        return self.write

    def send(self, chunks: Iterable[bytes]) -> None:
        try:
            for chunk in chunks:
                self.write(chunk)
            if not self.started:
                self._head()
            if self._chunked:
                self._handler.wfile.write(b"0\r\n\r\n")
            self._handler.wfile.flush()
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def write(self, data: bytes) -> None:
        if not self.started:
            self._head()
        if data:
            if self._chunked:
                data = b"%x\r\n%s\r\n" % (len(data), data)
            self._handler.wfile.write(data)
        self._handler.wfile.flush()  # each piece goes out as it comes (an event stream's too)

    def _head(self) -> None:
        handler = self._handler
        code, _, reason = self._status.partition(" ")
        status = int(code)
        handler.send_response(status, reason)
        names = set()
        for name, value in self._headers:
            handler.send_header(name, value)
            names.add(name.lower())
        bodiless = handler.command == "HEAD" or status < 200 or status in (204, 304)
        if "content-length" not in names and not bodiless:
            if handler.request_version == "HTTP/1.1":
                self._chunked = True
                handler.send_header("Transfer-Encoding", "chunked")
            else:  # an HTTP/1.0 client reads to the end of the connection
                handler.close_connection = True
        if handler.close_connection:
            handler.send_header("Connection", "close")
        handler.end_headers()
        self.started = True
