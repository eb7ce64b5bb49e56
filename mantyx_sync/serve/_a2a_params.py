"""The parameters of A2A requests, checked as the specifications require before
anything runs (pure: dicts in, values out; a refusal is an ``INVALID_PARAMS`` or
``CONTENT_TYPE_NOT_SUPPORTED`` :class:`RpcError` naming the field).

A message is kept only as far as a task needs it: its text, data and file
*references* (never inline file bytes, which the agent does not receive), and
only the fields the specification defines.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

from ._a2a_rpc import RpcError
from ._a2a_wire import Dialect
from ._wsgi import parts_text

__all__ = [
    "ListQuery",
    "history_length",
    "list_query",
    "page_token",
    "read_message",
    "task_id",
]

MAX_ID_CHARS: Final = 256
"""Longest id (message, task, context) a caller may send."""
DEFAULT_PAGE_SIZE: Final = 50
MAX_PAGE_SIZE: Final = 100

_ROLES: Final[Mapping[Dialect, frozenset[Any]]] = {
    "0.3": frozenset({"user", "agent"}),
    # ProtoJSON's names and numbers, and the short names the specification's prose uses.
    "1.0": frozenset({"ROLE_USER", "ROLE_AGENT", 1, 2, "user", "agent"}),
}
_PART_KINDS: Final = {"text": "text", "file": "file", "data": "data"}
_STATES: Final = frozenset(
    f"TASK_STATE_{name}"
    for name in (
        "SUBMITTED",
        "WORKING",
        "COMPLETED",
        "FAILED",
        "CANCELED",
        "INPUT_REQUIRED",
        "REJECTED",
        "AUTH_REQUIRED",
    )
)
_FILE_FIELDS: Final = ("name", "mimeType", "uri")


class Incoming(NamedTuple):
    """A caller's message, checked."""

    text: str
    """What the agent is asked: text parts, data parts as JSON, file parts named."""
    message: dict[str, Any]
    """The message as a task keeps it (its history)."""
    task_id: str | None
    context_id: str | None


class ListQuery(NamedTuple):
    """``ListTasks`` parameters, checked."""

    context_id: str | None
    state: str | None
    """1.0 spelling (``TASK_STATE_WORKING``)."""
    after: datetime.datetime | None
    page_size: int
    cursor: tuple[str, str] | None
    """(status timestamp, task id) of the last task of the previous page."""
    history_length: int | None
    include_artifacts: bool


def _bad(message: str) -> RpcError:
    return RpcError("INVALID_PARAMS", message)


