"""A hostile HTTP server on 127.0.0.1 for the deadline and cap tests (imported by module name).

Each request is answered by the script its route names, written on a raw
socket: all at once, one byte at a time (:meth:`Conn.drip`), or without end
(:meth:`Conn.endless`). The server counts the bytes it sent, so a test can show
that a client stopped reading early, and notes when a client hung up.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType

__all__ = ["Conn", "Hostile", "answer", "head"]

Script = Callable[["Conn"], None]
# The most one endless answer sends: far past every cap, yet bounded if a client never stops.
_ENDLESS_MAX = 256 * 1024 * 1024


def head(
    status: int = 200, content_type: str = "application/json", length: int | None = None
) -> bytes:
    """A status line and headers; without ``length`` the body runs until the connection closes."""
    size = f"Content-Length: {length}\r\n" if length is not None else ""
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n{size}Connection: close\r\n\r\n"
    ).encode()


def answer(body: bytes, status: int = 200, content_type: str = "application/json") -> bytes:
    """A whole answer: head and ``body``."""
    return head(status, content_type, len(body)) + body


class Conn:
    """One request, as the script sees it."""

    def __init__(
        self, sock: socket.socket, server: Hostile, method: str, path: str, body: bytes
    ) -> None:
        self.sock, self.server, self.method, self.path = sock, server, method, path
        self.body = body

    def write(self, data: bytes) -> bool:
        """Send ``data``; ``False`` once the client has gone (the time is noted)."""
        try:
            self.sock.sendall(data)
        except OSError:
            self.server.hung_up.append(time.monotonic())
            return False
        self.server.count(len(data))
        return True

    def drip(self, data: bytes, every: float = 0.05) -> None:
        """``data`` one byte per ``every`` seconds: each read is quick, the answer never is."""
        for i in range(len(data)):
            if self.server.stop.wait(every) or not self.write(data[i : i + 1]):
                return  # the server's pace, not a synchronisation

    def endless(self, first: bytes, piece: bytes = b"1," * 32768) -> None:
        """``first``, then ``piece`` over and over until the client stops reading."""
        if not self.write(first):
            return
        while self.server.sent < _ENDLESS_MAX and not self.server.stop.is_set():
            if not self.write(piece):
                return


class Hostile:
    """Serve ``route(method, path)``'s script to each request, one thread per connection."""

    def __init__(self, route: Callable[[str, str], Script]) -> None:
        self._route = route
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.stop = threading.Event()
        self.sent = 0
        self.requests: list[tuple[str, str]] = []
        self.hung_up: list[float] = []
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True, name="hostile-accept")
        self._thread.start()

    def count(self, size: int) -> None:
        with self._lock:
            self.sent += size

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            self._socks.append(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        with contextlib.suppress(OSError), sock:
            data = b""
            while b"\r\n\r\n" not in data:
                more = sock.recv(65536)
                if not more:
                    return
                data += more
            top, _, rest = data.partition(b"\r\n\r\n")
            lines = top.decode("latin-1").split("\r\n")
            method, path = lines[0].split(" ")[:2]
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            while len(rest) < length:
                more = sock.recv(65536)
                if not more:
                    return
                rest += more
            self.requests.append((method, path))
            self._route(method, path)(Conn(sock, self, method, path, rest[:length]))
            sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.stop.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        for sock in self._socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(5)

    def __enter__(self) -> Hostile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
