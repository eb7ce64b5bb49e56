"""The transport seam: how a :class:`~mantyx_sync.Client` reaches the server.

A transport moves bytes and nothing else: the credential, JSON, statuses as
errors, rate limits, retries and routes all sit above it, so they work the
same over any :class:`Transport`: the default one over ``requests``, or
``mantyx_sync.testing``'s in-memory one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol, runtime_checkable

import attrs

from ._base.bounded import MAX_BODY_BYTES

__all__ = ["HttpRequest", "HttpResponse", "Transport"]


@attrs.frozen
class HttpRequest:
    """One request as a transport sends it.

    :ivar method: ``GET``, ``POST``, ``DELETE``.
    :ivar url: the absolute URL, query string included.
    :ivar headers: every header to send, the credential included (so neither
        they nor the body are in the repr).
    :ivar body: ``None``, bytes, or an iterable of bytes whose ``len()`` is
        the ``Content-Length`` (iterated afresh by each send).
    :ivar timeout: ``(connect, read)`` seconds; for :meth:`Transport.stream`,
        read is the longest wait for the next chunk.
    :ivar deadline: the ``time.monotonic()`` by which the exchange must be
        done, however the bytes come (``None``: no total limit): for
        :meth:`Transport.send` connecting, sending and the whole answer; for
        :meth:`Transport.stream` until the headers are in (and the whole body
        of a non-2xx answer). Past it: :class:`~mantyx_sync.RequestTimeoutError`.
    :ivar max_body: the most bytes a body read whole may have; past it the
        reading stops with :class:`~mantyx_sync.WireFormatError`.
    """

    method: str
    url: str
    headers: Mapping[str, str] = attrs.field(repr=False)
    body: bytes | Iterable[bytes] | None = attrs.field(default=None, repr=False)
    timeout: tuple[float, float] = (10.0, 60.0)
    deadline: float | None = None
    max_body: int = MAX_BODY_BYTES


class HttpResponse(Protocol):
    """What a :class:`Transport` answers: ``status``, ``headers``, the body as
    byte chunks, and :meth:`close`."""

    @property
    def status(self) -> int:
        """The HTTP status code."""

    @property
    def headers(self) -> Mapping[str, str]:
        """The response headers, looked up in any case (``headers.get("retry-after")``)."""

    def __iter__(self) -> Iterator[bytes]:
        """The body in chunks, as they arrive."""

    def close(self) -> None:
        """Release the connection; idempotent, callable from any thread, and a
        reader blocked in iteration on another thread stops."""


@runtime_checkable
class Transport(Protocol):
    """How :class:`~mantyx_sync.Client` reaches the server: ``Client(transport=...)``.

    Two calls and a close. Both calls may run on many threads at once; a
    failure to get an answer raises :class:`~mantyx_sync.APIConnectionError` or a
    builtin :class:`OSError` (:class:`TimeoutError` when a read timed out),
    which the client words as a :class:`~mantyx_sync.APIConnectionError`. Any
    status is an answer, not an error: the client turns non-2xx into errors.
    """

    def send(self, request: HttpRequest) -> HttpResponse:
        """Send ``request`` and return the answer with its whole body read."""

    def stream(self, request: HttpRequest) -> HttpResponse:
        """Send ``request`` and return the answer once its headers are in; its
        body arrives while it is iterated (read timeouts raise from there)."""

    def close(self) -> None:
        """Close every connection, ending open streams. Idempotent."""