def _id(value: Any, path: str, *, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise _bad(f"{path} must be a non-empty string")
    if len(value) > MAX_ID_CHARS:
        raise _bad(f"{path} is longer than {MAX_ID_CHARS} characters")
    return value


def task_id(params: Mapping[str, Any]) -> str:
    """``params.id``: the task a request names."""
    return _id(params.get("id"), "params.id", required=True) or ""


def history_length(value: Any, path: str) -> int | None:
    """A ``historyLength``: ``None`` when unset, else a whole number >= 0."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _bad(f"{path} must be a whole number >= 0")
    return value


def _media_matches(media: str, modes: Sequence[str]) -> bool:
    kind = media.split(";", 1)[0].strip().lower()
    for mode in modes:
        mode = mode.split(";", 1)[0].strip().lower()
        if mode in ("*/*", kind) or (mode.endswith("/*") and kind.startswith(mode[:-1])):
            return True
    return False


def _part(part: Any, path: str, dialect: Dialect, modes: Sequence[str]) -> dict[str, Any]:
    """One part as kept: its media type checked against ``modes``, file bytes dropped."""
    if not isinstance(part, Mapping):
        raise _bad(f"{path} must be an object")
    if dialect == "0.3":
        kind = part.get("kind")
        if kind not in _PART_KINDS:
            raise _bad(f'{path}.kind must be "text", "file" or "data"')
        if kind not in part or (kind == "text" and not isinstance(part["text"], str)):
            raise _bad(f"{path} is a {kind} part without its {kind!r} field")
        file = part.get("file") if kind == "file" else None
        if kind == "file" and not isinstance(file, Mapping):
            raise _bad(f"{path}.file must be an object")
        media = file.get("mimeType") if isinstance(file, Mapping) else None
    else:
        present = [name for name in ("text", "raw", "url", "data") if name in part]
        if len(present) != 1:
            raise _bad(f"{path} must hold exactly one of text, raw, url or data")
        kind = {"raw": "file", "url": "file"}.get(present[0], present[0])
        if kind == "text" and not isinstance(part["text"], str):
            raise _bad(f"{path}.text must be a string")
        media = part.get("mediaType")
    if media is None:
        media = {"text": "text/plain", "data": "application/json"}.get(kind)
    if media is not None and (not isinstance(media, str) or not _media_matches(media, modes)):
        raise RpcError(
            "CONTENT_TYPE_NOT_SUPPORTED",
            f"{path} is {media}; this agent takes {', '.join(modes)}",
            mediaType=str(media)[:100],
        )
    if kind == "file":  # the agent got a reference: keep that, never inline bytes
        return _file_reference(part, dialect)
    kept = {kind: part[kind]}
    if dialect == "0.3":
        kept["kind"] = kind
    elif "mediaType" in part:
        kept["mediaType"] = part["mediaType"]
    return kept


def _file_reference(part: Mapping[str, Any], dialect: Dialect) -> dict[str, Any]:
    """A file part as kept: by URL when it has one, else the text naming it."""
    if dialect == "0.3":
        file = part["file"]
        if isinstance(file.get("uri"), str):
            return {"kind": "file", "file": {k: file[k] for k in _FILE_FIELDS if k in file}}
        return {"kind": "text", "text": f"[file: {file.get('name') or 'unnamed'}]"}
    if isinstance(part.get("url"), str):
        return {k: part[k] for k in ("url", "filename", "mediaType") if k in part}
    return {"text": f"[file: {part.get('filename') or 'unnamed'}]"}


def read_message(params: Mapping[str, Any], dialect: Dialect, modes: Sequence[str]) -> Incoming:
    """``params.message`` of a send, checked, with the text the agent is asked.

    :raises RpcError: ``INVALID_PARAMS`` for a message the specification refuses
        (no ``messageId``, ``role`` or parts; a 0.3 part without ``kind``; an id
        too long), ``CONTENT_TYPE_NOT_SUPPORTED`` for a part of a media type the
        agent does not take (``modes``: its card's input modes).
    """
    message = params.get("message")
    if not isinstance(message, Mapping):
        raise _bad("params.message must be an object")
    message_id = _id(message.get("messageId"), "params.message.messageId", required=True)
    role = message.get("role")
    if role not in _ROLES[dialect]:
        allowed = '"user" or "agent"' if dialect == "0.3" else '"ROLE_USER" or "ROLE_AGENT"'
        raise _bad(f"params.message.role must be {allowed}")
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        raise _bad("params.message.parts must be a non-empty list")
    kept_parts = [
        _part(part, f"params.message.parts[{i}]", dialect, modes) for i, part in enumerate(parts)
    ]
    text = parts_text(parts, files=True)
    if text is None:
        raise _bad("params.message must carry some text (a text, data or named file part)")
    task = _id(message.get("taskId"), "params.message.taskId", required=False)
    context = _id(message.get("contextId"), "params.message.contextId", required=False)
    kept: dict[str, Any] = {"messageId": message_id, "role": role, "parts": kept_parts}
    if dialect == "0.3":
        kept["kind"] = "message"
    return Incoming(text, kept, task, context)


def page_token(status_time: str, task: str) -> str:
    """The opaque ``nextPageToken`` naming a position in the list order."""
    raw = f"{status_time}\n{task}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _cursor(token: Any) -> tuple[str, str] | None:
    if token is None or token == "":
        return None
    if not isinstance(token, str) or len(token) > 4 * MAX_ID_CHARS:
        raise _bad("params.pageToken must be a nextPageToken this server returned")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raw = ""
    stamp, newline, task = raw.partition("\n")
    if not newline or not task:
        raise _bad("params.pageToken must be a nextPageToken this server returned")
    return stamp, task


def _timestamp(value: Any) -> datetime.datetime | None:
    if value is None:
        return None
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        stamp = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _bad("params.statusTimestampAfter must be an ISO 8601 time") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return stamp


def list_query(params: Mapping[str, Any]) -> ListQuery:
    """The ``ListTasks`` parameters, checked.

    :raises RpcError: ``INVALID_PARAMS`` naming the first invalid one.
    """
    size = params.get("pageSize")
    if size is None:
        size = DEFAULT_PAGE_SIZE
    elif not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= MAX_PAGE_SIZE:
        raise _bad(f"params.pageSize must be a whole number from 1 to {MAX_PAGE_SIZE}")
    state = params.get("status")
    if isinstance(state, str) and state.islower():  # "input-required", as the prose writes
        state = "TASK_STATE_" + state.upper().replace("-", "_")
    if state is not None and state not in _STATES:
        raise _bad(f"params.status must be one of {', '.join(sorted(_STATES))}")
    include = params.get("includeArtifacts", False)
    if not isinstance(include, bool):
        raise _bad("params.includeArtifacts must be true or false")
    return ListQuery(
        context_id=_id(params.get("contextId"), "params.contextId", required=False),
        state=state,
        after=_timestamp(params.get("statusTimestampAfter")),
        page_size=size,
        cursor=_cursor(params.get("pageToken")),
        history_length=history_length(params.get("historyLength"), "params.historyLength"),
        include_artifacts=include,
    )
