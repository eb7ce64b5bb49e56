"""What a blocked call is doing while it waits to try again, for whoever shows it.

A retried request and a stream being reopened :func:`report` each attempt
they are about to make; a caller that shows progress (the command line's
spinner) listens with :func:`reporting` around its calls. Nothing listens by
default, and a report then costs one context-variable read.

Thread-safety: the listener is per thread (a :class:`~contextvars.ContextVar`),
so it hears the calls its own thread makes.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Literal

import attrs

__all__ = ["Attempt", "report", "reporting"]


@attrs.frozen(kw_only=True)
class Attempt:
    """A call about to try again, or back on its feet.

    :ivar what: ``"retrying"`` (a request), ``"reconnecting"`` (a run's event
        stream) or ``"reconnected"`` (the stream is open again).
    :ivar number: the attempt about to be made (2 is the first retry), or the
        reconnect, counted from 1.
    :ivar limit: the most there will be.
    :ivar error: what failed last (``None`` once reconnected).
    """

    what: Literal["retrying", "reconnecting", "reconnected"]
    number: int
    limit: int
    error: BaseException | None = None


_listener: contextvars.ContextVar[Callable[[Attempt], None] | None] = contextvars.ContextVar(
    "mantyx_sync_progress", default=None
)


def report(
    what: Literal["retrying", "reconnecting", "reconnected"],
    number: int,
    limit: int,
    error: BaseException | None = None,
) -> None:
    """Tell this thread's listener, if there is one, about an :class:`Attempt`."""
    listener = _listener.get()
    if listener is not None:
        listener(Attempt(what=what, number=number, limit=limit, error=error))


@contextlib.contextmanager
def reporting(listener: Callable[[Attempt], None]) -> Iterator[None]:
    """Call ``listener`` with every :class:`Attempt` this thread reports inside the block."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
