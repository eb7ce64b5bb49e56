"""The one hook ``mantyx_sync.testing``'s cassettes use: a wrapper for every new client's transport.

``Client`` passes its transport through :func:`wrapped` when it is built; inside
a ``mantyx_sync.testing.cassette(...)`` block (a context variable, so it holds
for the thread and context that opened the block) the cassette wraps it to
record or replay. Outside one, the transport is used as given.
"""

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
