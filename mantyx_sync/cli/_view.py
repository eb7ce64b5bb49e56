"""How a run looks in a terminal: its text as it grows, tool lines, a spinner, a footer.

:class:`RunView` is fed the run's events on the caller's thread and shows the
pieces :class:`~mantyx_sync._display.text.TextFlow` makes of them (what
:meth:`~mantyx_sync.Run.text_stream` yields): the answer on stdout, tool and
reasoning lines on stderr, through a :class:`~mantyx_sync.cli._term.Terminal`.
:class:`JsonView` writes one JSON object per event instead, for pipes.
"""

from __future__ import annotations

import json

from .._display.render import summary
from .._display.text import TextFlow
from ..events import TERMINAL_TYPES, RunEvent
from ..results import RunResult
from ..run import Run
from ..text import TextPiece
from ._term import Terminal

__all__ = ["JsonView", "RunView", "follow"]

_FLOWING = frozenset({"assistant_delta", "thinking_delta"})


class RunView:
    """Renders one run's events as a person reads them.

    :param quiet: only the answer text: no tool lines, spinner or footer.
    :param show_thinking: also show reasoning text (dimmed, on stderr).
    """

    def __init__(self, term: Terminal, *, quiet: bool = False, show_thinking: bool = False) -> None:
        self._term = term
        self.quiet = quiet
        self._flow = TextFlow(thinking=show_thinking and not quiet)
        self._doing: str | None = None  # what the spinner says the run is doing
        self._trouble: str | None = None  # a retry or reconnect under way

    def started(self, run_id: str) -> None:
        """The server accepted the run; the model is thinking."""
        self._spin("thinking…")

    def trouble(self, text: str | None) -> None:
        """Show ``text`` (a retry or reconnect under way) until it is over (``None``)."""
        self._trouble = text
        self._spin(self._doing)

    def on_event(self, event: RunEvent) -> None:
        pieces = self._flow.feed(event)
        # The spinner first: a line written next is redrawn under the right label.
        self._trouble = None  # an event came: the stream is open
        running = self._flow.running
        if event.type in TERMINAL_TYPES or (event.type in _FLOWING and not running):
            self._spin(None)
        elif running:
            self._spin(f"running {', '.join(running)}…")
        else:
            self._spin("thinking…")
        for piece in pieces:
            self._show(piece)

    def _spin(self, doing: str | None) -> None:
        self._doing = doing
        if not self.quiet:
            self._term.status(self._trouble or doing)

    def finished(self, result: RunResult | None) -> None:
        """The run ended (or was abandoned): end the text, show the footer."""
        self._term.status(None)
        self._term.end_text()
        if result is not None and not self.quiet:
            self._term.note(
                self._term.dim(summary(result.run_id, result.tokens, result.turns, result.model))
            )

    def _show(self, piece: TextPiece) -> None:
        if piece.kind == "text":
            self._term.text(piece.text)
        elif self.quiet or not piece.text.strip():
            return  # a line end closing reasoning: each of its notes is a line already
        else:
            self._term.note(self._term.dim(piece.text.rstrip("\n")))


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
