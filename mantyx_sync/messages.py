"""Conversation input: messages and file attachments (:class:`Attachment` is defined in
:mod:`.attachments` and streamed by :mod:`._http.body`), checked before anything is sent.
"""

from __future__ import annotations

import base64
import binascii
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Union

import attrs

from ._base.argcheck import checked_init
from ._base.limits import (
    ATTACHMENTS_MAX,
    INLINE_FILES_MAX_BYTES,
    MESSAGE_CONTENT_MAX_CHARS,
    MESSAGES_MAX,
)
from ._base.types import JSONDict
from .attachments import Attachment, check_mime, check_url
from .errors import ArgumentTypeError, SpecError

__all__ = ["Attachment", "Message"]

ROLES: Final = ("user", "assistant", "system")

AttachmentLike = Union[Attachment, Path, Mapping[str, Any]]  # noqa: UP007 - runtime alias
"""What an attachments list accepts: an :class:`Attachment`, a ``Path`` (read as
a file) or an ``attachments[]`` wire dict."""


def _to_tuple(value: Iterable[AttachmentLike]) -> tuple[AttachmentLike, ...]:
    return tuple(value)


@checked_init(ArgumentTypeError)
@attrs.frozen
class Message:
    """One conversation message: ``Message("user", "Summarise this", attachments=[...])``.

    :ivar role: ``"user"``, ``"assistant"`` or ``"system"``.
    :ivar content: the text (at most 200,000 characters).
    :ivar attachments: files, only on the last user message.
    """

    role: str
    content: str
    attachments: tuple[AttachmentLike, ...] = attrs.field(default=(), converter=_to_tuple)

    def __getitem__(self, key: str) -> Any:
        """``message["content"]``, deprecated: from when a session's history was
        dicts; read ``message.content`` (``role``, ``attachments``) instead."""
        if key not in ("role", "content", "attachments"):
            raise KeyError(key)
        warnings.warn(
            f"message[{key!r}] is deprecated: history messages are Message values, "
            f"use message.{key}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, key)


MessageLike = Union[Message, Mapping[str, Any], tuple[str, str]]  # noqa: UP007 - runtime alias
"""What a messages list accepts: a :class:`Message`, a ``{"role", "content"}``
dict (``"attachments"`` too) or a ``(role, content)`` tuple."""


def _coerce_attachment(item: Any, path: str) -> Attachment | JSONDict:
    if isinstance(item, Attachment):
        return item
    if isinstance(item, Path):
        try:
            return Attachment.from_path(item)
        except SpecError as exc:
            raise SpecError(str(exc), path=path) from exc
    if isinstance(item, Mapping):
        return _check_wire_attachment(item, path)
    hint = (
        " (wrap a file name in pathlib.Path or use Attachment.from_path)"
        if isinstance(item, str)
        else ""
    )
    raise SpecError(
        f"must be an Attachment, a pathlib.Path or an attachment dict, "
        f"got {type(item).__name__}{hint}",
        path=path,
    )


def _check_wire_attachment(item: Mapping[str, Any], path: str) -> JSONDict:
    entry = dict(item)
    kind = entry.get("type")
    mime = entry.get("mimeType")
    if mime is not None and not isinstance(mime, str):
        raise SpecError("must be a string", path=f"{path}.mimeType")
    if kind == "input_file_url":
        check_url(entry.get("url"), f"{path}.url")
        check_mime(mime, f"{path}.mimeType")
    elif kind == "input_file":
        if not isinstance(mime, str):
            raise SpecError("is required for an inline file", path=f"{path}.mimeType")
        check_mime(mime, f"{path}.mimeType")
        if not isinstance(entry.get("filename"), str) or not entry["filename"]:
            raise SpecError("is required for an inline file", path=f"{path}.filename")
        data = entry.get("data")
        if not isinstance(data, str) or data.startswith("data:"):
            raise SpecError("must be base64 text without a data: prefix", path=f"{path}.data")
    else:
        raise SpecError(
            f"type must be 'input_file' or 'input_file_url', got {kind!r}", path=f"{path}.type"
        )
    return entry


def _decoded_size(entry: Attachment | JSONDict, path: str) -> int:
    if isinstance(entry, Attachment):
        return (entry.size or 0) if entry.inline else 0
    if entry.get("type") != "input_file":
        return 0
    data = entry["data"]
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise SpecError("is not valid base64", path=f"{path}.data") from exc


def _coerce_message(message: Any, where: str) -> tuple[str, str, Sequence[Any] | None]:
    if isinstance(message, Message):
        role: Any = message.role
        content: Any = message.content
        attachments: Any = message.attachments or None
    elif isinstance(message, tuple) and len(message) == 2:
        role, content, attachments = message[0], message[1], None
    elif isinstance(message, Mapping):
        role, content = message.get("role"), message.get("content")
        attachments = message.get("attachments")
    else:
        raise SpecError(
            "must be a Message, {'role': ..., 'content': ...} or a (role, content) tuple, "
            f"got {type(message).__name__}",
            path=where,
        )
    if role not in ROLES:
        raise SpecError(
            f"role must be 'user', 'assistant' or 'system', got {role!r}", path=f"{where}.role"
        )
    if not isinstance(content, str):
        raise SpecError(f"must be a string, got {type(content).__name__}", path=f"{where}.content")
    if len(content) > MESSAGE_CONTENT_MAX_CHARS:
        raise SpecError(
            f"is {len(content)} characters; the limit is {MESSAGE_CONTENT_MAX_CHARS}",
            path=f"{where}.content",
        )
    if attachments is not None and (
        isinstance(attachments, (str, bytes, Mapping)) or not isinstance(attachments, Sequence)
    ):
        raise SpecError(
            f"must be a list, got {type(attachments).__name__}", path=f"{where}.attachments"
        )
    return role, content, attachments


_UNINSTRUCTED: Final = (
    "required unless agent_id is set or messages include a non-empty system message "
    "(pass system_prompt=, agent_id=, or a Message('system', ...) in messages=)"
)
"""Why a run with neither ``system_prompt``, ``agent_id`` nor a system message is refused."""


def turn_input(
    prompt: str | None = None,
    messages: Sequence[Message | Mapping[str, Any] | tuple[str, str]] | None = None,
    attachments: Sequence[AttachmentLike] | None = None,
    *,
    instructed: bool = True,
    streamed: bool = False,
) -> JSONDict:
    """The turn part of a run/message body: ``{"prompt": ...}`` or ``{"messages": [...]}``.

    Every limit is checked first; files are read and encoded only once every
    check has passed. A run with only system messages is valid when one of them
    has text.

    :param attachments: files added to the last user message (or to the prompt).
    :param instructed: whether the spec has a ``system_prompt`` or ``agent_id``;
        when it has neither, ``messages`` must hold a system message with text.
    :param streamed: leave each inline file's ``data`` as a ``FileData`` that
        the transport base64-encodes chunk by chunk while it sends the body, so
        neither the file nor its base64 text is ever held whole; else files are
        read and encoded now.
    :raises SpecError: what to fix, and where (e.g. ``messages[2].content``).
    """
    given: Any = messages
    if prompt is not None and messages is not None:
        raise SpecError("pass prompt or messages, not both")
    if prompt is None and messages is None:
        raise SpecError("pass prompt or messages")
    extra = _attachment_list(attachments)
    if prompt is not None:
        if not instructed:
            raise SpecError(_UNINSTRUCTED, path="system_prompt")
        text: Any = prompt
        if not isinstance(text, str) or not text.strip():
            raise SpecError("must be a non-empty string", path="prompt")
        if len(text) > MESSAGE_CONTENT_MAX_CHARS:
            raise SpecError(
                f"is {len(text)} characters; the limit is {MESSAGE_CONTENT_MAX_CHARS}",
                path="prompt",
            )
        if not extra:
            return {"prompt": prompt}
        given = [("user", prompt)]  # the files go on it as on a user message
    if isinstance(given, (str, bytes, Mapping)) or not isinstance(given, Sequence):
        raise SpecError(f"must be a list, got {type(given).__name__}", path="messages")
    if not given:
        raise SpecError("must not be empty", path="messages")
    if len(given) > MESSAGES_MAX:
        raise SpecError(f"has {len(given)} messages; the limit is {MESSAGES_MAX}", path="messages")
    parsed = [_coerce_message(message, f"messages[{i}]") for i, message in enumerate(given)]
    non_system = [i for i, (role, _, _) in enumerate(parsed) if role != "system"]
    system_text = any(role == "system" and content.strip() for role, content, _ in parsed)
    if not non_system and not system_text:
        raise SpecError("a run needs a user message or a non-empty system message", path="messages")
    if not instructed and not system_text:
        raise SpecError(_UNINSTRUCTED, path="system_prompt")
    if non_system and parsed[non_system[-1]][0] != "user":
        raise SpecError(
            "the last non-system message must be a user message",
            path=f"messages[{non_system[-1]}].role",
        )
    last_user = non_system[-1] if non_system else None
    for index, (_, _, files) in enumerate(parsed):
        if files and index != last_user:
            raise SpecError(
                "attachments are only accepted on the last user message",
                path=f"messages[{index}].attachments",
            )
    if extra and last_user is None:
        raise SpecError("needs a user message to attach the files to", path="attachments")
    out: list[JSONDict] = []
    for index, (role, content, files) in enumerate(parsed):
        entry: JSONDict = {"role": role, "content": content}
        if index == last_user and (files or extra):
            pairs = [
                (item, f"messages[{index}].attachments[{i}]") for i, item in enumerate(files or ())
            ]
            pairs += [(item, f"attachments[{i}]") for i, item in enumerate(extra)]
            entry["attachments"] = _attachments_wire(pairs, streamed)
        out.append(entry)
    return {"messages": out}


def _attachment_list(attachments: Any) -> list[Any]:
    if attachments is None:
        return []
    if isinstance(attachments, (str, bytes, Mapping, Attachment, Path)) or not isinstance(
        attachments, Iterable
    ):
        raise SpecError(
            f"must be a list of attachments, got {type(attachments).__name__}", path="attachments"
        )
    return list(attachments)


def _attachments_wire(pairs: Sequence[tuple[Any, str]], streamed: bool) -> list[JSONDict]:
    # Every file is checked before any is read or encoded.
    if len(pairs) > ATTACHMENTS_MAX:
        where = pairs[ATTACHMENTS_MAX][1].rpartition("[")[0]
        raise SpecError(
            f"{len(pairs)} files on one message; the limit is {ATTACHMENTS_MAX}", path=where
        )
    checked: list[Attachment | JSONDict] = []
    total = 0
    for item, path in pairs:
        entry = _coerce_attachment(item, path)
        total += _decoded_size(entry, path)
        if total > INLINE_FILES_MAX_BYTES:
            raise SpecError(
                f"inline files total {total} bytes decoded; the limit is "
                f"{INLINE_FILES_MAX_BYTES} per run (send large files as https URLs)",
                path=path,
            )
        checked.append(entry)
    return [
        item.to_wire(streamed=streamed) if isinstance(item, Attachment) else item
        for item in checked
    ]
