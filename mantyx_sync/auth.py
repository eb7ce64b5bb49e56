"""Where the transport gets the credential for each request: the protocol only;
the OAuth machinery that implements a refreshing source lives above
(:mod:`mantyx_sync.oauth`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from ._base.argcheck import checked_init
from ._base.redact import mask, register_secret
from .errors import ArgumentTypeError, ConfigurationError
from .rate_limits import finite_number

__all__ = ["TokenSet", "TokenSource"]


def _scopes(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    return tuple(str(s) for s in value or ())


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True, repr=False)
class TokenSet:
    """The tokens an OAuth sign-in or refresh gave: what to keep between runs.

    Tokens never appear in the repr (or in any log or error message: they are
    registered with the redactor as soon as a ``TokenSet`` exists).

    :ivar access_token: the bearer token (``mantyx_at_…``), valid until ``expires_at``.
    :ivar refresh_token: the long-lived token that gets new access tokens, if any.
    :ivar expires_at: when the access token expires, in epoch seconds, if known.
    :ivar scopes: the scopes granted.
    :ivar token_type: ``"Bearer"``.

    .. versionadded:: 0.2.0
    """

    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scopes: tuple[str, ...] = attrs.field(default=(), converter=_scopes)
    token_type: str = "Bearer"

    def __attrs_post_init__(self) -> None:
        if not self.access_token:
            raise ConfigurationError("a token set needs a non-empty access_token")
        register_secret(self.access_token)
        register_secret(self.refresh_token)

    def __repr__(self) -> str:
        return (
            f"TokenSet(access_token={mask(self.access_token)}, "
            f"refresh_token={mask(self.refresh_token) or None}, "
            f"expires_at={self.expires_at!r}, scopes={self.scopes!r})"
        )

    def expires_in(self, now: float | None = None) -> float | None:
        """Seconds the access token has left (negative once expired), if known."""
        if self.expires_at is None:
            return None
        return self.expires_at - (time.time() if now is None else now)

    @classmethod
    def from_token_response(
        cls,
        body: Mapping[str, Any],
        *,
        now: float,
        requested_scopes: Sequence[str] = (),
        refresh_token: str | None = None,
    ) -> TokenSet:
        """Read an RFC 6749 §5.1 token response.

        :param refresh_token: kept when the response has none (refresh tokens
            that do not rotate).
        :raises ConfigurationError: the response has no ``access_token``.
        """
        access = body.get("access_token")
        if not isinstance(access, str) or not access:
            raise ConfigurationError("the token endpoint answered without an access_token")
        expires_at = None
        lifetime = finite_number(body.get("expires_in"))
        if lifetime is not None:
            expires_at = now + lifetime
        new_refresh = body.get("refresh_token")
        scope = body.get("scope")
        return cls(
            access_token=access,
            refresh_token=new_refresh if isinstance(new_refresh, str) and new_refresh
            else refresh_token,
            expires_at=expires_at,
            scopes=scope if isinstance(scope, str) and scope else tuple(requested_scopes),
            token_type=str(body.get("token_type") or "Bearer"),
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for a credential store; it holds the secrets)."""
        return {
            "access_token": self.access_token,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "scopes": list(self.scopes),
            "token_type": self.token_type,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TokenSet:
        """The inverse of :meth:`to_dict`.

        :raises ConfigurationError: ``data`` is not a stored token set.
        """
        if not isinstance(data, Mapping):
            raise ConfigurationError(
                f"TokenSet.from_dict(): data must be a mapping, got {type(data).__name__}"
            )
        try:
            expires_at = data.get("expires_at")
            if not isinstance(data["access_token"], str):
                raise TypeError("access_token")
            return cls(
                access_token=data["access_token"],
                refresh_token=data.get("refresh_token"),
                expires_at=None if expires_at is None else float(expires_at),
                scopes=data.get("scopes") or (),
                token_type=str(data.get("token_type") or "Bearer"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"not a stored token set ({type(exc).__name__})") from None


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
