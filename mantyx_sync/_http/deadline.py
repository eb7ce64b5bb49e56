"""One total deadline per request: connecting, sending, and every byte of the answer.

``requests`` bounds each socket operation, never a whole request: a server
that drips a byte a second holds it forever, however short the read timeout.
So the connections of the package's own sessions read and write through a
socket whose every operation waits at most the time left before the request's
deadline, and fails at once when none is left. A dripping server therefore
cannot hold a request past its deadline, and no helper thread is needed to
give up on it.

The deadline travels with the request as a :class:`Limit`: set on the sending
thread by ``with limit:`` (the connection picks it up when the request is
written), and kept by the connection's socket while the answer is read, on
whichever thread reads it. Setting ``limit.deadline = None`` frees an event
stream, whose reads are then bounded by its idle timeout alone.
"""

from __future__ import annotations

import io
import logging
import queue
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any, cast

import requests.adapters
import urllib3
import urllib3.poolmanager
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .failures import origin

__all__ = ["DeadlineAdapter", "Limit"]

log = logging.getLogger(__name__)

_local = threading.local()


class Limit:
    """The deadline of one request (``time.monotonic()`` seconds; ``None``: none).

    ``with limit:`` holds the requests sent on this thread inside the block to it.
    """

    __slots__ = ("deadline",)

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline

    def __enter__(self) -> None:
        _local.limit = self

    def __exit__(self, *exc_info: object) -> None:
        _local.limit = None


class _Socket:
    """A connected socket (plain or TLS) whose reads and writes end by the deadline.

    Each operation's timeout is the socket's own (set by urllib3) or the time
    left, whichever is shorter; everything else is the wrapped socket's.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._timeout = sock.gettimeout()
        self._cut = False
        self.limit: Limit | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)

    def settimeout(self, value: float | None) -> None:
        self._timeout = value
        self._cut = False
        self._sock.settimeout(value)

    def gettimeout(self) -> float | None:
        return self._timeout

    def _arm(self) -> None:
        limit = self.limit
        deadline = None if limit is None else limit.deadline
        if deadline is None:
            if self._cut:  # a stream freed after its headers: its own timeout again
                self.settimeout(self._timeout)
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request's deadline passed")
        if self._timeout is None or left < self._timeout:
            self._sock.settimeout(left)
            self._cut = True
        elif self._cut:
            self.settimeout(self._timeout)

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        self._arm()
        return self._sock.recv_into(buffer, nbytes, flags)

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self._arm()
        return self._sock.recv(bufsize, flags)

    def send(self, data: Any, flags: int = 0) -> int:
        self._arm()
        return self._sock.send(data, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        self._arm()  # a socket's timeout bounds a whole sendall
        self._sock.sendall(data, flags)

    def makefile(self, mode: str = "r", buffering: int | None = None, **kwargs: Any) -> Any:
        if mode != "rb":
            return self._sock.makefile(mode, buffering, **kwargs)  # type: ignore[call-overload]
        # As socket.makefile does, but reading through this object, so every
        # read of the answer (status line, headers, body) is held to the deadline.
        self._sock._io_refs += 1  # type: ignore[attr-defined]
        raw = socket.SocketIO(self, "rb")  # type: ignore[arg-type]
        size = io.DEFAULT_BUFFER_SIZE if buffering in (None, -1) else buffering
        return io.BufferedReader(raw, size)


class _Bounded(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        wrapped = _Socket(self.sock)
        wrapped.limit = getattr(_local, "limit", None)
        self.sock = wrapped

    def request(self, *args: Any, **kwargs: Any) -> None:
        if isinstance(self.sock, _Socket):  # a kept-alive connection, reused
            self.sock.limit = getattr(_local, "limit", None)
        super().request(*args, **kwargs)


class _BoundedTLS(_Bounded, HTTPSConnection):
    pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Bounded

    def _put_conn(self, conn: Any) -> None:
        # Many runs at once hold more connections than the pool keeps (it never
        # makes a request wait for one), so closing those it has no room for is
        # routine here: urllib3 would log a WARNING for each.
        try:
            self.pool.put(conn, block=False)  # type: ignore[union-attr]
            return
        except queue.Full:
            log.debug("more connections to %s than the pool keeps: one closed", self.host)
        except AttributeError:  # the pool is closed
            pass
        if conn is not None:
            conn.close()


class _TLSPool(_Pool, HTTPSConnectionPool):
    ConnectionCls = _BoundedTLS


_POOLS = {"http": _Pool, "https": _TLSPool}


class DeadlineAdapter(requests.adapters.HTTPAdapter):
    """An ``HTTPAdapter`` whose connections keep each request's :class:`Limit`
    (direct, or through an HTTP(S) proxy; a SOCKS proxy keeps its own).

    Sent to without a proxy, it finds a server's connection pool once, not on
    every request: requests would parse the URL five times per request to find
    the same pool again (about a tenth of what posting a tool result costs).
    Only the package's own sessions mount it, and they keep no cookies.
    """

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **kwargs: Any
    ) -> None:
        super().init_poolmanager(connections, maxsize, block, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS
        self._direct: dict[tuple[str, object, object], HTTPConnectionPool] = {}
        self._pools_kept = connections

    def get_connection_with_tls_context(
        self,
        request: requests.PreparedRequest,
        verify: bool | str | None,
        proxies: Mapping[str, str] | None = None,
        cert: Any = None,
    ) -> HTTPConnectionPool:
        server = None if proxies else origin(request.url or "")
        key = None if server is None else (server, verify, cert)
        pool = None if key is None else self._direct.get(key)
        if pool is None:
            pool = cast(
                HTTPConnectionPool,
                super().get_connection_with_tls_context(request, verify, proxies, cert),
            )
            if key is not None:
                if len(self._direct) >= self._pools_kept:
                    # The pool manager keeps that many pools, dropping the one least
                    # recently looked up: starting afresh here keeps every pool
                    # found here one it still holds (and closes with the session).
                    self._direct.clear()
                self._direct[key] = pool
        return pool

    def close(self) -> None:
        self._direct.clear()
        super().close()

    def build_response(
        self, req: requests.PreparedRequest, resp: urllib3.BaseHTTPResponse
    ) -> requests.Response:
        # As requests builds it, less the cookie jar it fills from each answer
        # and the text encoding: the package's own sessions send no cookies and
        # read every answer as bytes.
        response = requests.Response()
        response.status_code = resp.status
        # urllib3's own header mapping is already case-insensitive and gives a
        # repeated header's values joined, as requests' copy of it would.
        response.headers = resp.headers  # type: ignore[assignment]
        response.raw = resp
        response.reason = resp.reason  # type: ignore[assignment]
        response.url = req.url or ""
        response.request = req
        response.connection = self
        return response

    def request_url(
        self, request: requests.PreparedRequest, proxies: Mapping[str, str] | None
    ) -> str:
        if proxies:
            return super().request_url(request, proxies)
        return request.path_url

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> urllib3.poolmanager.PoolManager:
        manager: urllib3.poolmanager.PoolManager = super().proxy_manager_for(proxy, **kwargs)
        if manager.pool_classes_by_scheme is urllib3.poolmanager.pool_classes_by_scheme:
            manager.pool_classes_by_scheme = _POOLS
        return manager
