"""A tiny raw HTTP server on 127.0.0.1 for event-stream tests (imported by module name).

Every connection is answered on its own thread by ``write(conn, number, stop)``
(``number`` counts connections from 1; ``stop`` is set when the server closes)
once the request has been read, so a test states exactly which bytes go out
and when: a stall, a drip, a bad frame.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from types import TracebackType

__all__ = ["HEADERS", "RawSSE", "Writer"]

Writer = Callable[[socket.socket, int, threading.Event], None]

HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


class RawSSE:
    """Serve ``write(conn, number, stop)`` to every connection until closed.

    :ivar connections: how many connections were accepted so far.
    """

    def __init__(self, write: Writer) -> None:
        self._write = write
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self.port: int = self._listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        self.stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(
                target=self._serve, args=(conn, self.connections), daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            self._write(conn, number, self.stop)

    def close(self) -> None:
        self.stop.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        self._acceptor.join(5)
        for thread in self._threads:
            thread.join(5)

    def __enter__(self) -> RawSSE:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
