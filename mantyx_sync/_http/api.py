"""The MANTYX API over any :class:`~mantyx_sync._http.transport.Transport`.

Everything that is not bytes over a connection happens here, so it works the
same over every transport: the credential (an OAuth token is refreshed, and
the request repeated once, after a ``401``), JSON in and out, a non-2xx status
as the most specific :class:`~mantyx_sync.APIStatusError` (:mod:`.api_errors`),
rate-limit headers, retries, and a transport's builtin ``OSError`` as a
:class:`~mantyx_sync.APIConnectionError` (:mod:`.failures`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

import attrs

from ..auth import TokenSource
from ..config import ClientConfig
from ..errors import APIConnectionError, ConfigurationError, MantyxError
from ..rate_limits import RateLimits
from ..transport import HttpRequest, HttpResponse, Transport
from .api_errors import api_error
from .body import encode_body
from .failures import gave_up, translate, whole_body, wire_json
from .retry import RetryPolicy
from .transport import CLOSED, RequestsTransport

__all__ = ["Api", "EventSource", "Reply"]

log = logging.getLogger(__name__)


@attrs.frozen
class Reply:
    """A successful (2xx) answer: status and parsed JSON body (``None`` when empty)."""

    status: int
    body: Any


class EventSource:
    """An open ``text/event-stream`` body as byte chunks. Iterate on one thread;
    :meth:`close` from any."""

    def __init__(self, response: HttpResponse, url: str, idle_timeout: float) -> None:
        self._response = response
        self._url = url
        self._idle_timeout = idle_timeout

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._response
        except APIConnectionError:  # already ours (and, for a timeout, an OSError too)
            raise
        except OSError as exc:
            raise translate(exc, self._url, read_timeout=self._idle_timeout, reading=True) from exc

    def close(self) -> None:
        self._response.close()


class Api:
    """JSON requests and event streams against one workspace's API root.

    :param transport: what carries the bytes (default: a
        :class:`~mantyx_sync._http.transport.RequestsTransport` of its own).
    :param token_source: where each request's OAuth access token comes from;
        when ``None``, ``config.api_key`` is sent.

    :ivar rate_limits: the latest rate-limit headers per bucket.

    Thread-safe: call it from any number of threads.
    """

    def __init__(
        self,
        config: ClientConfig,
        transport: Transport | None = None,
        *,
        token_source: TokenSource | None = None,
    ) -> None:
        if token_source is None and not config.api_key:
            raise ConfigurationError("no credential: pass an API key or a token source")
        self.config = config
        self.transport: Transport = transport or RequestsTransport(config.base_url)
        self.rate_limits: RateLimits = RateLimits()
        self._tokens = token_source
        self._closed = False
        # The package's own headers, which win over a caller's (built once: every
        # tool result is sent with them).
        self._read_headers = self._headers("application/json")
        self._json_headers = {**self._read_headers, "Content-Type": "application/json"}

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        """Absolute URL for ``path`` (relative to the workspace root, or absolute
        ``/api/...``) with ``params`` as its query (a list value: a repeated key)."""
        root = self.config.base_url if path.startswith("/api/") else self.config.api_root
        return f"{root}{path}?{urlencode(params, doseq=True)}" if params else f"{root}{path}"

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
        policy: RetryPolicy | None = None,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        deadline: float | None = None,
    ) -> Reply:
        """Send one JSON request, retried under ``policy`` (a single attempt when ``None``).

        ``headers`` are sent beside the package's own, which win. Each attempt
        is done within its connect and read timeouts added up (connecting,
        sending and the whole answer, however slowly the bytes come), and every
        attempt by ``deadline`` (``time.monotonic()``) if given.

        :raises APIStatusError: (a subclass per status) for a non-2xx answer.
        :raises APIConnectionError: when no answer could be had; :class:`RequestTimeoutError`
            past a deadline.
        :raises WireFormatError: a 2xx answer that is not JSON, or a body past the cap.
        """
        package_headers = self._json_headers if json_body is not None else self._read_headers
        headers = {**headers, **package_headers} if headers else package_headers
        config = self.config
        read = timeout if timeout is not None else config.read_timeout
        # Inline files stream into the body as it is sent, afresh by each attempt (body.py).
        body = None if json_body is None else encode_body(json_body)
        timeouts = (min(config.connect_timeout, read), read)
        url = self.url(path, params)
        attempts = 0
        started = time.monotonic()

        def send() -> Reply:
            nonlocal attempts
            attempts += 1
            own = time.monotonic() + timeouts[0] + timeouts[1]
            ends = own if deadline is None else min(own, deadline)
            return self._reply(HttpRequest(method, url, headers, body, timeouts, ends), path)

        try:
            return send() if policy is None else policy.call(send, label=f"{method} {path}")
        except APIConnectionError as exc:
            # Say how hard we tried; the transport's own exception stays the cause.
            raise gave_up(exc, attempts, time.monotonic() - started) from exc.__cause__

    def _reply(self, request: HttpRequest, path: str) -> Reply:
        started = time.monotonic()
        response = self._exchange(request, stream=False)
        try:
            content = whole_body(response, request.url, request.max_body, request.deadline)
        finally:
            response.close()
        status = response.status
        elapsed = (time.monotonic() - started) * 1000
        log.debug("%s %s -> %d (%.0f ms)", request.method, path, status, elapsed)
        if status >= 300:
            raise api_error(status, response.headers, content)
        what = f"the answer to {request.method} {path} (HTTP {status})"
        return Reply(status, wire_json(content, what, response.headers.get("content-type")))

    def open_stream(
        self,
        path: str,
        *,
        last_seq: int | None,
        idle_timeout: float,
        connect_timeout: float | None = None,
    ) -> EventSource:
        """Open ``GET <path>`` as an event stream, resuming after ``last_seq``; the
        read timeout is ``idle_timeout``, so a silent half-open connection is noticed."""
        headers = self._headers("text/event-stream")
        headers["Cache-Control"] = "no-cache"
        params = None
        if last_seq:
            headers["Last-Event-ID"] = str(last_seq)
            params = {"lastSeq": str(last_seq)}
        timeouts = (connect_timeout or self.config.connect_timeout, idle_timeout)
        # The headers (and an error's whole body) within both timeouts added up.
        ends = time.monotonic() + sum(timeouts)
        request = HttpRequest("GET", self.url(path, params), headers, None, timeouts, ends)
        response = self._exchange(request, stream=True)
        log.debug("GET %s (stream, lastSeq=%s) -> %d", path, last_seq, response.status)
        source = EventSource(response, request.url, idle_timeout)
        if response.status >= 300:
            try:
                content = whole_body(source, request.url, request.max_body, request.deadline)
            finally:
                source.close()
            raise api_error(response.status, response.headers, content)
        return source

    def _headers(self, accept: str) -> dict[str, str]:
        return {"User-Agent": self.config.user_agent, "Accept": accept}

    def _exchange(self, request: HttpRequest, *, stream: bool) -> HttpResponse:
        """After a 401 on an OAuth token, once more with a refreshed token (the
        server did not act on a 401)."""
        if self._closed:
            raise MantyxError(CLOSED)
        tokens = self._tokens
        token = tokens.token() if tokens is not None else str(self.config.api_key)
        response = self._send(request, token, stream)
        if response.status == 401 and tokens is not None:
            response.close()
            log.debug(
                "%s %s: 401 on the access token; refreshing it and trying once more",
                request.method,
                request.url,
            )
            response = self._send(request, tokens.refresh(token), stream)
        return response

    def _send(self, request: HttpRequest, token: str, stream: bool) -> HttpResponse:
        r = request  # built, not attrs.evolve()d: this is on every tool result's path
        headers = {**r.headers, "Authorization": f"Bearer {token}"}
        authorized = HttpRequest(
            r.method, r.url, headers, r.body, r.timeout, r.deadline, r.max_body
        )
        try:
            response = (
                self.transport.stream(authorized) if stream else self.transport.send(authorized)
            )
        except APIConnectionError as exc:  # before OSError: a RequestTimeoutError is both
            log.debug("%s %s failed: %s", request.method, request.url, exc)
            raise
        except OSError as exc:
            url, (connect, read) = request.url, request.timeout
            raise translate(
                exc, url, connect_timeout=connect, read_timeout=read, deadline=request.deadline
            ) from exc
        self.rate_limits.record(response.headers)
        return response

    def close(self) -> None:
        """Close every connection; later requests raise :class:`~mantyx_sync.MantyxError`.

        Open event streams end (their readers see the stream stop). Idempotent.
        """
        self._closed = True
        self.transport.close()
