"""The MANTYX API's documented limits, in one place.

The client checks these before sending so a bad spec fails fast with a message
that says what to fix; the server enforces the same limits.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "ATTACHMENTS_MAX",
    "ATTACHMENT_MIME_TYPES",
    "HEADER_VALUE_MAX_BYTES",
    "INLINE_FILES_MAX_BYTES",
    "LOOP_THRESHOLD_MAX",
    "MCP_LOCAL_TOOLS_MAX",
    "MESSAGES_MAX",
    "MESSAGE_CONTENT_MAX_CHARS",
    "METADATA_KEY_RE",
    "METADATA_MAX_BYTES",
    "METADATA_MAX_ENTRIES",
    "METADATA_VALUE_MAX_CHARS",
    "OUTPUT_SCHEMA_MAX_BYTES",
    "OUTPUT_SCHEMA_NAME_RE",
    "TOOL_BUDGETS_MAX_ENTRIES",
    "TOOL_BUDGET_KEY_MAX",
    "TOOL_BUDGET_MAX_CALLS",
    "TOOL_ERROR_MAX_BYTES",
    "TOOL_FILES_MAX",
    "TOOL_FILES_MAX_BYTES",
    "TOOL_NAME_RE",
    "TOOL_RESULT_MAX_BYTES",
]

# \A…\Z, not ^…$: "$" also matches before a trailing newline.
TOOL_NAME_RE: Final = re.compile(r"\A[a-zA-Z0-9_]{1,64}\Z")
OUTPUT_SCHEMA_NAME_RE: Final = re.compile(r"\A[a-zA-Z0-9_-]{1,64}\Z")
OUTPUT_SCHEMA_MAX_BYTES: Final = 32 * 1024
METADATA_KEY_RE: Final = re.compile(r"\A[A-Za-z0-9._-]{1,64}\Z")
METADATA_MAX_ENTRIES: Final = 16
METADATA_VALUE_MAX_CHARS: Final = 256
METADATA_MAX_BYTES: Final = 4 * 1024
LOOP_THRESHOLD_MAX: Final = 100
TOOL_BUDGETS_MAX_ENTRIES: Final = 32
TOOL_BUDGET_KEY_MAX: Final = 120
TOOL_BUDGET_MAX_CALLS: Final = 1000
MCP_LOCAL_TOOLS_MAX: Final = 64
HEADER_VALUE_MAX_BYTES: Final = 8 * 1024
# Documented as "≤ 2 MB" / "≤ 8 KB"; we take the smaller (decimal) reading.
TOOL_RESULT_MAX_BYTES: Final = 2_000_000
TOOL_ERROR_MAX_BYTES: Final = 8_000

# Conversation input and file attachments.
MESSAGES_MAX: Final = 200
MESSAGE_CONTENT_MAX_CHARS: Final = 200_000
ATTACHMENTS_MAX: Final = 20
# "5 MB" decoded per run; as above, the smaller (decimal) reading.
INLINE_FILES_MAX_BYTES: Final = 5_000_000
# Exact MIME types accepted besides every ``text/*`` (audio mp4/mpeg/wav/webm,
# images, pdf, docx, json, xml, html).
ATTACHMENT_MIME_TYPES: Final = frozenset(
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
# Files on a tool result.
TOOL_FILES_MAX: Final = 20
TOOL_FILES_MAX_BYTES: Final = 5_000_000
