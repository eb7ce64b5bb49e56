"""A token source that refreshes OAuth access tokens, one refresh for all threads."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence

import attrs

from .._base.redact import register_secret
from .._http.auth import TokenSet
from ._values import UserInfo, scope_list

__all__ = ["RefreshingTokenSource"]

log = logging.getLogger(__name__)

_REFRESH_LEEWAY_S = 60.0

Refresh = Callable[[str, list[str] | None], TokenSet]


class RefreshingTokenSource:
    """Access tokens from a refresh token: cached, refreshed 60 s before they
    expire and once after a ``401``.

    Single-flight: however many threads find the token due (or refused) at
    once, one refresh request is made and all of them get its token. Refresh
    tokens that do not rotate are kept; rotated ones are followed.

    Thread-safety: every method may be called from any thread.

    .. versionadded:: 0.2.0
    """

    def __init__(
        self,
        refresh_token: str,
        *,
        refresh: Refresh,
        userinfo: Callable[[RefreshingTokenSource], UserInfo],
        base_url: str,
        initial: TokenSet | None = None,
        scopes: Iterable[str] | None = None,
        clock: Callable[[], float] = time.time,
        leeway: float = _REFRESH_LEEWAY_S,
    ) -> None:
        self._refresh = refresh
        self._userinfo = userinfo
        self._base_url = base_url
        self._refresh_token = refresh_token
        self._scopes = None if scopes is None else scope_list(scopes)
        self._clock = clock
        self._leeway = leeway
        self._lock = threading.Lock()
        self._tokens = initial
        self.refresh_count = 0
        register_secret(refresh_token)

    def __repr__(self) -> str:
        tokens = self._tokens
        left = tokens.expires_in(self._clock()) if tokens is not None else None
        state = "no token yet" if tokens is None else f"expires_in={left!r}"
        return f"<RefreshingTokenSource base_url={self.base_url!r} {state}>"

    @property
    def base_url(self) -> str:
        """The server that issued the tokens."""
        return self._base_url

    @property
    def refresh_token(self) -> str:
        """The refresh token in use (the rotated one, if the server rotates)."""
        return self._refresh_token

    @property
    def tokens(self) -> TokenSet | None:
        """The current token set (e.g. to save with :func:`mantyx_sync.credentials.save`)."""
        return self._tokens

    def _fresh(self, tokens: TokenSet | None) -> bool:
        if tokens is None:
            return False
        left = tokens.expires_in(self._clock())
        return left is None or left > self._leeway

    def token(self) -> str:
        """The current access token, refreshed first when it expires within 60 s."""
        tokens = self._tokens
        if tokens is not None and self._fresh(tokens):
            return tokens.access_token
        with self._lock:
            tokens = self._tokens
            if tokens is not None and self._fresh(tokens):
                return tokens.access_token
            return self._refresh_locked().access_token

    def refresh(self, rejected: str) -> str:
        """A new access token after the server refused ``rejected`` (a 401);
        if another thread already replaced it, that replacement."""
        with self._lock:
            tokens = self._tokens
            if tokens is not None and tokens.access_token != rejected and self._fresh(tokens):
                return tokens.access_token
            return self._refresh_locked().access_token

    def workspaces(self) -> Sequence[str]:
        """The workspace slugs the token reaches (``GET /api/oauth/userinfo``)."""
        return self._userinfo(self).workspaces

    def _refresh_locked(self) -> TokenSet:
        tokens = self._refresh(self._refresh_token, self._scopes)
        if tokens.refresh_token and tokens.refresh_token != self._refresh_token:
            self._refresh_token = tokens.refresh_token  # a server that rotates
        if tokens.expires_at is not None:
            # Expiry on this source's clock (injectable), not the wall clock.
            left = tokens.expires_at - time.time()
            tokens = attrs.evolve(tokens, expires_at=self._clock() + left)
        self._tokens = tokens
        self.refresh_count += 1
        log.debug("refreshed the access token (expires in %s s)", tokens.expires_in(self._clock()))
        return tokens
