"""MCP over Streamable HTTP with ``requests`` and plain threads.

Each JSON-RPC request is POSTed from its own short-lived worker thread, which
reads the reply (a JSON body, or an SSE stream that may carry server requests
first) into the :class:`~mantyx_sync._peers.jsonrpc.Endpoint`; the caller waits
there with its own timeout. After the handshake an optional GET stream receives
what the server sends outside any POST (the Python SDK sends ``roots/list`` there).

A ``404`` on a request that carried the ``Mcp-Session-Id`` is
:class:`~mantyx_sync._peers.jsonrpc.SessionExpired`, so the client re-initialises.
Header values may hold secrets: never logged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Final

import requests
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from ..._base.bounded import CHUNK, MAX_BODY_BYTES, BodyTooLarge, TooDeep, decode_json, read_capped
from ..._base.redact import redact_text
from ..._base.sse import FrameError, read_events
from ..jsonrpc import Endpoint, JsonRpcError, PeerGoneError, SessionExpired

__all__ = ["HttpTransport"]

logger = logging.getLogger(__name__)

_CONNECT_TIMEOUT_S: Final = 10.0
_SHORT_READ_S: Final = 30.0
_JOIN_S: Final = 5.0


class _TrackingAdapter(requests.adapters.HTTPAdapter):
    """Remembers its connections so :meth:`abort_all` can shut their sockets down, which
    unblocks a thread reading a reply, or waiting for its headers, before the read
    timeout. (That thread then closes its response: closing it from here would wait
    for the reader's buffer lock.)"""

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        """Create the pool manager with connection pools that register each connection."""
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        registry = self._connections

        class _Pool(HTTPConnectionPool):
            def _new_conn(self) -> Any:
                conn = super()._new_conn()
                registry.add(conn)
                return conn

        class _TlsPool(_Pool, HTTPSConnectionPool):
            """The HTTPS pool, its connections registered by :class:`_Pool`'s ``_new_conn``."""

        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _TlsPool}

    def abort_all(self) -> None:
        """Shut down every connection's socket, unblocking any thread using it."""
        for conn in list(self._connections):
            sock = getattr(conn, "sock", None)
            if isinstance(sock, socket.socket):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class HttpTransport:
    """A Streamable HTTP MCP endpoint at ``url``. Thread-safe: requests from several
    threads run concurrently, each on its own worker thread and pooled connection.

    :param headers: extra headers sent on every request (values never logged).
    :param read_timeout: upper bound on a silent read of a reply stream.
    :param label: a name for threads and log lines.
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        *,
        read_timeout: float,
        label: str,
    ) -> None:
        self._url = url
        self._extra_headers = dict(headers or {})
        self._read_timeout = read_timeout
        self._label = label
        self._http = requests.Session()
        self._adapter = _TrackingAdapter(pool_connections=1, pool_maxsize=32)
        self._http.mount("http://", self._adapter)
        self._http.mount("https://", self._adapter)
        self._lock = threading.Lock()
        self._endpoint: Endpoint | None = None
        self._workers: set[threading.Thread] = set()
        self._listener: threading.Thread | None = None
        self._closed = False
        self.session_id: str | None = None
        """The server-assigned ``Mcp-Session-Id`` (``None`` for stateless servers)."""
        self.protocol_version: str | None = None
        """Set by the client after ``initialize``; sent as ``MCP-Protocol-Version``."""

    def start(self, endpoint: Endpoint) -> None:
        """Attach the endpoint that receives every incoming message."""
        self._endpoint = endpoint

    def send(self, message: dict[str, Any]) -> None:
        """Send one message: requests asynchronously, everything else synchronously.

        :raises PeerGoneError: the transport is closed, or a notification/answer
            could not be delivered.
        """
        if self._closed:
            raise PeerGoneError(f"MCP server {self._label!r} connection closed")
        if "method" in message and "id" in message:
            self._spawn(self._run_request, message, f"post-{message['id']}")
        elif message.get("method") == "notifications/cancelled":
            # Sent by a caller whose request just timed out: a slow server must
            # not hold that caller any longer.
            self._spawn(self._post_quietly, message, "cancel")
        else:
            self._post_simple(message)

    def listen(self) -> None:
        """Open the GET stream for server-initiated messages (best effort, one at a time)."""
        if (self._listener is not None and self._listener.is_alive()) or self._closed:
            return
        self._listener = threading.Thread(
            target=self._listen, name=f"mantyx-mcp-{self._label}-get", daemon=True
        )
        self._listener.start()

    def close(self) -> None:
        """DELETE the session (405 and errors ignored), stop every thread. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self.session_id is not None:
            try:
                resp = self._http.delete(
                    self._url, headers=self._headers(), timeout=(_CONNECT_TIMEOUT_S, 5.0)
                )
                logger.debug("%s: DELETE session -> %s", self._label, resp.status_code)
                resp.close()
            except requests.RequestException as exc:
                logger.debug("%s: DELETE session failed: %s", self._label, type(exc).__name__)
        with self._lock:
            workers = list(self._workers)
        self._adapter.abort_all()
        current = threading.current_thread()
        deadline = time.monotonic() + _JOIN_S
        for thread in [*workers, self._listener]:
            if thread is not None and thread is not current:
                thread.join(max(0.0, deadline - time.monotonic()))
        self._http.close()
        if self._endpoint is not None:
            self._endpoint.close(f"MCP server {self._label!r} connection closed")

    def _spawn(
        self, target: Callable[[dict[str, Any]], None], message: dict[str, Any], role: str
    ) -> None:
        worker = threading.Thread(
            target=target,
            args=(message,),
            name=f"mantyx-mcp-{self._label}-{role}",
            daemon=True,
        )
        # Registered and started under the lock: close() either sees a started
        # worker or makes this send fail.
        with self._lock:
            if self._closed:
                raise PeerGoneError(f"MCP server {self._label!r} connection closed")
            self._workers.add(worker)
            worker.start()

    def _headers(
        self, accept: str = "application/json, text/event-stream", *, session: bool = True
    ) -> dict[str, str]:
        headers = {**self._extra_headers, "Accept": accept, "Content-Type": "application/json"}
        if session and self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if session and self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _post_simple(self, message: dict[str, Any]) -> None:
        try:
            resp = self._http.post(
                self._url,
                data=json.dumps(message).encode("utf-8"),
                headers=self._headers(),
                timeout=(_CONNECT_TIMEOUT_S, _SHORT_READ_S),
                stream=True,  # only the status matters: the body is never read
            )
        except requests.RequestException as exc:
            raise PeerGoneError(
                f"MCP server {self._label!r} unreachable ({type(exc).__name__})"
            ) from exc
        with resp:
            if resp.status_code >= 400:
                logger.debug(
                    "%s: POST %s -> HTTP %s",
                    self._label,
                    message.get("method", "response"),
                    resp.status_code,
                )

    def _post_quietly(self, message: dict[str, Any]) -> None:
        try:
            self._post_simple(message)
        except PeerGoneError as exc:
            logger.debug("%s: could not send %s: %s", self._label, message.get("method"), exc)
        finally:
            with self._lock:
                self._workers.discard(threading.current_thread())

    def _run_request(self, message: dict[str, Any]) -> None:
        endpoint = self._endpoint
        assert endpoint is not None
        request_id = message["id"]
        try:
            self._post_request(endpoint, message)
        except requests.RequestException as exc:
            reason = f"MCP server {self._label!r} unreachable ({type(exc).__name__})"
            if self._closed:
                reason = f"MCP server {self._label!r} connection closed"
            endpoint.fail(request_id, PeerGoneError(reason))
        except (FrameError, BodyTooLarge) as exc:
            reason = f"MCP server {self._label!r} answered badly: {exc}"
            endpoint.fail(request_id, PeerGoneError(reason))
        except Exception as exc:  # a worker thread must never die silently
            logger.debug("%s: request worker failed", self._label, exc_info=True)
            endpoint.fail(request_id, PeerGoneError(f"MCP request failed: {type(exc).__name__}"))
        finally:
            # Whatever happened, the request is answered now or never; a no-op
            # when the response was delivered.
            endpoint.fail(
                request_id,
                PeerGoneError(f"MCP server {self._label!r} ended the reply without an answer"),
            )
            with self._lock:
                self._workers.discard(threading.current_thread())

    def _post_request(self, endpoint: Endpoint, message: dict[str, Any]) -> None:
        request_id = message["id"]
        # initialize starts a new session: never inside the old one.
        fresh = message.get("method") == "initialize"
        headers = self._headers(session=not fresh)
        had_session = "Mcp-Session-Id" in headers
        with self._http.post(
            self._url,
            data=json.dumps(message).encode("utf-8"),
            headers=headers,
            stream=True,
            timeout=(_CONNECT_TIMEOUT_S, self._read_timeout),
        ) as resp:
            status = resp.status_code
            logger.debug("%s: POST %s -> %s", self._label, message.get("method"), status)
            if status == 404 and had_session:
                endpoint.fail(request_id, SessionExpired("MCP session not found"))
                return
            if status >= 400:
                endpoint.fail(request_id, self._http_error(resp))
                return
            new_session = resp.headers.get("Mcp-Session-Id")
            if fresh or (new_session and self.session_id is None):
                self.session_id = new_session or None
            content_type = resp.headers.get("Content-Type", "")
            if "text/event-stream" in content_type:
                for event in read_events(resp.iter_content(chunk_size=None), flush=True):
                    if event.event == "message" and self._deliver_json(
                        endpoint, event.data, request_id
                    ):
                        break
            elif status != 202:
                body = self._body(resp, "reply").decode("utf-8", "replace")
                self._deliver_json(endpoint, body, request_id)

    def _body(self, resp: requests.Response, what: str) -> bytes:
        """:raises BodyTooLarge: past the cap (reading stopped there)."""
        what = f"MCP server {self._label!r}'s {what}"
        return read_capped(resp.iter_content(CHUNK), limit=MAX_BODY_BYTES, what=what)

    def _deliver_json(self, endpoint: Endpoint, text: str, request_id: Any) -> bool:
        """Deliver one JSON payload; true when it answered ``request_id``."""
        try:
            payload = decode_json(text)
        except TooDeep:
            logger.warning("%s: a message nested too deeply to read was skipped", self._label)
            return False
        except ValueError:
            logger.debug("%s: undecodable message skipped", self._label)
            return False
        try:
            endpoint.deliver(payload)
        except Exception:
            # One malformed message must not end a reply stream or the GET listener.
            logger.debug("%s: undeliverable message skipped", self._label, exc_info=True)
        items = payload if isinstance(payload, list) else [payload]
        return any(
            isinstance(item, dict) and "method" not in item and item.get("id") == request_id
            for item in items
        )

    def _http_error(self, resp: requests.Response) -> Exception:
        try:
            body = decode_json(self._body(resp, "error reply"))
        except (ValueError, requests.RequestException):  # too large, not JSON, broken off
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            message = f"HTTP {resp.status_code}: {redact_text(error['message'])}"
            return JsonRpcError(error.get("code"), message)
        return PeerGoneError(f"MCP server {self._label!r} answered HTTP {resp.status_code}")

    def _listen(self) -> None:
        endpoint = self._endpoint
        assert endpoint is not None
        try:
            resp = self._http.get(
                self._url,
                headers=self._headers(accept="text/event-stream"),
                stream=True,
                timeout=(_CONNECT_TIMEOUT_S, None),
            )
        except requests.RequestException:
            return
        with resp:
            if resp.status_code != 200 or self._closed:
                logger.debug("%s: no GET stream (HTTP %s)", self._label, resp.status_code)
                return
            try:
                for event in read_events(resp.iter_content(chunk_size=None), flush=True):
                    if event.event == "message":
                        self._deliver_json(endpoint, event.data, None)
            except FrameError as exc:
                bad = "%s: GET stream closed, the server answered badly: %s"
                logger.warning(bad, self._label, exc)
            except (requests.RequestException, OSError, AttributeError, ValueError):
                pass  # the stream ends this way when close() shuts the socket down
