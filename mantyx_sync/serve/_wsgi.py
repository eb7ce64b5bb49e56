"""Plain-WSGI plumbing the served apps share (no framework, so any WSGI server or
framework hosts them): who may call, bodies, JSON and SSE replies.

What a web page in the user's browser could otherwise do to a served agent is
refused here, once for both apps: a Host name the app does not answer to
(DNS rebinding) by :class:`ServedApp` (421), and a body not declared JSON (a form
or ``text/plain`` POST needs no CORS preflight) by :meth:`ServedApp._read_json`
(415), both before anything runs. It also bounds what a body costs in
memory: its bytes, and the JSON values parsing it may build.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from http import HTTPStatus
from typing import Any, ClassVar, Final

from ..errors import SpecError
from ._pump import Tick

__all__ = [
    "Authenticate",
    "BadJson",
    "ServedApp",
    "StartResponse",
    "base_url",
    "json_reply",
    "loggable",
    "parts_text",
]

log = logging.getLogger(__name__)

StartResponse = Callable[..., Any]
Authenticate = Callable[[dict[str, Any]], "str | bool | None"]
"""``authenticate(environ)``: the caller's name (a ``str``), ``True`` for a caller
without a name, or a false value to refuse the request."""

BYTES_PER_VALUE: Final = 16
"""A body holds at most one JSON value per this many bytes of ``max_body_bytes``:
a value costs up to ~100 bytes parsed (an empty list or object, a one-key
object), so a 1 MiB body of ``[[],[],...]`` would cost ~25 MB, 65,536 values ~6 MB."""
MAX_JSON_DEPTH: Final = 100
"""Nesting a body may have: far below Python's recursion limit, which a
document nested just under it still reaches when its reply is written."""
LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})
ANY_ADDRESS: Final = frozenset({"0.0.0.0", "::"})
"""``allowed_hosts`` entries standing for every address of the machine (what a
server bound to them answers on)."""
LOG_CHARS: Final = 200

_DIGITS: Final = re.compile(r"[0-9]+")
_HOST_NAME: Final = re.compile(r"[a-z0-9._:-]+")
_JSON_MEDIA: Final = re.compile(r"application/([a-z0-9.!#$&^_-]+\+)?json")
_JSON_STRING: Final = re.compile(rb'"[^"]*"')


class Refused(Exception):
    """A request answered with an HTTP error before its protocol looks at it."""

    def __init__(
        self, status: int, code: str, message: str, headers: Iterable[tuple[str, str]] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.headers = list(headers)

    def reply(self, start_response: StartResponse) -> list[bytes]:
        """Answer ``{"error": {"code", "message"}}`` with the status."""
        error = {"code": self.code, "message": str(self)}
        return json_reply(start_response, {"error": error}, self.status, self.headers)


class BadJson(ValueError):
    """The body arrived but is not JSON: the protocol's parse error."""


