"""The runner's server: werkzeug's development server, with its connections bounded.

werkzeug's threaded server starts a thread for every connection as it is
accepted, and a connection that never sends its request holds that thread for
as long as the client likes. :class:`BoundedServer` instead waits for a
connection's first bytes itself (one selector, no thread per connection), hands
a connection that sent something to one of at most ``max_connections``
threads, and closes one silent for ``idle_timeout`` seconds (and, past
:data:`MAX_WAITING` silent ones, the oldest): stalled clients cost a socket
each, never a thread, and a caller that sends its request is answered at once.
Each connection carries one request (werkzeug closes it after the response).
"""

from __future__ import annotations

import collections
import logging
import selectors
import socket
import threading
import time
from typing import Any, Final

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler

__all__ = ["BoundedServer"]

log = logging.getLogger(__name__)

MAX_WAITING: Final = 512
"""Connections kept open waiting for their turn (silent, or queued for a thread);
past it the oldest silent one is closed, or if none is silent the new one."""

_Address = Any  # what accept() returns beside the socket


class BoundedServer(BaseWSGIServer):
    """Serves ``app`` on ``host:port`` with at most ``max_connections`` requests at
    once (a thread each), closing a connection idle for ``idle_timeout`` seconds.

    :meth:`serve_forever` runs on the calling thread until :meth:`shutdown`.
    """

    multithread = True

    def __init__(
        self,
        host: str,
        port: int,
        app: Any,
        *,
        max_connections: int,
        idle_timeout: float,
    ) -> None:
        # A socket timeout on every read and write: a client silent that long is dropped.
        handler = type("_Handler", (WSGIRequestHandler,), {"timeout": idle_timeout})
        super().__init__(host, port, app, handler=handler)
        self._max = max_connections
        self._idle = idle_timeout
        self._lock = threading.Lock()
        self._ready: collections.deque[tuple[socket.socket, _Address]] = collections.deque()
        self._busy = 0  # threads serving a connection
        self._stop = threading.Event()
        self._stopped = threading.Event()

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Accept and serve connections until :meth:`shutdown` (or Ctrl-C)."""
        selector = selectors.DefaultSelector()
        # Silent connections, oldest first, with the time each was accepted.
        waiting: dict[socket.socket, tuple[_Address, float]] = {}
        self.socket.setblocking(False)
        selector.register(self.socket, selectors.EVENT_READ)
        try:
            while not self._stop.is_set():
                timeout = poll_interval
                if waiting:
                    oldest = next(iter(waiting.values()))[1]
                    timeout = min(timeout, max(0.0, oldest + self._idle - time.monotonic()))
                for key, _ in selector.select(timeout):
                    if key.fileobj is self.socket:
                        self._accept(selector, waiting)
                    else:
                        conn = key.fileobj
                        assert isinstance(conn, socket.socket)
                        selector.unregister(conn)
                        self._dispatch(conn, waiting.pop(conn)[0])
                expired = time.monotonic() - self._idle
                while waiting and next(iter(waiting.values()))[1] <= expired:
                    self._drop(selector, waiting)
        except KeyboardInterrupt:
            pass
        finally:
            while waiting:
                self._drop(selector, waiting)
            selector.close()
            self.server_close()
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop :meth:`serve_forever` (from another thread) and wait until it has."""
        self._stop.set()
        self._stopped.wait()

    def _accept(
        self, selector: selectors.BaseSelector, waiting: dict[socket.socket, tuple[_Address, float]]
    ) -> None:
        while True:
            try:
                conn, address = self.socket.accept()
            except BlockingIOError:
                return
            except OSError as exc:  # out of file descriptors: make room
                log.warning("cannot accept a connection (%s); closing the oldest silent one", exc)
                if waiting:
                    self._drop(selector, waiting)
                return
            with self._lock:
                full = len(waiting) + len(self._ready) >= MAX_WAITING
            if full and not waiting:
                self.shutdown_request(conn)
                continue
            if full:
                self._drop(selector, waiting)
            conn.setblocking(True)
            waiting[conn] = (address, time.monotonic())
            selector.register(conn, selectors.EVENT_READ)

    def _drop(
        self, selector: selectors.BaseSelector, waiting: dict[socket.socket, tuple[_Address, float]]
    ) -> None:
        """Close the oldest silent connection."""
        conn = next(iter(waiting))
        del waiting[conn]
        selector.unregister(conn)
        self.shutdown_request(conn)

    def _dispatch(self, conn: socket.socket, address: _Address) -> None:
        """Serve ``conn`` on a thread of its own, or queue it while all are busy."""
        with self._lock:
            if self._busy >= self._max:
                self._ready.append((conn, address))
                return
            self._busy += 1
        threading.Thread(
            target=self._serve, args=(conn, address), name="mantyx-serve-conn", daemon=True
        ).start()

    def _serve(self, conn: socket.socket, address: _Address) -> None:
        """Serve connections until none waits its turn."""
        while True:
            try:
                self.finish_request(conn, address)
            except Exception:
                self.handle_error(conn, address)
            finally:
                self.shutdown_request(conn)
            with self._lock:
                if not self._ready:
                    self._busy -= 1
                    return
                conn, address = self._ready.popleft()
