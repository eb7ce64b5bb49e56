"""The terminal: answer text on stdout, notes and a spinner on stderr.

The only place in the package that writes to a terminal. Colour and the
spinner appear only when stderr is a terminal; ``NO_COLOR`` (any non-empty
value, https://no-color.org) turns colour off and ``TERM=dumb`` turns both
off. Elsewhere (a pipe, a log file, cron) every line is plain text.

Thread-safety: every write takes one lock; the spinner thread draws through it.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TextIO

__all__ = ["Terminal"]

_DIM = "\x1b[2m"
_RED = "\x1b[31m"
_BOLD = "\x1b[1m"
_RESET = "\x1b[0m"
_CLEAR_LINE = "\r\x1b[2K"
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ASCII_FRAMES = "|/-\\"
_FRAME_SECONDS = 0.1


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _can_encode(stream: TextIO, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class Terminal:
    """Where the CLI writes: ``out`` for answers, ``err`` for everything else.

    :param color: use ANSI colour on ``err`` (and dim tool lines).
    :param spinner: animate a status line on ``err`` while waiting.
    """

    def __init__(self, out: TextIO, err: TextIO, *, color: bool, spinner: bool) -> None:
        self.out = out
        self.err = err
        self.color = color
        self.spinner = spinner
        self._same_screen = _isatty(out) and _isatty(err)
        self._lock = threading.RLock()
        self._out_midline = False
        self._status: str | None = None
        self._drawn = False
        self._frame = 0
        self._frames = _FRAMES if _can_encode(err, _FRAMES) else _ASCII_FRAMES
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    @classmethod
    def detect(cls, out: TextIO | None = None, err: TextIO | None = None) -> Terminal:
        """A terminal for ``out``/``err`` (default stdout/stderr), with colour and
        spinner only on a TTY and colour off under ``NO_COLOR``."""
        out = out if out is not None else sys.stdout
        err = err if err is not None else sys.stderr
        tty = _isatty(err) and os.environ.get("TERM", "") != "dumb"
        return cls(out, err, color=tty and not os.environ.get("NO_COLOR"), spinner=tty)

    def style(self, text: str, *codes: str) -> str:
        """``text`` wrapped in ANSI ``codes`` when colour is on."""
        if not self.color or not codes:
            return text
        return "".join(codes) + text + _RESET

    def dim(self, text: str) -> str:
        """``text`` dimmed (when colour is on)."""
        return self.style(text, _DIM)

    # -- the answer ---------------------------------------------------------

    def text(self, chunk: str) -> None:
        """Write answer text to ``out`` as it arrives."""
        if not chunk:
            return
        with self._lock:
            self._hide_spinner()
            self.out.write(chunk)
            self.out.flush()
            self._out_midline = not chunk.endswith("\n")

    def end_text(self) -> None:
        """End the answer's current line, if one is open."""
        with self._lock:
            if self._out_midline:
                self.out.write("\n")
                self.out.flush()
                self._out_midline = False

    def line(self, text: str = "") -> None:
        """Write one whole line to ``out`` (listings, JSON lines)."""
        self.text(text + "\n")

    # -- notes on stderr ----------------------------------------------------

    def note(self, text: str) -> None:
        """Write one line to ``err`` (tool calls, footers), on a line of its own."""
        with self._lock:
            self._hide_spinner()
            if self._same_screen:
                self.end_text()
            self.err.write(text + "\n")
            self.err.flush()
        self._redraw()

    def error(self, message: str) -> None:
        """The one error line: ``mantyx-sync: error: ...``."""
        self.note(self.style("mantyx-sync: error: ", _RED, _BOLD) + message)

    # -- the spinner --------------------------------------------------------

    def status(self, label: str | None) -> None:
        """Show a spinner with ``label`` (``None`` hides it). A no-op off a TTY."""
        if not self.spinner:
            return
        with self._lock:
            self._status = label
            if label is None:
                self._hide_spinner()
            elif self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._spin, name="mantyx-cli-spinner", daemon=True
                )
                self._thread.start()
        self._redraw()

    def close(self) -> None:
        """Hide the spinner and stop its thread."""
        with self._lock:
            self._status = None
            self._closed = True
            self._hide_spinner()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1)

    def _spin(self) -> None:
        while not self._wake.wait(_FRAME_SECONDS):
            self._redraw()

    def _redraw(self) -> None:
        with self._lock:
            if self._status is None or self._closed:
                return
            if self._same_screen and self._out_midline:
                # Never draw over a line of the answer.
                return
            frame = self._frames[self._frame % len(self._frames)]
            self._frame += 1
            self.err.write(_CLEAR_LINE + self.style(f"{frame} {self._status}", _DIM))
            self.err.flush()
            self._drawn = True

    def _hide_spinner(self) -> None:
        if self._drawn:
            self.err.write(_CLEAR_LINE)
            self.err.flush()
            self._drawn = False