def host_name(value: str) -> str | None:
    """A Host header (or an ``allowed_hosts`` entry) as the bare name it names:
    lower case, without port, IPv6 brackets or a trailing dot; ``None`` if malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, port = value[1:].partition("]")
        if not bracket or (port and not port.startswith(":")):
            return None
        port = port[1:]
    elif value.count(":") == 1:
        name, _, port = value.partition(":")
    else:  # a bare name, or an IPv6 address written without brackets
        name, port = value, ""
    name = name.rstrip(".")
    if (port and not _DIGITS.fullmatch(port)) or not _HOST_NAME.fullmatch(name):
        return None
    return name


class ServedApp:
    """What a served app does before its protocol: answer ``GET /health``, then refuse
    a request for a Host name the app does not answer to (421) or that ``authenticate``
    refuses (401), or else name its caller for :meth:`_route`; a :class:`Refused`
    raised there is answered too. Immutable after construction; thread-safe.

    An ``allowed_hosts`` entry ``"0.0.0.0"`` or ``"::"`` (the address of a server
    bound to every address) lets in a Host that is an IP address, for a caller
    ``authenticate`` accepts: a rebound DNS name is still refused.

    :raises SpecError: a ``heartbeat``, ``max_sessions``, ``max_body_bytes`` or
        ``allowed_hosts`` entry no app can work with (an allowed host must be a
        host name, or ``"*"``).
    """

    MAX_BODY_BYTES: Final = 1024 * 1024
    """The default ``max_body_bytes``: the largest body :meth:`_read_json` reads."""
    MAX_ID_CHARS: Final = 256
    """The longest conversation or task id a caller may name (ids are kept)."""

    def __init__(
        self,
        authenticate: Authenticate | None,
        allowed_hosts: Iterable[str],
        heartbeat: float,
        max_sessions: int,
        max_body_bytes: int,
    ) -> None:
        if heartbeat <= 0:
            raise SpecError(f"must be a number of seconds > 0, got {heartbeat}", path="heartbeat")
        for path, count in (("max_sessions", max_sessions), ("max_body_bytes", max_body_bytes)):
            if count < 1:
                raise SpecError(f"must be at least 1, got {count}", path=path)
        self._heartbeat = heartbeat
        self.max_body_bytes = max_body_bytes
        self._authenticate = authenticate
        self._hosts = set(LOOPBACK_HOSTS)
        for index, host in enumerate(allowed_hosts):
            name = "*" if host == "*" else host_name(host)
            if name is None:
                raise SpecError(
                    "must be a host name such as example.com (no scheme or path), or '*'",
                    path=f"allowed_hosts[{index}]",
                )
            self._hosts.add(name)
        self._any_host = "*" in self._hosts
        self._any_address = not ANY_ADDRESS.isdisjoint(self._hosts) and authenticate is not None
        self._hosts -= ANY_ADDRESS  # no name: what a browser sent to 0.0.0.0 means loopback

    PUBLIC_PATHS: ClassVar[frozenset[str]] = frozenset()
    """Paths answered without credentials (still only for an allowed Host)."""

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        path = self._target(environ)[1]
        if path == "/health":
            return json_reply(start_response, {"status": "ok"})
        try:
            try:
                caller = self._caller(environ)
            except Refused as exc:
                if exc.status != 401 or path not in self.PUBLIC_PATHS:
                    raise
                caller = ""
            return self._route(environ, start_response, caller)
        except Refused as exc:
            return exc.reply(start_response)

    def _caller(self, environ: dict[str, Any]) -> str:
        """The caller's name (``""`` for one without a name).

        :raises Refused: a Host name outside the allowed ones (421), or
            ``authenticate`` refused (401).
        """
        host = environ.get("HTTP_HOST")
        # No Host at all is no browser's request (browsers always send one).
        if host is not None and not self._any_host and not self._answers(host_name(host)):
            raise Refused(
                421,
                "misdirected_request",
                "this app does not answer to the Host name of the request; list the name "
                "in allowed_hosts= (python -m mantyx_sync.serve: --allowed-host)",
            )
        if self._authenticate is None:
            return ""
        try:
            verdict = self._authenticate(environ)
        except Exception:
            log.exception("the authenticate hook raised; refusing the request")
            verdict = False
        if verdict is True:
            return ""
        if isinstance(verdict, str) and verdict:
            return verdict
        if verdict not in (False, None, ""):
            log.error(
                "the authenticate hook returned a %s; it must return the caller's name "
                "(a str), True or False: refusing the request",
                type(verdict).__name__,
            )
        raise Refused(
            401,
            "unauthorized",
            "missing or invalid credentials",
            [("WWW-Authenticate", 'Bearer realm="mantyx"')],
        )

    def _answers(self, name: str | None) -> bool:
        """Whether the app answers to Host ``name``: an allowed one, or an IP address
        when it serves every address (only to callers who then authenticate)."""
        if name in self._hosts:
            return True
        if not self._any_address or name is None:
            return False
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True

    def _read_json(self, environ: dict[str, Any]) -> Any:
        """The request body as JSON, within ``max_body_bytes`` (see :func:`_json_body`)."""
        return _json_body(environ, self.max_body_bytes)

    @staticmethod
    def _target(environ: dict[str, Any]) -> tuple[str, str]:
        """The request's method and path (relative to where the app is mounted)."""
        return environ.get("REQUEST_METHOD", "GET"), environ.get("PATH_INFO", "") or "/"

    def _route(self, environ: dict[str, Any], start_response: StartResponse, caller: str) -> Any:
        """Answer a request :meth:`_caller` let in."""
        raise NotImplementedError

    @staticmethod
    def _stream(
        start_response: StartResponse,
        items: Iterator[Any],
        on_close: Callable[[], None] | None = None,
    ) -> StreamBody:
        """Answer 200 with ``items`` as a :class:`StreamBody`."""
        start_response("200 OK", StreamBody.HEADERS)
        return StreamBody(items, on_close)


