"""What :meth:`~mantyx_sync.Run.text_stream` yields: a run's text as it grows,
in pieces ready to print."""

from __future__ import annotations

from typing import Literal

import attrs

from .events import RunEvent

__all__ = ["TextPiece"]


@attrs.frozen(kw_only=True)
class TextPiece:
    """A piece of a run's text as it grows, ready to print as it is.

    ``print(piece, end="")`` for every piece reads as a transcript: the answer
    as it streams, each model turn ending its line, and a line for each tool
    call (``  → add({"a": 1})``) and for its answer (``  ✓ add → 3  0.2s``, ``✗``
    for an error).

    :ivar kind: ``"text"`` (the answer, or the line end closing a turn),
        ``"thinking"`` (reasoning, only when asked for), ``"tool_call"`` or
        ``"tool_result"``.
    :ivar text: what to print; a tool line ends with its ``"\\n"``.
    :ivar event: the event it comes from (its typed ``payload`` for your own lines).
    :ivar tool: the tool's name, for a tool line.
    """

    kind: Literal["text", "thinking", "tool_call", "tool_result"]
    text: str
    event: RunEvent
    tool: str | None = None

    def __str__(self) -> str:
        return self.text
