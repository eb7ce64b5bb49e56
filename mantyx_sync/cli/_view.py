"""How a run looks in a terminal: streamed text, one line per tool call, a footer.

:class:`RunView` is fed the run's events on the caller's thread and writes
through a :class:`~mantyx_sync.cli._term.Terminal`. :class:`JsonView` writes
one JSON object per event instead, for pipes.
"""

from __future__ import annotations

import json
import time

from .._display.render import one_line, summary
from ..events import RunEvent, ToolStep, tool_step
from ..results import RunResult
from ..run import Run
from ._term import Terminal

__all__ = ["JsonView", "RunView", "follow"]

_ARG_WIDTH = 60


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
            return
        step = tool_step(event)
        if step is not None:
            self._tool_step(step)

    def finished(self, result: RunResult | None) -> None:
        """The run ended (or was abandoned): end the text, show the footer."""
        self._term.status(None)
        self._term.end_text()
        if result is not None and not self._quiet:
            self._term.note(
                self._term.dim(summary(result.run_id, result.tokens, result.turns, result.model))
            )

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

    def _tool_step(self, step: ToolStep) -> None:
        if not step.done:
            args = one_line(step.args or {}, _ARG_WIDTH)
            self._pending[step.tool_use_id] = (step.name or "?", args, time.monotonic())
            self._term.end_text()
        else:
            started = self._pending.pop(step.tool_use_id, None)
            if started is None:
                return
            if not self._quiet:
                name, args, at = started
                mark = "✓" if step.ok else "✗"
                shown = one_line(step.outcome if step.outcome is not None else "", _ARG_WIDTH)
                line = f"  {mark} {name}({args}) → {shown}  {time.monotonic() - at:.1f}s"
                self._term.note(self._term.dim(line))
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


def follow(run: Run, view: RunView | JsonView) -> None:
    """Render ``run`` to the end; a failure raises after the footer is shown.

    Ctrl-C cancels the run on the server (the :class:`Run` does it) and
    re-raises ``KeyboardInterrupt``.
    """
    view.started(run.id)
    with run:
        try:
            for event in run:
                view.on_event(event)
        finally:
            view.finished(run.result)
