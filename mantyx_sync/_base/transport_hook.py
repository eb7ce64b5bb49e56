"""The one hook ``mantyx_sync.testing``'s cassettes use: each new ``Client`` passes its
transport through :func:`wrapped`; inside a ``cassette(...)`` block (a context
variable: the thread and context that opened it) the cassette wraps it."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["TRANSPORT_WRAPPER", "wrapped"]

T = TypeVar("T")

TRANSPORT_WRAPPER: ContextVar[Callable[[Any], Any] | None] = ContextVar(
    "mantyx_sync_transport_wrapper", default=None
)


def wrapped(transport: T) -> T:
    """``transport``, or what the open cassette puts in its place."""
    wrap = TRANSPORT_WRAPPER.get()
    return transport if wrap is None else wrap(transport)