def _json_body(environ: dict[str, Any], max_bytes: int) -> Any:
    """The request body parsed as JSON, never reading more than ``max_bytes``, nor
    parsing more than one value per :data:`BYTES_PER_VALUE` of them.

    :raises Refused: the body is not declared JSON (415), its length is not a
        whole number (400) or it is larger than ``max_bytes`` (413).
    :raises BadJson: the body is not JSON, holds too many values, or nests deeper
        than :data:`MAX_JSON_DEPTH`.
    """
    media = environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower()
    if not _JSON_MEDIA.fullmatch(media):
        raise Refused(
            415,
            "unsupported_media_type",
            "the body must be JSON, sent with Content-Type: application/json",
        )
    declared = environ.get("CONTENT_LENGTH", "").strip()
    stream = environ["wsgi.input"]
    too_large = Refused(413, "too_large", f"the body is larger than {max_bytes} bytes")
    if declared:
        if not _DIGITS.fullmatch(declared):
            raise Refused(400, "bad_request", "Content-Length must be a whole number of bytes")
        if int(declared) > max_bytes:
            raise too_large
        raw = stream.read(int(declared))
    elif environ.get("wsgi.input_terminated"):  # e.g. chunked: the server marks its end
        raw = stream.read(max_bytes + 1)
        if len(raw) > max_bytes:
            raise too_large
    else:  # no length and no end: there is no body to read (PEP 3333)
        raw = b""
    # Parsed, a value costs up to ~100 bytes: count them before building any.
    most = max(max_bytes // BYTES_PER_VALUE, 1)
    if _values(raw) > most:
        raise BadJson(f"the body's JSON holds more than {most} values")
    too_deep = f"the body's JSON is nested more than {MAX_JSON_DEPTH} deep"
    try:
        text = raw.decode("utf-8")
        del raw  # only one copy of the body while it is parsed
        value = json.loads(text)
    except RecursionError as exc:
        raise BadJson(too_deep) from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadJson(f"the body is not JSON: {exc}") from exc
    del text
    level = [value]
    for _ in range(MAX_JSON_DEPTH):  # breadth first: no recursion of our own
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return value
    raise BadJson(too_deep)


def _values(raw: bytes) -> int:
    """At most how many values (keys and items included) JSON ``raw`` holds: each but
    the first follows a ``[``, ``{``, ``,`` or ``:`` outside strings."""
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")  # then each " opens or closes
    outside = _JSON_STRING.sub(b"", unescaped)
    return 1 + sum(outside.count(mark) for mark in (b"[", b"{", b",", b":"))


def parts_text(parts: Any, *, files: bool) -> str | None:
    """The text of a message's parts (A2A parts, Agent API contents), or ``None`` if
    blank: text parts joined with newlines, data parts as JSON and, with ``files``,
    file parts named. (An Agent API audio content's ``data`` is no data part.)"""
    pieces: list[str] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            pieces.append(part["text"])
        elif "data" in part and part.get("type", "data") == "data":
            pieces.append(json.dumps(part["data"], ensure_ascii=False, default=str))
        elif files:
            file = part.get("file")
            file = file if isinstance(file, Mapping) else part
            label = file.get("name") or file.get("filename") or file.get("uri") or file.get("url")
            if label:
                pieces.append(f"[file: {label}]")
    text = "\n".join(pieces)
    return text if text.strip() else None


def loggable(value: object) -> str:
    """What a caller sent (an id, a message) as one log-safe token: quoted, with line
    breaks and other control characters escaped, cut to :data:`LOG_CHARS` characters,
    so it can neither forge log lines nor flood the log."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > LOG_CHARS:
        return repr(text[:LOG_CHARS]) + f"... ({len(text)} characters)"
    return repr(text)


def json_reply(
    start_response: StartResponse,
    body: Any,
    status: int = 200,
    headers: Iterable[tuple[str, str]] = (),
) -> list[bytes]:
    """Answer with ``body`` as JSON."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    start_response(
        f"{status} {HTTPStatus(status).phrase}",
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
            *headers,
        ],
    )
    return [data]


def base_url(environ: dict[str, Any]) -> str:
    """The URL the app is mounted at, as the client sees it (no trailing slash).

    Only for a request :meth:`ServedApp._caller` let in: its Host is one the app answers to.
    """
    scheme = environ.get("wsgi.url_scheme", "http")
    host = environ.get("HTTP_HOST")
    if not host:
        host = environ.get("SERVER_NAME", "localhost")
        port = environ.get("SERVER_PORT")
        if port and port not in ("80", "443"):
            host = f"{host}:{port}"
    return f"{scheme}://{host}{environ.get('SCRIPT_NAME', '').rstrip('/')}"


class StreamBody:
    """An SSE response body: each item of ``items`` as a frame (:func:`sse_data`), a
    :data:`Tick.HEARTBEAT` as a comment line. When the WSGI server calls :meth:`close`
    (end of response, or the client went away), it calls ``on_close`` exactly once."""

    HEADERS: Final = [
        ("Content-Type", "text/event-stream; charset=utf-8"),
        ("Cache-Control", "no-cache"),
        ("X-Accel-Buffering", "no"),
    ]

    def __init__(self, items: Iterator[Any], on_close: Callable[[], None] | None) -> None:
        self._items = items
        self._on_close = on_close

    def __iter__(self) -> Iterator[bytes]:
        return (SSE_HEARTBEAT if item is Tick.HEARTBEAT else sse_data(item) for item in self._items)

    def close(self) -> None:
        on_close, self._on_close = self._on_close, None
        close_items = getattr(self._items, "close", None)
        if close_items is not None:
            close_items()
        if on_close is not None:
            on_close()


def sse_data(payload: Any) -> bytes:
    """One SSE frame carrying ``payload`` as JSON on a single ``data:`` line."""
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n\n"


SSE_HEARTBEAT: Final = b": keep-alive\n\n"
