"""The emulator's WSGI plumbing: the request a handler reads, the response it returns.

:class:`Request` parses one WSGI environ (method, path, query pairs, the raw
body and its JSON, or the :data:`NO_BODY`/:data:`BAD_JSON` markers);
:class:`Response` is what a route handler answers (a JSON body, no body, an
event stream or a dropped connection); :class:`HTTPError` is raised by a
handler to answer with a JSON error ``{"error": code, "message": ...}``.
:func:`default_code` names the error code of a status for injected faults.
Routing, auth and the handlers themselves are in :mod:`._app`.
"""

from __future__ import annotations

import http
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl

__all__ = [
    "BAD_JSON",
    "NO_BODY",
    "HTTPError",
    "Request",
    "Response",
    "StartResponse",
    "default_code",
    "read_body",
    "status_line",
]

StartResponse = Callable[..., Any]

NO_BODY = object()
"""The request had no body, or the response has none."""
BAD_JSON = object()
"""The request's body is not valid JSON."""


class HTTPError(Exception):
    """Raised by a handler: answer ``status`` with ``{"error": code, "message": ...}``."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": code, "message": message, **extra}
        self.headers: dict[str, str] = {}


class Response:
    """What a handler answers: a JSON body, no body, a stream, or a dropped connection."""

    __slots__ = ("body", "drop", "headers", "status", "stream")

    def __init__(
        self,
        status: int,
        body: Any = NO_BODY,
        headers: Mapping[str, str] | None = None,
        stream: Iterable[bytes] | None = None,
        drop: bool = False,
    ) -> None:
        self.status = status
        self.body = body
        self.headers = dict(headers or {})
        self.stream = stream
        self.drop = drop


def status_line(status: int) -> str:
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Status {status}"


def default_code(status: int) -> str:
    return {
        400: "invalid_request",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        409: "conflict",
        429: "rate_limited",
        500: "internal_error",
        502: "bad_gateway",
        503: "unavailable",
        504: "timeout",
    }.get(status, "error")


class Request:
    """One request as the handlers read it; :attr:`params` are the route's path groups."""

    __slots__ = ("body", "environ", "method", "pairs", "params", "path", "query", "raw")

    def __init__(self, environ: dict[str, Any], raw: bytes) -> None:
        self.environ = environ
        self.method = environ["REQUEST_METHOD"].upper()
        self.path = environ.get("PATH_INFO") or "/"
        # ``pairs`` keeps repeated keys (``metadata=a:1&metadata=b:2``); ``query`` the last of each.
        self.pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        self.query = dict(self.pairs)
        self.raw = raw
        self.body = _parse_json(raw)
        self.params: dict[str, str] = {}

    def json_body(self) -> Any:
        if self.body is NO_BODY:
            raise HTTPError(400, "invalid_request", "a JSON body is required")
        if self.body is BAD_JSON:
            raise HTTPError(400, "invalid_request", "the body is not valid JSON")
        return self.body


def read_body(environ: dict[str, Any]) -> bytes:
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > 0:
        raw: bytes = stream.read(length)
    elif environ.get("wsgi.input_terminated"):
        raw = stream.read()
    else:
        raw = b""
    return raw


def _parse_json(raw: bytes) -> Any:
    if not raw:
        return NO_BODY
    try:
        return json.loads(raw)
    except ValueError:
        return BAD_JSON
