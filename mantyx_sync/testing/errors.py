"""The emulator's own error: a cassette that cannot answer a request."""

from __future__ import annotations

from .._base.redact import redact_text
from ..errors import MantyxError

__all__ = ["CassetteError"]


class CassetteError(MantyxError, AssertionError):
    """A cassette cannot answer a request: it differs from the recording, or is
    not in it; the message says which field, both values, and how to record.
    Also a cassette file that cannot be read back (malformed, or referring to
    stored strings that are missing or not plain files in its folder), named
    with what is wrong. A :class:`~mantyx_sync.MantyxError`, and an
    ``AssertionError`` so pytest reports it as a failed test.

    :ivar tool_use_id: for a tool result that differs, the call's ``toolUseId``.
    """

    def __init__(self, message: str, *, tool_use_id: str | None = None) -> None:
        super().__init__(redact_text(message))
        self.tool_use_id = tool_use_id
