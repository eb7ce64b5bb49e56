"""HTTP transport: every request to the MANTYX API goes through here.

It owns the connection pool (its ``requests`` sessions are built and closed by
:mod:`.pools`), adds auth and timeouts to every request, opens
event streams, and translates every ``requests``/``urllib3`` exception
(:mod:`.failures`) and every non-2xx status (:mod:`.api_errors`) into the
:mod:`mantyx_sync.errors` tree, so nothing above it handles a foreign exception.

The credential is asked for per request: a fixed API key, or a
:class:`~mantyx_sync._http.auth.TokenSource` whose access token is refreshed
(and the request repeated once) after a ``401``. Every response's rate-limit
headers are recorded in :attr:`HttpTransport.rate_limits`.

One ``requests.Session`` serves all threads of a process: it is configured once
and never mutated per call (headers go per request), and its pool is sized for
many concurrent runs. After ``fork()`` (gunicorn, Celery prefork) the child
notices the new pid and builds its own session, so sockets are never shared
between processes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import requests
import requests.adapters
import requests.utils

from ..errors import APIError, ConfigurationError, MantyxError, TransportError
from .api_errors import api_error
from .auth import TokenSource
from .body import StreamedBody, encode_body
from .config import ClientConfig
from .failures import NETWORK_ERRORS, describe, gave_up, translate
from .pools import adapter_verify, close_session, new_session, prepare
from .ratelimit import RateLimits
from .retry import RetryPolicy

__all__ = ["EventSource", "HttpTransport", "error_for_response", "translate_exception"]

log = logging.getLogger(__name__)

_CHUNK = 65536


@attrs.frozen
class Reply:
    """A successful (2xx) answer: status and parsed JSON body (``None`` when empty)."""

    status: int
    body: Any


class EventSource:
    """An open ``text/event-stream`` response, read as raw byte chunks.

    Chunks are handed over as soon as the socket yields them (``read1``), so a
    small event is never held back waiting for more bytes. Iterate on one
    thread; :meth:`close` may be called from any thread.
    """

    def __init__(self, response: requests.Response, *, idle_timeout: float | None = None) -> None:
        self._response = response
        self._closed = False
        self._idle_timeout = idle_timeout

    def __iter__(self) -> Iterator[bytes]:
        raw = self._response.raw
        try:
            while not self._closed:
                chunk = raw.read1(_CHUNK)
                if not chunk:
                    return
                yield chunk
        except Exception as exc:
            if self._closed:
                return  # closed from another thread: whatever the read ran into
            if not isinstance(exc, NETWORK_ERRORS):
                raise  # a bug, not the network: never mistaken for a drop to resume
            raise translate(
                exc, self._response.url, read_timeout=self._idle_timeout, reading=True
            ) from exc

    def close(self) -> None:
        """Close the response and its socket. Idempotent, any thread.

        The socket is shut down first: closing it alone would leave a reader
        blocked in ``recv`` on another thread until the server sends something.
        """
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):  # already released or closed
                self._response.raw.shutdown()
            self._response.close()


class HttpTransport:
    """JSON requests and event streams against one workspace's API root.

    :param token_source: where each request's OAuth access token comes from;
        when ``None``, ``config.api_key`` is sent.

    :ivar rate_limits: the latest rate-limit headers per bucket.

    Thread-safe: call it from any number of threads.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        session: requests.Session | None = None,
        token_source: TokenSource | None = None,
    ) -> None:
        if token_source is None and not config.api_key:
            raise ConfigurationError("no credential: pass an API key or a token source")
        self.config = config
        self.rate_limits = RateLimits()
        self._tokens = token_source
        self._given_session = session
        self._lock = threading.Lock()
        self._pid = -1
        self._session: requests.Session | None = None
        self._closed = False
        # Open event streams, so close() can end them from any thread.
        self._streams: weakref.WeakSet[EventSource] = weakref.WeakSet()

    def _get_session(self) -> requests.Session:
        pid = os.getpid()
        session = self._session
        if session is not None and self._pid == pid:
            return session
        with self._lock:
            if self._closed:
                # A late request (a tool result posted from a pool thread after
                # the run ended) must not open a pool that nothing will close.
                raise MantyxError("this client is closed; create a new Client")
            if self._session is None or self._pid != pid:
                self._streams = weakref.WeakSet()
                # A session inherited across fork shares sockets with the parent:
                # drop it without closing (closing would close the parent's sockets).
                self._session = self._given_session or new_session(self.config.base_url)
                self._pid = pid
            return self._session

    def _headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        # Authorization is added per exchange by _authorized_exchange.
        headers = {
            "User-Agent": self.config.user_agent,
            "Accept": "application/json",
        }
        if extra:
            headers.update(extra)
        return headers

    def url(self, path: str) -> str:
        """Absolute URL for ``path`` (relative to the workspace root, or absolute ``/api/...``)."""
        if path.startswith("/api/"):
            return f"{self.config.base_url}{path}"
        return f"{self.config.api_root}{path}"

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
        policy: RetryPolicy | None = None,
        timeout: float | None = None,
    ) -> Reply:
        """Send one JSON request, retried under ``policy`` (a single attempt when ``None``).

        :raises APIError: (a subclass per status) for a non-2xx answer.
        :raises TransportError: when no answer could be had.
        """

        attempts = 0
        started = time.monotonic()

        def send() -> Reply:
            nonlocal attempts
            attempts += 1
            return self._send(method, path, json_body=json_body, params=params, timeout=timeout)

        try:
            if policy is None:
                return send()
            return policy.call(send, label=f"{method} {path}")
        except TransportError as exc:
            # Say how hard we tried; the requests/urllib3 exception stays the cause.
            raise gave_up(exc, attempts, time.monotonic() - started) from exc.__cause__

    def _send(
        self,
        method: str,
        path: str,
        *,
        json_body: Any,
        params: Mapping[str, Any] | None,
        timeout: float | None,
    ) -> Reply:
        data = None
        headers = self._headers()
        if json_body is not None:
            # Inline files stream into the body as it is sent (see body.py).
            data = encode_body(json_body)
            headers["Content-Type"] = "application/json"
        read = timeout if timeout is not None else self.config.read_timeout
        started = time.monotonic()
        response = self._authorized_exchange(
            method,
            self.url(path),
            headers=headers,
            body=data,
            params=params,
            timeout=(min(self.config.connect_timeout, read), read),
            stream=False,
            label=f"{method} {path}",
        )
        with response:
            log.debug(
                "%s %s -> %d (%.0f ms)",
                method,
                path,
                response.status_code,
                (time.monotonic() - started) * 1000,
            )
            if response.status_code >= 300:
                raise _api_error(response)
            try:
                body = response.json() if response.content else None
            except ValueError:
                body = None
            return Reply(response.status_code, body)

    def open_stream(
        self,
        path: str,
        *,
        last_seq: int | None,
        idle_timeout: float,
        connect_timeout: float | None = None,
    ) -> EventSource:
        """Open ``GET <path>`` as an event stream, resuming after ``last_seq``.

        Sends both ``Last-Event-ID`` and ``?lastSeq=``. The socket
        read timeout is ``idle_timeout`` so a silent half-open connection is
        noticed; ``connect_timeout`` defaults to the client's.
        """
        headers = self._headers({"Accept": "text/event-stream", "Cache-Control": "no-cache"})
        params: dict[str, str] = {}
        if last_seq:
            headers["Last-Event-ID"] = str(last_seq)
            params["lastSeq"] = str(last_seq)
        response = self._authorized_exchange(
            "GET",
            self.url(path),
            headers=headers,
            body=None,
            params=params,
            timeout=(connect_timeout or self.config.connect_timeout, idle_timeout),
            stream=True,
            label=f"GET {path} (stream)",
        )
        log.debug("GET %s (stream, lastSeq=%s) -> %d", path, last_seq, response.status_code)
        if response.status_code >= 300:
            try:
                response.content  # noqa: B018 - the error body, read inside the seam
            except requests.RequestException as exc:
                response.close()
                raise translate(exc, response.url, reading=True) from exc
            try:
                raise _api_error(response)
            finally:
                response.close()
        source = EventSource(response, idle_timeout=idle_timeout)
        with self._lock:
            self._streams.add(source)
            closed = self._closed
        if closed:
            source.close()
            raise MantyxError("this client is closed; create a new Client")
        return source

    def _authorized_exchange(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        body: bytes | StreamedBody | None,
        params: Mapping[str, Any] | None,
        timeout: tuple[float, float],
        stream: bool,
        label: str,
    ) -> requests.Response:
        """:meth:`_exchange` with the credential; after a 401 on an OAuth token,
        once more with a refreshed token (the server did not act on a 401)."""
        tokens = self._tokens
        token = tokens.token() if tokens is not None else str(self.config.api_key)
        headers["Authorization"] = f"Bearer {token}"
        response = self._exchange(
            method, url, headers=headers, body=body, params=params,
            timeout=timeout, stream=stream, label=label,
        )  # fmt: skip
        self.rate_limits.record(response.headers)
        if response.status_code != 401 or tokens is None:
            return response
        response.close()
        log.debug("%s: 401 on the access token; refreshing it and trying once more", label)
        headers["Authorization"] = f"Bearer {tokens.refresh(token)}"
        response = self._exchange(
            method, url, headers=headers, body=body, params=params,
            timeout=timeout, stream=stream, label=label,
        )  # fmt: skip
        self.rate_limits.record(response.headers)
        return response

    def _exchange(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        body: bytes | StreamedBody | None,
        params: Mapping[str, Any] | None,
        timeout: tuple[float, float],
        stream: bool,
        label: str,
    ) -> requests.Response:
        """One HTTP exchange through the session's adapter, exceptions translated."""
        session = self._get_session()
        try:
            if self._given_session is not None:
                # A caller's session keeps its own hooks, auth and adapters in play.
                return session.request(
                    method,
                    url,
                    data=body,
                    params=params,
                    headers=headers,
                    timeout=timeout,
                    stream=stream,
                    allow_redirects=False,
                )
            # Our own session: hand a ready PreparedRequest straight to the adapter.
            # Session.request would merge environment settings, cookies and hooks and
            # re-parse the URL on every call: ~300 µs per tool result for nothing,
            # since our URLs, headers and proxies are fixed (benchmarks/README.md).
            prepared = prepare(method, url, headers, body, params)
            response = session.get_adapter(url).send(
                prepared,
                stream=stream,
                timeout=timeout,
                verify=adapter_verify(session, url),
                cert=session.cert,
                proxies=session.proxies,
            )
            if not stream:
                # Read the body here, inside the translation seam: a body cut
                # short or stalled after the headers is a transport failure too.
                response.content  # noqa: B018
            return response
        except requests.RequestException as exc:
            log.debug("%s failed: %s", label, describe(exc))
            raise translate(exc, url, connect_timeout=timeout[0], read_timeout=timeout[1]) from exc

    def close(self) -> None:
        """Close every connection this process opened through this transport.

        Idle pooled connections close now; open event streams are ended (their
        readers see the stream stop); a request still in flight on another
        thread closes its connection as soon as its answer is read. Later
        requests raise :class:`~mantyx_sync.MantyxError`. Idempotent.
        """
        with self._lock:
            self._closed = True
            session, self._session = self._session, None
            mine = session is not None and self._pid == os.getpid()
            streams = list(self._streams) if mine else []
            self._streams = weakref.WeakSet()
        for source in streams:
            source.close()
        if session is not None and mine:
            close_session(session)


def _api_error(response: requests.Response) -> APIError:
    """The most specific :class:`APIError` for a non-2xx ``response``."""
    try:
        body = response.json()
    except ValueError:
        body = None
    return api_error(response.status_code, response.reason, response.headers, body)


def translate_exception(exc: BaseException) -> TransportError:
    """The :class:`TransportError` for a ``requests`` exception, for the package's
    other HTTP edges (the OAuth endpoints), so they speak the same error tree."""
    return translate(exc)


def error_for_response(response: requests.Response) -> APIError:
    """The most specific :class:`APIError` for a non-2xx ``response`` (see
    :func:`translate_exception`)."""
    return _api_error(response)
