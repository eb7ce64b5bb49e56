"""A token source that refreshes OAuth access tokens, one refresh for all threads."""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence

import attrs

from .._base.redact import register_secret
from ..auth import TokenSet
from ..errors import AuthError
from .values import UserInfo, scope_list

__all__ = ["RefreshingTokenSource"]

log: logging.Logger = logging.getLogger(__name__)

_REFRESH_LEEWAY_S = 60.0
# The OAuth errors (RFC 6749 §5.2) that say the refresh token or the client
# itself is no good: they end the source. Anything else (a proxy's 401 page,
# a 5xx, a timeout) fails that one call.
_FINAL = frozenset({"invalid_grant", "invalid_client"})

Refresh = Callable[[str, list[str] | None], TokenSet]


class RefreshingTokenSource:
    """Access tokens from a refresh token: cached, refreshed 60 s before they
    expire and once after a ``401``.

    Single-flight: however many threads find the token due (or refused) at
    once, one refresh request is made and all of them get its token. Once the
    server refuses the refresh token or the client itself (an
    :class:`~mantyx_sync.AuthError` with ``code`` ``invalid_grant`` or
    ``invalid_client``: revoked, expired), every later call raises that
    refusal without asking again — sign in anew for a new source. Any other
    failure (a proxy's error page, a timeout) is raised to that call only: the
    next one asks again. Refresh tokens that do not rotate are kept; rotated
    ones are followed.

    A token is due ``leeway`` seconds (60) before it expires, or halfway
    through its life if that is shorter. ``clock`` must count epoch seconds
    (it is injectable for tests).

    Thread-safety: every method may be called from any thread. Fork-safe: a
    child process starts with a fresh lock even if the parent forked in the
    middle of a refresh.

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
        # (tokens, when they are due) swapped as one value, so a reader never
        # pairs one token with another's due time.
        self._state: tuple[TokenSet, float | None] | None = (
            None
            if initial is None
            else (initial, self._due_time(initial, lifetime=initial.expires_in(clock())))
        )
        self.refresh_count: int = 0
        # The server's refusal of the refresh token, once it came: final.
        self._refused: AuthError | None = None
        register_secret(refresh_token)
        _LIVE.add(self)

    def __repr__(self) -> str:
        tokens = self.tokens
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
        state = self._state
        return None if state is None else state[0]

    def _due_time(self, tokens: TokenSet, *, lifetime: float | None) -> float | None:
        """When ``tokens`` is due: ``leeway`` before expiry, or halfway through a
        ``lifetime`` (for a token given at the start: what is left of it) too
        short for that."""
        if tokens.expires_at is None:
            return None
        leeway = self._leeway if lifetime is None else min(self._leeway, max(0.0, lifetime) / 2)
        return tokens.expires_at - leeway

    def _fresh_token(self) -> str | None:
        """The cached access token if it is not due yet."""
        state = self._state
        if state is None:
            return None
        tokens, due_at = state
        return tokens.access_token if due_at is None or self._clock() < due_at else None

    def token(self) -> str:
        """The current access token, refreshed first when it expires within 60 s."""
        fresh = self._fresh_token()
        if fresh is not None:
            return fresh
        with self._lock:
            fresh = self._fresh_token()
            if fresh is not None:
                return fresh
            return self._refresh_locked().access_token

    def refresh(self, rejected: str) -> str:
        """A new access token after the server refused ``rejected`` (a 401);
        if another thread already replaced it, that replacement."""
        with self._lock:
            fresh = self._fresh_token()
            if fresh is not None and fresh != rejected:
                return fresh
            return self._refresh_locked().access_token

    def workspaces(self) -> Sequence[str]:
        """The workspace slugs the token reaches (``GET /api/oauth/userinfo``)."""
        return self._userinfo(self).workspaces

    def _refresh_locked(self) -> TokenSet:
        refused = self._refused
        if refused is not None:
            # A new instance per caller: threads must not share one traceback.
            raise AuthError(
                refused.message,
                status=refused.status,
                code=refused.code,
                hint=refused.hint,
                candidates=refused.candidates,
                body=refused.body,
                request_id=refused.request_id,
                retry_after=refused.retry_after,
            )
        try:
            tokens = self._refresh(self._refresh_token, self._scopes)
        except AuthError as exc:
            if exc.code not in _FINAL:
                log.debug("the refresh failed (%s); the next call tries again", exc)
                raise
            self._refused = exc
            log.debug("the refresh token was refused (%s): sign in again", exc.code)
            raise
        if tokens.refresh_token and tokens.refresh_token != self._refresh_token:
            self._refresh_token = tokens.refresh_token  # a server that rotates
        lifetime = None
        if tokens.expires_at is not None:
            # Expiry on this source's clock (injectable), not the wall clock.
            lifetime = tokens.expires_at - time.time()
            tokens = attrs.evolve(tokens, expires_at=self._clock() + lifetime)
        self._state = (tokens, self._due_time(tokens, lifetime=lifetime))
        self.refresh_count += 1
        log.debug("refreshed the access token (expires in %s s)", tokens.expires_in(self._clock()))
        return tokens


# Every live source, so one at-fork hook (registered once: hooks cannot be
# unregistered) can give each a fresh lock in the child.
_LIVE: weakref.WeakSet[RefreshingTokenSource] = weakref.WeakSet()


def _new_locks() -> None:
    # In a forked child only this thread exists: a lock a parent thread held
    # mid-refresh would stay held forever.
    for source in list(_LIVE):
        source._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_locks)
