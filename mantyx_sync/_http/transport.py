"""The default transport: bytes over ``requests``' connections, and nothing else.

The seam itself (:class:`~mantyx_sync.transport.Transport`) is public.
Everything else — the credential, JSON, statuses as errors, rate limits,
retries, routes — sits above the seam (:mod:`.api`), so it works the same over
any transport: this :class:`RequestsTransport`, or ``mantyx_sync.testing``'s
in-memory one.

:class:`RequestsTransport` translates every ``requests``/``urllib3`` exception
(:mod:`.failures`) into the :mod:`mantyx_sync.errors` tree. One
``requests.Session`` (:mod:`.pools`) serves all threads of a process,
configured once and never mutated per call (headers go per request); after
``fork()`` (gunicorn, Celery prefork) the child builds its own, so sockets are
never shared between processes.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Iterator, Mapping

import requests

from .._base.bounded import CHUNK
from ..errors import MantyxError
from ..transport import HttpRequest
from .deadline import Limit
from .failures import NETWORK_ERRORS, translate, whole_body
from .pools import adapter_verify, close_session, new_session, prepare

__all__ = ["CLOSED", "RequestsTransport"]

CLOSED = "this client is closed; create a new Client"


class _Answer:
    """A ``requests`` response as an :class:`HttpResponse`; a streamed body is
    read with ``read1``, so a small event is never held back."""

    def __init__(
        self, response: requests.Response, *, read_timeout: float, content: bytes | None
    ) -> None:
        self.status: int = response.status_code
        self.headers: Mapping[str, str] = response.headers
        self._response = response
        self._closed = False
        self._read_timeout = read_timeout
        self._content = content
        self._streamed = content is None

    def __iter__(self) -> Iterator[bytes]:
        if self._content is not None:
            return iter((self._content,))
        return self._chunks()

    def _chunks(self) -> Iterator[bytes]:
        raw = self._response.raw
        try:
            while not self._closed:
                chunk = raw.read1(CHUNK)
                if not chunk:
                    return
                yield chunk
        except Exception as exc:
            if self._closed:
                return  # closed from another thread: whatever the read ran into
            if not isinstance(exc, NETWORK_ERRORS):
                raise  # a bug, not the network: never mistaken for a drop to resume
            raise translate(
                exc, self._response.url, read_timeout=self._read_timeout, reading=True
            ) from exc

    def close(self) -> None:
        # The socket is shut down first: closing it alone would leave a reader
        # blocked in ``recv`` on another thread until the server sends something.
        if not self._closed:
            self._closed = True
            if self._streamed:
                with contextlib.suppress(Exception):  # already released or closed
                    self._response.raw.shutdown()
            self._response.close()


class RequestsTransport:
    """The default :class:`Transport`: ``requests`` with a pooled, fork-safe session.

    :param base_url: the server's origin (its proxy settings are read once).
    :param session: a ``requests.Session`` to use instead of our own (for
        proxies or custom TLS); it keeps its hooks, auth and adapters, and is
        shared across forks as given.

    Thread-safe: call it from any number of threads.
    """

    def __init__(self, base_url: str, *, session: requests.Session | None = None) -> None:
        self._base_url = base_url
        self._given_session = session
        self._lock = threading.Lock()
        self._pid = -1
        self._session: requests.Session | None = None
        self._closed = False
        # Open event streams, so close() can end them from any thread.
        self._streams: weakref.WeakSet[_Answer] = weakref.WeakSet()

    def _get_session(self) -> requests.Session:
        pid = os.getpid()
        session = self._session
        if session is not None and self._pid == pid:
            return session
        with self._lock:
            if self._closed:
                # A late request (a tool result posted from a pool thread after
                # the run ended) must not open a pool that nothing will close.
                raise MantyxError(CLOSED)
            if self._session is None or self._pid != pid:
                self._streams = weakref.WeakSet()
                # A session inherited across fork shares sockets with the parent:
                # drop it without closing (closing would close the parent's sockets).
                self._session = self._given_session or new_session(self._base_url)
                self._pid = pid
            return self._session

    def send(self, request: HttpRequest) -> _Answer:
        """See :meth:`Transport.send`."""
        return self._exchange(request, stream=False)

    def stream(self, request: HttpRequest) -> _Answer:
        """See :meth:`Transport.stream`."""
        answer = self._exchange(request, stream=True)
        with self._lock:
            self._streams.add(answer)
            closed = self._closed
        if closed:
            answer.close()
            raise MantyxError(CLOSED)
        return answer

    def _exchange(self, request: HttpRequest, *, stream: bool) -> _Answer:
        session = self._get_session()
        url, deadline = request.url, request.deadline
        timeout = request.timeout
        if deadline is not None:  # no single wait may outlast the deadline either
            left = max(0.001, deadline - time.monotonic())
            timeout = (min(timeout[0], left), min(timeout[1], left))
        limit = Limit(deadline)
        response: requests.Response | None = None
        try:
            with limit:
                response = self._request(session, request, timeout, stream)
                if stream and response.status_code < 300:
                    limit.deadline = None  # an event stream's reads: its idle timeout alone
                    return _Answer(response, read_timeout=timeout[1], content=None)
                # The whole body, read here inside the translation seam: one cut
                # short or stalled after the headers is a transport failure too.
                content = self._whole(response, request)
        except BaseException as exc:
            if response is not None:
                response.close()
            # requests' own exceptions are OSErrors, among NETWORK_ERRORS.
            if isinstance(exc, MantyxError) or not isinstance(exc, NETWORK_ERRORS):
                raise  # ours already (a body too large), or not the network's
            raise translate(
                exc,
                url,
                connect_timeout=timeout[0],
                read_timeout=timeout[1],
                deadline=deadline,
                reading=response is not None,
            ) from exc
        response.close()  # every byte is read: the connection goes back to the pool
        return _Answer(response, read_timeout=timeout[1], content=content)

    def _whole(self, response: requests.Response, request: HttpRequest) -> bytes:
        """The body of a non-streamed answer, at most ``request.max_body`` bytes."""
        # The length urllib3 will stop at: None when the body is chunked (whatever
        # Content-Length also says) or runs until the connection closes.
        length = getattr(response.raw, "length_remaining", None)
        if (
            self._given_session is None
            and type(length) is int
            and length <= request.max_body
            and "Content-Encoding" not in response.headers
        ):
            # Our own connections: the bytes the server declared, in one read,
            # held to the deadline by the socket itself. A tool result's answer
            # is read this way, not chunk by chunk.
            return response.raw.read()
        chunks = response.iter_content(CHUNK)
        return whole_body(chunks, request.url, request.max_body, request.deadline)

    def _request(
        self,
        session: requests.Session,
        request: HttpRequest,
        timeout: tuple[float, float],
        stream: bool,
    ) -> requests.Response:
        url = request.url
        if self._given_session is not None:
            # A caller's session keeps its own hooks, auth and adapters in play
            # (its adapters do not hold the deadline: it is checked between reads).
            return session.request(
                request.method,
                url,
                data=request.body,
                headers=dict(request.headers),
                timeout=timeout,
                stream=True,
                allow_redirects=False,
            )
        # Our own session: hand a ready PreparedRequest straight to the adapter.
        # Session.request would merge environment settings, cookies and hooks and
        # re-parse the URL on every call: ~300 µs per tool result for nothing,
        # since our URLs, headers and proxies are fixed (benchmarks/README.md).
        prepared = prepare(request.method, url, request.headers, request.body)
        return session.get_adapter(url).send(
            prepared,
            stream=True,
            timeout=timeout,
            verify=adapter_verify(session, url),
            cert=session.cert,
            proxies=session.proxies,
        )

    def close(self) -> None:
        """Close every connection this process opened through this transport.

        Idle pooled connections close now; open event streams are ended (their
        readers see the stream stop); a request still in flight on another
        thread closes its connection as soon as its answer is read. Idempotent.
        """
        with self._lock:
            self._closed = True
            session, self._session = self._session, None
            mine = session is not None and self._pid == os.getpid()
            streams = list(self._streams) if mine else []
            self._streams = weakref.WeakSet()
        for answer in streams:
            answer.close()
        if session is not None and mine:
            close_session(session)
