"""Foreign exceptions in words a person reads: the transport's one translation point.

:func:`translate` turns a ``requests``/``urllib3``/socket exception into the
:mod:`mantyx_sync.errors` tree (as ``requests``' ``HTTPAdapter.send`` does for
urllib3's), naming the host and what happened; the caller chains the original
exception as ``__cause__``.
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import time
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3.exceptions

from .._base.bounded import BodyTooLarge, NotJSON, decode_json, read_capped
from .._base.redact import redact_text
from ..errors import APIConnectionError, ConnectError, RequestTimeoutError, WireFormatError

__all__ = ["NETWORK_ERRORS", "gave_up", "origin", "translate", "whole_body", "wire_json"]

NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    OSError,  # sockets, TLS, timeouts (requests' own exceptions are OSErrors too)
    http.client.HTTPException,  # IncompleteRead, a broken status line
    urllib3.exceptions.HTTPError,  # ProtocolError, ReadTimeoutError, DecodeError
)
"""What a failed exchange or read raises: translated by :func:`translate`.
Anything else (``AttributeError``, ``TypeError``) is a bug and surfaces as itself."""


def describe(exc: BaseException) -> str:
    return redact_text(f"{type(exc).__name__}: {exc}")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception behind it (cause, context, ``reason``, args)."""
    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        cur = todo.pop()
        if not isinstance(cur, BaseException) or id(cur) in seen:
            continue
        seen.add(id(cur))
        yield cur
        todo.extend([cur.__cause__, cur.__context__, getattr(cur, "reason", None)])
        todo.extend(a for a in getattr(cur, "args", ()) if isinstance(a, BaseException))


def _caused_by(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    return any(isinstance(cur, kinds) for cur in _chain(exc))


def origin(url: str) -> str | None:
    """``scheme://host[:port]`` of an absolute URL, cut at its path without
    parsing it (``None``: no path); on the per-request path."""
    path = url.find("/", url.find("//") + 2)
    return url[:path] if path >= 0 else None


def _host(url: str | None) -> str:
    """``host:port`` of ``url`` (never its user info or path)."""
    if not url:
        return "the server"
    # Named on every request (a body's cap says whose answer it is): once per origin.
    return _origin_host(origin(url) or url)


@functools.lru_cache(maxsize=64)
def _origin_host(url: str) -> str:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or "the server"
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    return f"{host}:{port}"


def _os_reason(exc: BaseException) -> str | None:
    for cur in _chain(exc):
        if isinstance(cur, OSError) and cur.strerror and not isinstance(cur, ssl.SSLError):
            return str(cur.strerror).lower()
    return None


def _ssl_reason(exc: BaseException) -> str:
    for cur in _chain(exc):
        if isinstance(cur, ssl.SSLError):
            text = getattr(cur, "verify_message", None) or cur.reason or str(cur)
            return str(text).lower().replace("_", " ")
    return "handshake failed"


def _seconds(value: float | None) -> str:
    return "" if value is None else f" within {value:g}s"


def translate(
    exc: BaseException,
    url: str | None = None,
    *,
    connect_timeout: float | None = None,
    read_timeout: float | None = None,
    deadline: float | None = None,
    reading: bool = False,
) -> APIConnectionError:
    """``exc`` in the package's words; ``deadline`` (``time.monotonic()``): the
    request's total deadline, named as the cause once it has passed."""
    host = _host(url)
    if deadline is not None and time.monotonic() >= deadline:
        return RequestTimeoutError(
            f"timed out: {host} did not answer in full before the request's deadline"
        )
    connecting = not reading and not isinstance(exc, requests.exceptions.ChunkedEncodingError)
    if isinstance(exc, requests.exceptions.SSLError) or _caused_by(exc, (ssl.SSLError,)):
        return ConnectError(f"could not connect to {host}: TLS failure ({_ssl_reason(exc)})")
    if _caused_by(exc, (urllib3.exceptions.NameResolutionError, socket.gaierror)):
        return ConnectError(f"could not connect to {host}: name not resolved")
    if _caused_by(exc, (ConnectionRefusedError,)):
        return ConnectError(f"could not connect to {host}: connection refused")
    if isinstance(exc, requests.ConnectTimeout):
        # (urllib3's NewConnectionError subclasses ConnectTimeoutError; requests
        # tells a real connect timeout apart, so ask requests.)
        return ConnectError(f"could not connect to {host}: timed out{_seconds(connect_timeout)}")
    if _caused_by(exc, (urllib3.exceptions.NewConnectionError,)):
        reason = _os_reason(exc) or "the connection could not be made"
        return ConnectError(f"could not connect to {host}: {reason}")
    if isinstance(exc, requests.Timeout) or _caused_by(
        exc, (urllib3.exceptions.ReadTimeoutError, TimeoutError, socket.timeout)
    ):
        # A streaming read timeout arrives as requests.ConnectionError.
        return RequestTimeoutError(f"timed out: {host} sent nothing{_seconds(read_timeout)}")
    if connecting and _caused_by(
        exc, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
    ):
        return APIConnectionError(f"{host} closed the connection without answering")
    if isinstance(exc, requests.exceptions.ChunkedEncodingError) or _caused_by(
        exc, (urllib3.exceptions.ProtocolError, http.client.IncompleteRead)
    ):
        return APIConnectionError(f"{host} closed the connection before the answer was complete")
    return APIConnectionError(f"connection to {host} failed: {describe(exc)}")


def gave_up(exc: APIConnectionError, attempts: int, elapsed: float) -> APIConnectionError:
    """``exc`` again, its message saying after how many attempts and how long."""
    if type(exc) not in (APIConnectionError, ConnectError, RequestTimeoutError):
        return exc
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    return type(exc)(f"{exc} (gave up after {tries} in {elapsed:.1f}s)")


def whole_body(chunks: Iterable[bytes], url: str, limit: int, deadline: float | None) -> bytes:
    """A body read whole, to at most ``limit`` bytes and by ``deadline``.

    :raises WireFormatError: the body is larger than ``limit`` (reading stopped there).
    :raises RequestTimeoutError: the deadline passed first.
    """
    try:
        return read_capped(
            chunks, limit=limit, what=f"the answer from {_host(url)}", deadline=deadline
        )
    except BodyTooLarge as exc:
        raise WireFormatError(str(exc)) from None
    except TimeoutError as exc:
        raise translate(exc, url, deadline=deadline, reading=True) from exc


def wire_json(content: bytes, what: str, content_type: str | None) -> Any:
    """The JSON value of a 2xx body (``None`` when empty).

    :raises WireFormatError: it is not JSON; the message names ``what`` and the content type.
    """
    if not content:
        return None
    try:
        return decode_json(content)
    except NotJSON as exc:
        kind = f"content type {content_type!r}" if content_type else "no content type"
        raise WireFormatError(
            f"{what} is not JSON ({exc}; {kind}): a proxy or another server may have "
            "answered; check base_url"
        ) from None
