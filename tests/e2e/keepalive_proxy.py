"""A keep-alive HTTP/1.1 front for ``LocalMantyx`` (test helper).

The emulator's werkzeug server closes every connection after one answer, so a
client's pooled connections never outlive a request against it. Real servers
keep connections open; this proxy does too (one upstream connection per
request, the client's connection kept), so tests can see what a client leaves
open. Streams are passed through chunk by chunk as they arrive.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import socket
import threading
from types import TracebackType

__all__ = ["KeepAliveProxy"]

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream_port, timeout=60)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            upstream.request(self.command, self.path, body=body, headers=headers)
            reply = upstream.getresponse()
            streaming = "text/event-stream" in (reply.getheader("Content-Type") or "")
            self.send_response(reply.status, reply.reason)
            for key, value in reply.getheaders():
                if key.lower() not in _HOP:
                    self.send_header(key, value)
            if streaming:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while True:
                    chunk = reply.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True
            else:
                data = reply.read()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        except (OSError, http.client.HTTPException):
            # The emulator dropped the connection on purpose (a fault): do the same.
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        finally:
            upstream.close()

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _forward


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    upstream_port: int


class KeepAliveProxy:
    """Serves on 127.0.0.1 in a daemon thread; ``base_url`` points at it."""

    def __init__(self, upstream_port: int) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.upstream_port = upstream_port
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> KeepAliveProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
