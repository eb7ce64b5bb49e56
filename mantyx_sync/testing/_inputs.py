"""Server-side checks of conversation input and files.

Written independently of the SDK, like :mod:`._validation`: the limits are
restated here so that a wrong limit in the client cannot also hide here.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

__all__ = ["attachment_metadata", "check_attachments", "check_tool_files"]

MAX_CONTENT: Final = 200_000
MAX_FILES: Final = 20
MAX_INLINE_BYTES: Final = 5_000_000
ATTACHMENT_TYPES: Final = frozenset({"input_file", "input_file_url"})
_EXACT: Final = frozenset(
    {
        "audio/mp4",
        "audio/mpeg",
        "audio/wav",
        "audio/webm",
        "image/jpeg",
        "image/png",
        "image/webp",
        "image/gif",
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/json",
        "application/xml",
    }
)


def mime_allowed(mime: str) -> bool:
    """Whether files of this MIME type are accepted."""
    base = mime.split(";")[0].strip().lower()
    return (base.startswith("text/") and len(base) > 5) or base in _EXACT


def _decoded_len(data: Any, where: str, fail: Any) -> int:
    if not isinstance(data, str) or data.startswith("data:"):
        raise fail(f"{where}.data: must be base64 without a data: prefix")
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise fail(f"{where}.data: not valid base64") from exc


def check_attachments(messages: list[dict[str, Any]], fail: Any) -> None:
    """Check content lengths and every message's ``attachments``.

    :param fail: the exception class to raise (the caller's 400 error).
    """
    user_indexes = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    last_user = user_indexes[-1] if user_indexes else None
    total = 0
    for i, message in enumerate(messages):
        if len(message["content"]) > MAX_CONTENT:
            raise fail(f"messages[{i}].content: longer than {MAX_CONTENT} characters")
        if "attachments" not in message:
            continue
        files = message["attachments"]
        if not isinstance(files, list):
            raise fail(f"messages[{i}].attachments: must be an array")
        if files and i != last_user:
            raise fail(f"messages[{i}].attachments: only allowed on the last user message")
        if len(files) > MAX_FILES:
            raise fail(f"messages[{i}].attachments: at most {MAX_FILES} files")
        for j, item in enumerate(files):
            where = f"messages[{i}].attachments[{j}]"
            if not isinstance(item, dict) or item.get("type") not in ATTACHMENT_TYPES:
                raise fail(f"{where}.type: must be input_file or input_file_url")
            mime = item.get("mimeType")
            if item["type"] == "input_file_url":
                url = item.get("url")
                if not isinstance(url, str) or not url.lower().startswith("https://"):
                    raise fail(f"{where}.url: must be an https URL")
                if mime is not None and (not isinstance(mime, str) or not mime_allowed(mime)):
                    raise fail(f"{where}.mimeType: unsupported file type {mime!r}")
                continue
            if not isinstance(mime, str) or not mime_allowed(mime):
                raise fail(f"{where}.mimeType: unsupported file type {mime!r}")
            if not isinstance(item.get("filename"), str) or not item["filename"]:
                raise fail(f"{where}.filename: required")
            total += _decoded_len(item.get("data"), where, fail)
            if total > MAX_INLINE_BYTES:
                raise fail(f"attachments: inline files over {MAX_INLINE_BYTES} bytes in total")


def check_tool_files(files: Any, fail: Any) -> None:
    """Check a tool result's ``files``: at most 20, 5 MB decoded in total."""
    if not isinstance(files, list):
        raise fail("files: must be an array")
    if len(files) > MAX_FILES:
        raise fail(f"files: at most {MAX_FILES} files")
    total = 0
    for j, item in enumerate(files):
        where = f"files[{j}]"
        if not isinstance(item, dict):
            raise fail(f"{where}: must be an object")
        if not isinstance(item.get("filename"), str) or not item["filename"]:
            raise fail(f"{where}.filename: required")
        mime = item.get("mimeType")
        if not isinstance(mime, str) or not mime:
            raise fail(f"{where}.mimeType: required")
        total += _decoded_len(item.get("data"), where, fail)
        if total > MAX_INLINE_BYTES:
            raise fail(f"files: over {MAX_INLINE_BYTES} bytes decoded in total")


def attachment_metadata(item: dict[str, Any]) -> dict[str, Any]:
    """What the emulator keeps of an attachment or file: never its bytes."""
    meta: dict[str, Any] = {"type": item.get("type", "input_file")}
    for key in ("filename", "mimeType", "url"):
        if key in item:
            meta[key] = item[key]
    if isinstance(item.get("data"), str):
        try:
            meta["sizeBytes"] = len(base64.b64decode(item["data"]))
        except (binascii.Error, ValueError):
            meta["sizeBytes"] = 0
    return meta
