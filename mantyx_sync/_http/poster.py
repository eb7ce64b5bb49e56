"""Delivering tool results: one POST per ``toolUseId``, and every outcome named.

``POST .../tool-results`` is idempotent by ``toolUseId``, so it is retried as
safe under a deadline that ends well before the server's own tool timeout.
Nothing here raises to the caller: each outcome is a :class:`Delivery` value.
Once the run's :class:`PostGate` is closed no attempt starts, the first one
included, and :meth:`PostGate.close` returns only when the attempts already
on the wire have finished: nothing is posted after it returns.
"""

from __future__ import annotations

import enum
import logging
import threading
from typing import Any

import attrs

from ..errors import APIStatusError, ConnectError, MantyxError
from .api import Api
from .retry import Backoff, RetryPolicy, Safety
from .routes import post_tool_result

__all__ = ["PostGate", "ResultPoster"]

log = logging.getLogger(__name__)

# Bounded to end well inside the server's local tool timeout (60 s in the
# oldest documents, and not to be relied on).
DEFAULT_POST_POLICY = RetryPolicy(
    safety=Safety.SAFE, attempts=8, deadline=40.0, backoff=Backoff(initial=0.2, maximum=5.0)
)


class Delivery(enum.Enum):
    """What became of one tool result."""

    DELIVERED = "delivered"
    """The server accepted it (2xx, or 404 after an attempt that had landed)."""
    ANSWERED_ELSEWHERE = "answered_elsewhere"
    """404 on the first attempt: another client already answered this call."""
    RUN_TERMINAL = "run_terminal"
    """The run had already ended (409, or it ended while retrying); the result is dropped."""
    REJECTED = "rejected"
    """4xx other than the above: the body was refused (a bug; logged as error)."""
    FAILED = "failed"
    """No answer after every retry; the server will time the call out."""


@attrs.define
class _Attempts:
    # Whether any earlier attempt reached the server and may have been accepted.
    may_have_landed: bool = False


class _RunEnded(MantyxError):
    """The run ended (or its handle was closed) before this attempt: it is not sent."""


class PostGate:
    """Whether results may still be sent for a run (or for an evaluation's case runs).

    Thread-safe. :meth:`close` is called from whichever thread ends or closes
    the run, never from inside an attempt's request.
    """

    def __init__(self) -> None:
        self.closed = threading.Event()
        """Set by :meth:`close`; it also ends a pending retry wait at once."""
        self._changed = threading.Condition()
        self._sending: set[int] = set()  # threads with an attempt on the wire

    def __enter__(self) -> None:
        """``with gate:`` around one attempt's request, which starts only while
        the gate is open (a plain context manager: it is on every result's path).

        :raises _RunEnded: the gate is closed (nothing is sent).
        """
        with self._changed:
            if self.closed.is_set():
                raise _RunEnded("the run ended")
            self._sending.add(threading.get_ident())

    def __exit__(self, *exc_info: object) -> None:
        with self._changed:
            self._sending.discard(threading.get_ident())
            self._changed.notify_all()

    def close(self) -> None:
        """No attempt starts from now on; returns once those on the wire have finished
        (each bounded by its request's timeout). Idempotent."""
        me = threading.get_ident()  # a finalizer run by a sending thread waits for no one
        with self._changed:
            self.closed.set()
            self._changed.wait_for(lambda: not self._sending - {me})


class ResultPoster:
    """Thread-safe: called from the tool pool.

    :param gate: shared with whoever ends the run (default: one of its own, never closed).
    """

    def __init__(
        self,
        api: Api,
        run_id: str,
        *,
        policy: RetryPolicy = DEFAULT_POST_POLICY,
        gate: PostGate | None = None,
    ) -> None:
        self._api = api
        self._gate = gate if gate is not None else PostGate()
        self.run_id = run_id
        self._policy = policy

    def post(
        self,
        tool_use_id: str,
        *,
        result: str | None = None,
        error: str | None = None,
        files: list[dict[str, Any]] | None = None,
    ) -> Delivery:
        """Send the one answer for ``tool_use_id`` (exactly one of ``result`` / ``error``);
        ``files`` (already checked and encoded) go with a result only."""
        body: dict[str, Any] = {"toolUseId": tool_use_id}
        if error is not None:
            body["error"] = error
        else:
            body["result"] = result if result is not None else ""
            if files:
                body["files"] = files
        attempts = _Attempts()
        label = f"tool result {tool_use_id}"

        def send() -> None:
            with self._gate:
                try:
                    post_tool_result(self._api, self.run_id, body)
                except MantyxError as exc:
                    if not isinstance(exc, (ConnectError, APIStatusError)) or (
                        isinstance(exc, APIStatusError) and exc.status >= 500
                    ):
                        attempts.may_have_landed = True
                    raise

        try:
            self._policy.run(send, label=label, abort=self._gate.closed)
        except MantyxError as exc:
            if isinstance(exc, APIStatusError) and 400 <= exc.status < 500 and exc.status != 429:
                return self._classify(tool_use_id, exc, attempts)
            return self._gave_up(tool_use_id, exc)
        log.debug("run %s: delivered result for %s", self.run_id, tool_use_id)
        return Delivery.DELIVERED

    def _classify(self, tool_use_id: str, exc: APIStatusError, attempts: _Attempts) -> Delivery:
        if exc.status == 409:
            log.debug(
                "run %s: result for %s arrived after the run ended (%s)",
                self.run_id,
                tool_use_id,
                exc.code,
            )
            return Delivery.RUN_TERMINAL
        if exc.status == 404:
            if attempts.may_have_landed:
                log.debug(
                    "run %s: result for %s was already accepted by an earlier attempt",
                    self.run_id,
                    tool_use_id,
                )
                return Delivery.DELIVERED
            log.warning(
                "run %s: the server says %s was already answered or is unknown (%s); "
                "another client may have answered it",
                self.run_id,
                tool_use_id,
                exc.message,
            )
            return Delivery.ANSWERED_ELSEWHERE
        log.error(
            "run %s: the server rejected the result for %s: %s",
            self.run_id,
            tool_use_id,
            exc,
        )
        return Delivery.REJECTED

    def _gave_up(self, tool_use_id: str, exc: MantyxError) -> Delivery:
        if self._gate.closed.is_set():
            log.debug(
                "run %s ended before the result for %s could be delivered (%s)",
                self.run_id,
                tool_use_id,
                exc,
            )
            return Delivery.RUN_TERMINAL
        log.warning(
            "run %s: could not deliver the result for %s after retries: %s",
            self.run_id,
            tool_use_id,
            exc,
        )
        return Delivery.FAILED
