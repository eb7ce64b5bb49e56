"""Sign in to MANTYX with OAuth 2.0 and stay signed in (the docs' OAuth guide shows the flow).

:class:`OAuth` (the endpoints, the PKCE sign-in through a one-shot listener on
``127.0.0.1``, refresh, revocation, user info), :class:`RefreshingTokenSource`
(what a :class:`~mantyx_sync.Client` asks for tokens: cached, refreshed ahead of
expiry and after a ``401``, one refresh for all threads), :class:`TokenSet`,
:class:`UserInfo` and :class:`ServerMetadata`.
"""

from __future__ import annotations

from ..auth import TokenSet
from .client import OAuth
from .source import RefreshingTokenSource
from .values import ServerMetadata, UserInfo

__all__ = ["OAuth", "RefreshingTokenSource", "ServerMetadata", "TokenSet", "UserInfo"]
