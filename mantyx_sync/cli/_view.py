"""How a run looks in a terminal: streamed text, one line per tool call, a footer.

:class:`RunView` is fed the run's events on the caller's thread and writes
through a :class:`~mantyx_sync.cli._term.Terminal`. :class:`JsonView` writes
one JSON object per event instead, for pipes.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..events import RunEvent
from ..results import RunResult
from ._term import Terminal

__all__ = ["JsonView", "RunView", "short"]

_ARG_WIDTH = 60


def short(value: Any, width: int = _ARG_WIDTH) -> str:
    """``value`` on one line, cut to ``width`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def footer(result: RunResult) -> str:
    """``12 tokens (8 in, 4 out) · 2 turns · model m · run r`` with what is known."""
    parts = []
    if result.tokens is not None:
        tokens = result.tokens
        parts.append(
            f"{tokens.total_tokens} tokens ({tokens.input_tokens} in, {tokens.output_tokens} out)"
        )
    if result.turns is not None:
        parts.append(f"{result.turns} turn{'' if result.turns == 1 else 's'}")
    if result.model is not None and result.model.id:
        parts.append(f"model {result.model.id}")
    parts.append(f"run {result.run_id}")
    return " · ".join(parts)


class RunView:
    """Renders one run's events as a person reads them.

    :param quiet: only the answer text: no tool lines, spinner or footer.
    :param show_thinking: also show reasoning text (dimmed, on stderr).
    """

    def __init__(self, term: Terminal, *, quiet: bool = False, show_thinking: bool = False) -> None:
        self._term = term
        self._quiet = quiet
        self._show_thinking = show_thinking
        self._pending: dict[str, tuple[str, str, float]] = {}
        self._streamed_turn = False
        self._wrote_any = False
        self._thinking = False

    def started(self, run_id: str) -> None:
        """The server accepted the run; the model is thinking."""
        if not self._quiet:
            self._term.status("thinking…")

    def on_event(self, event: RunEvent) -> None:
        """Render one event."""
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event)

    def finished(self, result: RunResult | None) -> None:
        """The run ended (or was abandoned): end the text, show the footer."""
        self._term.status(None)
        self._term.end_text()
        if result is not None and not self._quiet:
            self._term.note(self._term.dim(footer(result)))

    # -- event handlers -----------------------------------------------------

    def _on_thinking_delta(self, event: RunEvent) -> None:
        if self._show_thinking and not self._quiet and event.text:
            if not self._thinking:
                self._term.status(None)
                self._thinking = True
            self._term.note(self._term.dim(event.text.rstrip("\n")))

    def _on_assistant_delta(self, event: RunEvent) -> None:
        self._term.status(None)
        self._thinking = False
        self._streamed_turn = True
        self._wrote_any = True
        self._term.text(event.text or "")

    def _on_assistant_message(self, event: RunEvent) -> None:
        if not self._streamed_turn and event.text:
            # A server that sends whole messages without deltas.
            self._term.text(event.text)
            self._wrote_any = True
        self._streamed_turn = False
        self._term.end_text()
        self._waiting()

    def _on_local_tool_call(self, event: RunEvent) -> None:
        self._call_started(event)

    def _on_tool_call(self, event: RunEvent) -> None:
        self._call_started(event)

    def _on_local_tool_result_in(self, event: RunEvent) -> None:
        data = event.data
        if "error" in data and data.get("error") is not None:
            self._call_ended(data.get("toolUseId"), ok=False, outcome=data.get("error"))
        else:
            self._call_ended(data.get("toolUseId"), ok=True, outcome=data.get("output"))

    def _on_tool_result(self, event: RunEvent) -> None:
        data = event.data
        ok = data.get("ok") is not False and not data.get("isError")
        outcome = data.get("result", data.get("summary"))
        self._call_ended(data.get("toolUseId"), ok=ok, outcome=outcome)

    def _on_result(self, event: RunEvent) -> None:
        if not self._wrote_any and event.text:
            # Neither deltas nor messages came: the result carries the answer.
            self._term.text(event.text)
            self._wrote_any = True
        self._term.status(None)

    def _on_error(self, event: RunEvent) -> None:
        self._term.status(None)

    def _on_cancelled(self, event: RunEvent) -> None:
        self._term.status(None)

    # -- tool lines ---------------------------------------------------------

    def _call_started(self, event: RunEvent) -> None:
        data = event.data
        tool_use_id = data.get("toolUseId")
        name = data.get("name") if isinstance(data.get("name"), str) else "?"
        args = data.get("args", data.get("input"))
        if isinstance(tool_use_id, str):
            self._pending[tool_use_id] = (str(name), short(args or {}), time.monotonic())
        self._term.end_text()
        self._waiting()

    def _call_ended(self, tool_use_id: Any, *, ok: bool, outcome: Any) -> None:
        started = self._pending.pop(tool_use_id, None) if isinstance(tool_use_id, str) else None
        if started is None:
            return
        name, args, at = started
        if not self._quiet:
            elapsed = time.monotonic() - at
            mark = "✓" if ok else "✗"
            shown = short(outcome if outcome is not None else "")
            self._term.note(self._term.dim(f"  {mark} {name}({args}) → {shown}  {elapsed:.1f}s"))
        self._waiting()

    def _waiting(self) -> None:
        if self._quiet:
            return
        if self._pending:
            names = sorted({name for name, _, _ in self._pending.values()})
            self._term.status(f"running {', '.join(names)}…")
        else:
            self._term.status("thinking…")


class JsonView:
    """One JSON object per event on stdout: ``{"runId", "seq", "type", "data"}``."""

    def __init__(self, term: Terminal) -> None:
        self._term = term
        self._run_id = ""

    def started(self, run_id: str) -> None:
        """Remember the run id each line carries."""
        self._run_id = run_id

    def on_event(self, event: RunEvent) -> None:
        """Write the event as one line."""
        line = {"runId": self._run_id, "seq": event.seq, "type": event.type, "data": event.data}
        self._term.line(json.dumps(line, ensure_ascii=False, default=str))

    def finished(self, result: RunResult | None) -> None:
        """Nothing more: the terminal event was the last line."""
