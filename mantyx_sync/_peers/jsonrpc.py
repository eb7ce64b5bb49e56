"""A transport-agnostic, thread-safe JSON-RPC 2.0 endpoint (the client side of MCP).

A transport hands every message it receives to :meth:`Endpoint.deliver` and gives
the endpoint a ``send`` callable for what it writes. Requests from several threads
may be in flight at once, each waiting on its own future.

The peer's own requests are answered on the delivering thread: ``ping`` with ``{}``,
anything else with ``-32601`` (we declare no client capabilities, so a server that
asks for roots, sampling or elicitation anyway gets a clean refusal, not a hang).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Final

__all__ = ["Endpoint", "JsonRpcError", "PeerGoneError", "RequestTimeout", "SessionExpired"]

logger = logging.getLogger(__name__)

METHOD_NOT_FOUND: Final = -32601

Sender = Callable[[dict[str, Any]], None]


class JsonRpcError(Exception):
    """The peer answered a request with a JSON-RPC ``error`` object."""

    def __init__(self, code: object, message: str) -> None:
        self.code = int(code) if isinstance(code, int) else 0  # 0 for a malformed code
        self.message = message
        super().__init__(f"{self.code}: {message}")


class PeerGoneError(Exception):
    """The peer is no longer reachable (process exited, pipe closed, HTTP failure)."""


class RequestTimeout(Exception):
    """No response arrived within the request's timeout."""


class SessionExpired(PeerGoneError):
    """An HTTP peer forgot our session (a 404 on a request carrying its id): the client
    re-initialises once; a peer that forgets the new session too is a lost peer."""


class Endpoint:
    """Matches responses to requests by id; answers the peer's own requests.

    Thread-safe: :meth:`request` and :meth:`notify` may be called from any
    number of threads while a transport thread calls :meth:`deliver`.

    :param send: writes one message to the peer; raises :class:`PeerGoneError`
        (or any ``OSError``) when it cannot.
    :param label: a name for log lines (never a secret).
    """

    def __init__(self, send: Sender, *, label: str) -> None:
        self._send = send
        self._label = label
        self._lock = threading.Lock()
        # Each future is set once, by whoever pops it from this table; the peer's
        # own request ids (which may be 0 or strings) never touch it.
        self._pending: dict[Any, Future[Any]] = {}
        self._ids = itertools.count(1)
        self.closed_reason: str | None = None
        """Why the endpoint was closed, or ``None`` while it is open."""

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        timeout: float | None,
        cancel_on_timeout: bool = True,
    ) -> Any:
        """Send a request and block until its result.

        :raises JsonRpcError: the peer answered with an error.
        :raises RequestTimeout: nothing came back in ``timeout`` seconds (a
            ``notifications/cancelled`` is sent for the request first, when asked).
        :raises PeerGoneError: the peer went away before answering.
        :raises SessionExpired: the transport reported the HTTP session gone.
        """
        pending: Future[Any] = Future()
        with self._lock:
            if (closed := self.closed_reason) is not None:
                raise PeerGoneError(closed)
            request_id = next(self._ids)
            self._pending[request_id] = pending
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        logger.debug("%s: -> %s id=%s", self._label, method, request_id)
        try:
            self._send(message)
        except BaseException as exc:
            self._forget(request_id)
            if isinstance(exc, (OSError, PeerGoneError)):
                reason = self.closed_reason or f"could not send {method}: {exc}"
                raise PeerGoneError(reason) from exc
            raise
        try:
            return pending.result(timeout)
        except FutureTimeout:
            self._forget(request_id)
            if pending.done():  # answered between the wait and the forget
                return pending.result()
        if cancel_on_timeout:
            self._cancel(request_id, f"timed out after {timeout} s")
        raise RequestTimeout(f"{method} timed out after {timeout} s")

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification (no response expected).

        :raises PeerGoneError: the peer is gone.
        """
        if self.closed_reason is not None:
            raise PeerGoneError(self.closed_reason)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        try:
            self._send(message)
        except OSError as exc:
            raise PeerGoneError(f"could not send {method}: {exc}") from exc

    def deliver(self, message: Any) -> None:
        """Handle one decoded message from the peer (a dict, or a JSON-RPC batch list)."""
        if isinstance(message, list):
            for item in message:
                self.deliver(item)
            return
        if not isinstance(message, dict):
            logger.debug("%s: ignoring non-object message", self._label)
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._answer_peer_request(message["id"], method)
            else:
                logger.debug("%s: <- notification %s (ignored)", self._label, method)
            return
        if "id" not in message:
            logger.debug("%s: ignoring message without id or method", self._label)
            return
        response_id = message["id"]
        if isinstance(response_id, bool) or not isinstance(response_id, (int, str)):
            # Our ids are ints; an object or list id cannot be ours (and is unhashable).
            logger.debug("%s: ignoring response with a malformed id", self._label)
            return
        with self._lock:
            pending = self._pending.pop(response_id, None)
        if pending is None:
            logger.debug(
                "%s: response for unknown id %r (late or cancelled)", self._label, response_id
            )
            return
        error = message.get("error")
        if error is None:
            pending.set_result(message.get("result"))
        elif isinstance(error, dict):
            pending.set_exception(JsonRpcError(error.get("code"), str(error.get("message", ""))))
        else:
            pending.set_exception(JsonRpcError(0, str(error)))

    def fail(self, request_id: Any, error: BaseException) -> None:
        """Fail one pending request (used by transports, e.g. for an HTTP error status)."""
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is not None:
            pending.set_exception(error)

    def close(self, reason: str) -> None:
        """Fail every pending request and every later one with :class:`PeerGoneError`."""
        with self._lock:
            if self.closed_reason is None:
                self.closed_reason = reason
            waiting = list(self._pending.values())
            self._pending.clear()
        for pending in waiting:
            pending.set_exception(PeerGoneError(reason))

    def _forget(self, request_id: int) -> None:
        with self._lock:
            self._pending.pop(request_id, None)

    def _cancel(self, request_id: int, reason: str) -> None:
        try:
            self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
        except PeerGoneError:
            logger.debug("%s: could not send cancellation for id=%s", self._label, request_id)

    def _answer_peer_request(self, request_id: Any, method: str) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if method == "ping":
            reply["result"] = {}
        else:
            logger.debug("%s: refusing server request %s", self._label, method)
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": "Method not found"}
        try:
            self._send(reply)
        except (OSError, PeerGoneError) as exc:
            logger.debug("%s: could not answer %s: %s", self._label, method, exc)
