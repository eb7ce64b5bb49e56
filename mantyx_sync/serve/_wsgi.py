"""Plain-WSGI plumbing the served apps share: bodies, JSON and SSE replies, auth.

No framework: the apps are callables ``app(environ, start_response)`` that any
WSGI server (werkzeug, gunicorn, mod_wsgi) or framework (Flask's
``app.wsgi_app`` dispatcher, a Django view) can host.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

__all__ = [
    "SSE_HEARTBEAT",
    "Authenticate",
    "BadBody",
    "StartResponse",
    "StreamBody",
    "base_url",
    "is_allowed",
    "json_reply",
    "read_json",
    "sse_data",
    "unauthorized",
]

log = logging.getLogger(__name__)

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
Authenticate = Callable[[dict[str, Any]], bool]
"""``authenticate(environ) -> bool``: whether the request may proceed."""

MAX_BODY_BYTES: Final = 8 * 1024 * 1024

_REASONS: Final = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
}


class BadBody(ValueError):
    """The request body is not usable JSON; ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def read_json(environ: dict[str, Any]) -> Any:
    """The request body parsed as JSON.

    :raises BadBody: too large, unreadable, or not JSON.
    """
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError as exc:
        raise BadBody("bad Content-Length") from exc
    if length > MAX_BODY_BYTES:
        raise BadBody(f"the body is larger than {MAX_BODY_BYTES} bytes", 413)
    stream = environ["wsgi.input"]
    raw = stream.read(length) if length else stream.read(MAX_BODY_BYTES + 1)
    if len(raw) > MAX_BODY_BYTES:
        raise BadBody(f"the body is larger than {MAX_BODY_BYTES} bytes", 413)
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadBody(f"the body is not JSON: {exc}") from exc


def _status(code: int) -> str:
    return f"{code} {_REASONS.get(code, 'Error')}"


def json_reply(
    start_response: StartResponse,
    body: Any,
    status: int = 200,
    headers: Iterable[tuple[str, str]] = (),
) -> list[bytes]:
    """Answer with ``body`` as JSON."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    start_response(
        _status(status),
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
            *headers,
        ],
    )
    return [data]


def unauthorized(start_response: StartResponse) -> list[bytes]:
    """The 401 every app gives when ``authenticate`` refuses a request."""
    return json_reply(
        start_response,
        {"error": {"code": "unauthorized", "message": "missing or invalid credentials"}},
        401,
        [("WWW-Authenticate", 'Bearer realm="mantyx"')],
    )


def is_allowed(authenticate: Authenticate | None, environ: dict[str, Any]) -> bool:
    """Run the hook; a hook that raises refuses (and is logged)."""
    if authenticate is None:
        return True
    try:
        return bool(authenticate(environ))
    except Exception:
        log.exception("the authenticate hook raised; refusing the request")
        return False


def base_url(environ: dict[str, Any]) -> str:
    """The URL the app is mounted at, as the client sees it (no trailing slash)."""
    scheme = environ.get("wsgi.url_scheme", "http")
    host = environ.get("HTTP_HOST")
    if not host:
        host = environ.get("SERVER_NAME", "localhost")
        port = environ.get("SERVER_PORT")
        if port and port not in ("80", "443"):
            host = f"{host}:{port}"
    return f"{scheme}://{host}{environ.get('SCRIPT_NAME', '').rstrip('/')}"


class StreamBody:
    """An SSE response body: iterates ``frames`` and, when the WSGI server calls
    :meth:`close` (end of response, or the client went away), calls ``on_close``
    exactly once."""

    HEADERS: Final = [
        ("Content-Type", "text/event-stream; charset=utf-8"),
        ("Cache-Control", "no-cache"),
        ("X-Accel-Buffering", "no"),
    ]

    def __init__(self, frames: Iterator[bytes], on_close: Callable[[], None]) -> None:
        self._frames = frames
        self._on_close: Callable[[], None] | None = on_close

    def __iter__(self) -> Iterator[bytes]:
        return self._frames

    def close(self) -> None:
        on_close, self._on_close = self._on_close, None
        close_frames = getattr(self._frames, "close", None)
        if close_frames is not None:
            close_frames()
        if on_close is not None:
            on_close()


def sse_data(payload: Any) -> bytes:
    """One SSE frame carrying ``payload`` as JSON on a single ``data:`` line."""
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n\n"


SSE_HEARTBEAT: Final = b": keep-alive\n\n"
