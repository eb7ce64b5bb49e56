"""What a blocked call is doing while it waits to try again, for whoever shows it.

A caller that shows progress (the command line's spinner) listens with
:func:`reporting` around its calls; the listener is per thread (a
:class:`~contextvars.ContextVar`). Nothing listens by default, and a report
then costs one context-variable read.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Literal

__all__ = ["Progress", "report", "reporting"]

Progress = Literal["retrying", "reconnecting", "reconnected"]
"""What is under way: a request tried again, a run's event stream reopened, or open again."""

Listener = Callable[[Progress, int, int, "BaseException | None"], None]
"""Called with what is under way, the attempt (a request's count its first, a
stream's reconnects do not), the most there will be, and the last failure."""

_listener: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "mantyx_sync_progress", default=None
)


def report(what: Progress, number: int, limit: int, error: BaseException | None = None) -> None:
    listener = _listener.get()
    if listener is not None:
        listener(what, number, limit, error)


@contextlib.contextmanager
def reporting(listener: Listener) -> Iterator[None]:
    """Call ``listener`` with every report this thread makes inside the block."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
