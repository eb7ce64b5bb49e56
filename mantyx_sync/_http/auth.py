"""Where the transport gets the credential for each request.

A workspace API key never changes; an OAuth access token expires and is
refreshed. The transport asks a :class:`TokenSource` for the token before every
request and, after a ``401``, asks it once for a fresh one and repeats the
request. The OAuth machinery that implements a refreshing source lives above
(:mod:`mantyx_sync.oauth`); the transport only knows this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["IdentityAware", "TokenSource"]


@runtime_checkable
class TokenSource(Protocol):
    """Anything that hands out a current OAuth access token (``mantyx_at_…``).

    Implementations must be thread-safe: the transport calls them from every
    thread that sends a request.

    .. versionadded:: 0.2.0
    """

    def token(self) -> str:
        """The access token to send now (refreshed first if it is about to expire)."""
        ...

    def refresh(self, rejected: str) -> str:
        """A fresh token after the server refused ``rejected`` with a 401.

        If another thread has already replaced ``rejected``, return the
        replacement without asking the server again (single-flight).

        :raises AuthError: the refresh itself was refused (sign in again).
        """
        ...


@runtime_checkable
class IdentityAware(Protocol):
    """A token source that also knows its server and the workspaces its token reaches.

    :class:`~mantyx_sync.Client` uses it to default ``base_url`` and to pick
    the workspace when exactly one fits.
    """

    @property
    def base_url(self) -> str:
        """Scheme and host of the server that issued the token."""
        ...

    def workspaces(self) -> Sequence[str]:
        """Slugs of the workspaces the token can reach (``GET /api/oauth/userinfo``)."""
        ...
