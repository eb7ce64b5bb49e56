"""The one hook ``mantyx_sync.testing``'s cassettes use: each new ``Client`` passes its
transport through :func:`wrapped` and its token source through
:func:`wrapped_token_source`; inside a ``cassette(...)`` block (a context
variable: the thread and context that opened it) the cassette puts its own in
their place."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol, TypeVar, cast

__all__ = ["HOOK", "wrapped", "wrapped_token_source"]

T = TypeVar("T")


class Hook(Protocol):
    """What an open cassette does to a new client's transport and token source."""

    def transport(self, transport: Any) -> Any:
        """What the client sends through instead of ``transport``."""
        ...

    def token_source(self, source: Any) -> Any:
        """Where the client gets its tokens instead of ``source``."""
        ...


HOOK: ContextVar[Hook | None] = ContextVar("mantyx_sync_transport_hook", default=None)


def wrapped(transport: T) -> T:
    """``transport``, or what the open cassette puts in its place."""
    hook = HOOK.get()
    return transport if hook is None else cast(T, hook.transport(transport))


def wrapped_token_source(source: T) -> T:
    """``source``, or what the open cassette puts in its place (while it only
    replays: a stand-in that never asks a server for a token)."""
    hook = HOOK.get()
    return source if hook is None else cast(T, hook.token_source(source))
