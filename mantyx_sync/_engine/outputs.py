"""A handler's return value as a tool result: text, plus files from a :class:`ToolOutput`.

Files that break a limit become a :class:`~mantyx_sync.ToolError` for the
model, never a failed POST. Files go only with a result (the server ignores
them next to an error).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .._base.limits import TOOL_FILES_MAX, TOOL_FILES_MAX_BYTES
from .._base.types import JSONDict
from .._models.convert import to_jsonable
from ..errors import SpecError, ToolError
from ..messages import Attachment
from ..tools import ToolOutput

__all__ = ["split_output"]

log = logging.getLogger(__name__)


def encode_result(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(to_jsonable(value), ensure_ascii=False)


def split_output(value: Any) -> tuple[str, list[JSONDict] | None]:
    """The result text and the ``files[]`` entries (``None`` without files).

    :raises ToolError: the files break a limit or cannot be read.
    """
    if not isinstance(value, ToolOutput):
        return encode_result(value), None
    try:
        text = encode_result(value.result)
    except Exception:
        # The call is answered with an error, and files go only with a result.
        if value.files:
            log.warning(
                "%d file(s) dropped: the tool's result could not be sent, so the call "
                "is answered with an error (files go only with a result)",
                len(value.files),
            )
        raise
    if not value.files:
        return text, None
    if len(value.files) > TOOL_FILES_MAX:
        raise ToolError(
            f"the tool returned {len(value.files)} files; at most {TOOL_FILES_MAX} can be sent"
        )
    files: list[Attachment] = []
    total = 0
    for index, item in enumerate(value.files):
        try:
            file = Attachment.from_path(item) if isinstance(item, Path) else item
        except SpecError as exc:
            raise ToolError(f"file {index} could not be attached: {exc}") from exc
        if not isinstance(file, Attachment) or not file.inline:
            raise ToolError(
                f"file {index} is not an inline file (Attachment.from_path or from_bytes); "
                "URLs cannot be sent with a tool result"
            )
        total += file.size or 0
        if total > TOOL_FILES_MAX_BYTES:
            raise ToolError(
                f"the tool's files total more than {TOOL_FILES_MAX_BYTES} bytes; they were not sent"
            )
        files.append(file)
    try:
        return text, [
            {"filename": f.filename, "mimeType": f.mime_type, "data": f.encoded()} for f in files
        ]
    except SpecError as exc:
        raise ToolError(f"a file could not be read: {exc}") from exc
