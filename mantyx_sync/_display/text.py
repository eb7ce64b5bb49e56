"""A run's text as it grows: each model turn on its own line, tool activity between.

:class:`TextFlow` turns a run's events, fed in order by one thread, into the
:class:`TextPiece` values :meth:`~mantyx_sync.Run.text_stream` yields and the
command line prints (the answer on stdout, the rest on stderr).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from ..events import RunEvent
from ..text import TextPiece
from .steps import tool_step

__all__ = ["TextFlow", "follow_text", "one_line"]

_ARG_WIDTH = 60
_TURN_ENDS = frozenset({"assistant_message", "result", "error", "cancelled"})


def one_line(value: Any, width: int = 80) -> str:
    """``value`` (text, or JSON of anything else) on one line, cut to ``width`` characters."""
    compact = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    )
    text = " ".join(compact.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class TextFlow:
    """Turns a run's events, fed in order, into the :class:`TextPiece` values to show
    (``thinking``: the model's reasoning too; ``clock`` times each tool call)."""

    def __init__(
        self, *, thinking: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._thinking = thinking
        self._clock = clock
        self._open: Literal["text", "thinking"] | None = None  # what left a line unfinished
        self._turn_streamed = False
        self._answered = False
        self._pending: dict[str, tuple[str, float]] = {}  # toolUseId -> (name, started)

    @property
    def running(self) -> tuple[str, ...]:
        """The names of the tool calls still waiting for their answer, sorted."""
        return tuple(sorted({name for name, _ in self._pending.values()}))

    def feed(self, event: RunEvent) -> list[TextPiece]:
        """The pieces ``event`` adds (often none)."""
        pieces: list[TextPiece] = []
        kind = event.type
        if kind == "assistant_delta":
            self._turn_streamed = True
            self._add("text", event.text or "", event, pieces)
        elif kind == "thinking_delta":
            if self._thinking:
                self._add("thinking", event.text or "", event, pieces)
        elif kind in _TURN_ENDS:
            # A server that sends whole messages, or only the result, without deltas.
            unsaid = not self._turn_streamed if kind == "assistant_message" else not self._answered
            if unsaid and kind in ("assistant_message", "result"):
                self._add("text", event.text or "", event, pieces)
            self._turn_streamed = False
            self._end_line(event, pieces)
        else:
            self._tool(event, pieces)
        return pieces

    def _add(
        self, kind: Literal["text", "thinking"], text: str, event: RunEvent, out: list[TextPiece]
    ) -> None:
        if not text:
            return
        if self._open is not None and self._open != kind:
            self._end_line(event, out)
        out.append(TextPiece(kind=kind, text=text, event=event))
        self._open = None if text.endswith("\n") else kind
        self._answered = self._answered or kind == "text"

    def _end_line(self, event: RunEvent, out: list[TextPiece]) -> None:
        if self._open is not None:
            out.append(TextPiece(kind=self._open, text="\n", event=event))
            self._open = None

    def _tool(self, event: RunEvent, out: list[TextPiece]) -> None:
        step = tool_step(event)
        if step is None:
            return
        if not step.done:
            name = step.name or "?"
            self._pending[step.tool_use_id] = (name, self._clock())
            line = f"  → {name}({one_line(step.args or {}, _ARG_WIDTH)})\n"
            kind: Literal["tool_call", "tool_result"] = "tool_call"
        else:
            started = self._pending.pop(step.tool_use_id, None)
            if started is None:
                return  # an answer to a call this flow never saw
            name = started[0]
            shown = one_line(step.outcome if step.outcome is not None else "", _ARG_WIDTH)
            mark = "✓" if step.ok else "✗"
            line = f"  {mark} {name} → {shown}  {self._clock() - started[1]:.1f}s\n"
            kind = "tool_result"
        self._end_line(event, out)
        out.append(TextPiece(kind=kind, text=line, event=event, tool=name))


def follow_text(events: Iterable[RunEvent], *, thinking: bool = False) -> Iterator[TextPiece]:
    """The pieces of ``events`` (a live :class:`~mantyx_sync.Run`), as they arrive."""
    flow = TextFlow(thinking=thinking)
    for event in events:
        yield from flow.feed(event)
