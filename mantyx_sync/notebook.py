"""Runs in Jupyter: :func:`show` a live run in one output area that updates as it streams.

A :class:`~mantyx_sync.RunResult` and a :class:`~mantyx_sync.Run` already
display themselves in a notebook (the answer, each tool call collapsible,
a tokens/model footer); :func:`show` keeps that display current while the
run streams::

    from mantyx_sync.notebook import show

    result = show(agent.start("Summarise the report"))

Interrupting the cell (the stop button, ``I I``) cancels the run on the
server, as it does for :meth:`Agent.run`. Outside IPython the run is printed
as plain text instead, the way ``mantyx-sync run`` shows it.
"""

from __future__ import annotations

import importlib
import queue
import sys
import threading
import time
from typing import Any, Final, TextIO

from ._display.render import RunDisplay, render_html, render_markdown, view_of
from .cli._term import Terminal
from .cli._view import RunView, follow
from .errors import SpecError
from .events import RunEvent
from .results import RunResult
from .run import Run

__all__ = ["show"]

_DEFAULT_INTERVAL = 0.1
_READER_JOIN_SECONDS: Final = 5.0
# Not an event: the interval passed with events not yet shown.
_STALE: Final[Any] = object()


def _ipython_display() -> Any:
    """``IPython.display`` when running inside an IPython kernel or shell, else ``None``."""
    ipython = sys.modules.get("IPython")
    if ipython is None or getattr(ipython, "get_ipython", lambda: None)() is None:
        return None
    return importlib.import_module("IPython.display")


def show(
    run: Run | RunResult, *, interval: float = _DEFAULT_INTERVAL, out: TextIO | None = None
) -> RunResult:
    """Display ``run`` and keep the display current until it ends; returns its result.

    In IPython (Jupyter, VS Code, Colab) one output area shows the run and is
    updated in place at most every ``interval`` seconds, and once at the end.
    Elsewhere the text streams to ``out`` (default ``sys.stdout``) as plain
    lines. A :class:`RunResult` is simply displayed.

    :raises RunError: the run failed (``RunCancelledError``: it was cancelled); the
        display shows it first.
    :raises KeyboardInterrupt: the cell was interrupted; the run was cancelled.
    :raises SpecError: a wrong argument (nothing is displayed).
    """
    if out is not None and not callable(getattr(out, "write", None)):
        # Any object with write() will do (typing.TextIO is not checkable).
        raise SpecError(
            f"show(): out must be a text stream with write() or None, got {type(out).__name__}",
            path="out",
        )
    if interval < 0:
        raise SpecError(f"must be a number of seconds >= 0, got {interval}", path="interval")
    display = _ipython_display()
    if isinstance(run, RunResult):
        if display is not None:
            display.display(run)
        else:
            term = _plain(out)
            term.text(run.text)
            term.end_text()
        return run
    if display is None:
        follow(run, RunView(_plain(out)))
        return run.wait()
    # The with-block cancels the run however show() is left early (an
    # interrupt during a display update included).
    with run:
        # The handle exists before anything is shown, so that an interrupt
        # arriving at any moment from here on can still update the output.
        handle = display.DisplayHandle()
        try:
            handle.display(run)
            _follow_live(run, handle, interval)
        except KeyboardInterrupt:
            run.close()
            # Say so in the same output area.
            view = view_of(run.id, run.events, status="interrupted, cancelled")
            handle.update(_Snapshot(view))
            raise
        finally:
            # Failed or cancelled: the display shows how it ended.
            if run.done:
                handle.update(run)
    return run.wait()


def _follow_live(run: Run, handle: Any, interval: float) -> None:
    """Read ``run`` to its end, keeping ``handle`` at most ``interval`` seconds behind.

    The stream is read on a helper thread and every display update is made
    here, on the cell's thread, so the output reaches the right cell. An event
    that arrives too soon after the last update is shown once ``interval`` has
    passed, even if no event follows it for a long time (a slow tool).
    """
    arrived: queue.SimpleQueue[RunEvent | BaseException | None] = queue.SimpleQueue()

    def read() -> None:
        try:
            for event in run:
                arrived.put(event)
        except BaseException as exc:  # handed to the cell's thread, raised there
            arrived.put(exc)
        else:
            arrived.put(None)

    reader = threading.Thread(target=read, name=f"mantyx-show-{run.id}", daemon=True)
    last = time.monotonic()
    behind = False  # events arrived since the last update
    try:
        reader.start()
        while True:
            wait = max(0.0, last + interval - time.monotonic()) if behind else None
            try:
                item = arrived.get(timeout=wait)
            except queue.Empty:
                item = _STALE
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            now = time.monotonic()
            if item is _STALE or item.is_terminal or now - last >= interval:
                handle.update(run)
                last, behind = now, False
            else:
                behind = True
    finally:
        if not run.done:
            # Interrupted: closing the run cancels it and ends the reader's stream.
            run.close()
        if reader.ident is not None:
            reader.join(timeout=_READER_JOIN_SECONDS)


class _Snapshot:
    """A fixed picture of a run, for the display's last update."""

    def __init__(self, view: RunDisplay) -> None:
        self._view = view

    def _repr_html_(self) -> str:
        return render_html(self._view)

    def _repr_markdown_(self) -> str:
        return render_markdown(self._view)


def _plain(out: TextIO | None) -> Terminal:
    stream = out if out is not None else sys.stdout
    return Terminal(stream, stream, color=False, spinner=False)
