"""The emulator's OAuth 2.0 authorization server.

Authorization Code with PKCE (S256 only) for loopback redirect URIs
(RFC 8252 §7.3), refresh tokens that do not rotate, revocation (RFC 7009),
server metadata (RFC 8414) and ``GET /api/oauth/userinfo``. Approval is
automatic, so a test can follow the redirect itself; :meth:`OAuthServer.deny_next`
makes the next authorization fail instead. Token lifetimes read the
emulator's :class:`~mantyx_sync.testing.clock.EmulatorClock`, which tests can
fast-forward.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import attrs

from .._base.argcheck import checked
from .clock import EmulatorClock

if TYPE_CHECKING:
    from werkzeug.datastructures import Authorization
    from werkzeug.wrappers import Request

__all__ = ["OAuthServer"]

DEFAULT_CLIENT_ID = "mantyx-test-client"
"""A public client (no secret) every emulator accepts unless told otherwise."""
IDENTITY_SCOPE = "mantyx.identity:read"

_CODE_TTL_S = 600.0
_VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")
_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")  # RFC 6749 §3.3
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_INSUFFICIENT_IDENTITY = f'Bearer error="insufficient_scope", scope="{IDENTITY_SCOPE}"'


class TokenRejected(Exception):
    """An access token that is unknown, expired or revoked; the message says which."""

    @property
    def challenge(self) -> dict[str, str]:
        """The ``WWW-Authenticate`` header that tells the client why."""
        return {"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{self}"'}


@attrs.frozen
class OAuthReply:
    """What an OAuth route answers: status, JSON body (``None``: no body), headers."""

    status: int
    body: Any = None
    headers: dict[str, str] = attrs.field(factory=dict)


@attrs.define
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    scopes: frozenset[str]
    expires_at: float
    used: bool = False
    refresh_token: str | None = None


@attrs.define
class _Access:
    client_id: str
    scopes: frozenset[str]
    expires_at: float
    refresh_token: str
    revoked: bool = False


@attrs.define
class _Refresh:
    client_id: str
    scopes: frozenset[str]
    revoked: bool = False


def bearer_token(authorization: str) -> str:
    """The token of an ``Authorization: Bearer <token>`` header value, else ``""``.

    Read here rather than by werkzeug, which takes a token holding ``=`` for parameters.
    """
    return authorization[7:].strip() if authorization[:7].lower() == "bearer " else ""


def _error(status: int, code: str, description: str, **headers: str) -> OAuthReply:
    return OAuthReply(status, {"error": code, "error_description": description}, dict(headers))


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _loopback_redirect(uri: str) -> bool:
    try:
        parts = urlsplit(uri)
        return parts.scheme == "http" and parts.hostname in _LOOPBACK and not parts.fragment
    except ValueError:
        return False


class OAuthServer:
    """Authorization-server state and routes. Tests reach it as ``LocalMantyx.oauth``.

    :ivar clients: client id -> client secret (``None``: a public client).
    :ivar workspaces: the workspace slugs ``userinfo`` reports.
    :ivar access_token_ttl: seconds an access token lives (the real server: 3600).
    :ivar metadata_enabled: whether ``/.well-known/oauth-authorization-server``
        answers (``False``: 404, so clients must use the documented fallback paths).
    :ivar rotate_refresh_tokens: issue a new refresh token on every refresh (the
        real server does not).
    :ivar refreshes: successful ``refresh_token`` grants so far.
    :ivar code_exchanges: successful ``authorization_code`` grants so far.

    Thread-safety: every method may be called from any thread.
    """

    def __init__(
        self,
        *,
        clock: EmulatorClock,
        clients: Mapping[str, str | None],
        workspaces: Sequence[str],
        access_token_ttl: float = 3600.0,
        metadata_enabled: bool = True,
    ) -> None:
        if access_token_ttl <= 0:
            raise ValueError("access_token_ttl must be > 0 seconds")
        self.clock = clock
        self.clients: dict[str, str | None] = dict(clients)
        self.workspaces: list[str] = list(workspaces)
        self.access_token_ttl = access_token_ttl
        self.metadata_enabled = metadata_enabled
        self.rotate_refresh_tokens = False
        self.refreshes: int = 0
        self.code_exchanges: int = 0
        self._lock = threading.Lock()
        self._codes: dict[str, _Code] = {}
        self._access: dict[str, _Access] = {}
        self._refresh: dict[str, _Refresh] = {}
        self._deny: list[str] = []

    # -- test controls ---------------------------------------------------------

    @checked(TypeError)
    def deny_next(self, error: str = "access_denied") -> None:
        """Make the next authorization redirect back with ``error=<error>``."""
        with self._lock:
            self._deny.append(error)

    @checked(TypeError)
    def issue_tokens(
        self, scopes: Iterable[str], *, client_id: str = DEFAULT_CLIENT_ID
    ) -> dict[str, Any]:
        """Mint a token set directly (as if signed in), in the token endpoint's shape."""
        with self._lock:
            return self._issue(client_id, frozenset(scopes), refresh_token=None)

    def expire_access_tokens(self) -> None:
        """Make every access token issued so far expired (refresh tokens stay valid)."""
        now = self.clock.now()
        with self._lock:
            for access in self._access.values():
                access.expires_at = min(access.expires_at, now)

    def is_active(self, token: str) -> bool:
        """Whether ``token`` (access or refresh) would be accepted now."""
        with self._lock:
            access = self._access.get(token)
            if access is not None:
                return not access.revoked and access.expires_at > self.clock.now()
            refresh = self._refresh.get(token)
            return refresh is not None and not refresh.revoked

    def secrets(self) -> list[str]:
        """Every token and code issued so far (for masking in recordings)."""
        with self._lock:
            return [*self._access, *self._refresh, *self._codes]

    # -- what the workspace routes ask -----------------------------------------

    def scopes_of(self, token: str) -> frozenset[str] | None:
        """The scopes of a live access token; ``None`` when ``token`` is not one of ours.

        :raises TokenRejected: it is ours but expired or revoked.
        """
        with self._lock:
            access = self._access.get(token)
            if access is None:
                return None
            if access.revoked:
                raise TokenRejected("the access token was revoked")
            if access.expires_at <= self.clock.now():
                raise TokenRejected("the access token expired")
            return access.scopes

    # -- routes ------------------------------------------------------------------

    def handle(self, endpoint: str, request: Request) -> OAuthReply:
        """Answer ``request`` on the route ``endpoint``: ``metadata``, ``authorize``,
        ``token``, ``revoke`` or ``userinfo``."""
        if endpoint == "metadata":
            return self._metadata(request.host_url.rstrip("/"))
        if endpoint == "authorize":
            return self._authorize(request.args)
        if endpoint == "userinfo":
            return self._userinfo(bearer_token(request.headers.get("Authorization", "")))
        # The token and revocation endpoints take a form from an authenticated client.
        if request.mimetype != "application/x-www-form-urlencoded":
            return _error(400, "invalid_request", "send application/x-www-form-urlencoded")
        client = self._client(request.form, request.authorization)
        if isinstance(client, OAuthReply):
            return client
        if endpoint == "token":
            return self._token(client, request.form)
        return self._revoke(client, request.form)

    def _metadata(self, base_url: str) -> OAuthReply:
        if not self.metadata_enabled:
            return OAuthReply(404, {"error": "not_found", "message": "no metadata here"})
        return OAuthReply(
            200,
            {
                "issuer": base_url,
                "authorization_endpoint": f"{base_url}/api/oauth/authorize",
                "token_endpoint": f"{base_url}/api/oauth/token",
                "revocation_endpoint": f"{base_url}/api/oauth/revoke",
                "userinfo_endpoint": f"{base_url}/api/oauth/userinfo",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": [
                    "none",
                    "client_secret_post",
                    "client_secret_basic",
                ],
                "scopes_supported": [
                    "models:read",
                    "runs:read",
                    "runs:write",
                    "sessions:read",
                    "sessions:write",
                    "feedback:read",
                    "feedback:write",
                    IDENTITY_SCOPE,
                ],
            },
        )

    def _authorize(self, query: Mapping[str, str]) -> OAuthReply:
        client_id = query.get("client_id", "")
        redirect_uri = query.get("redirect_uri", "")
        # Errors before the redirect URI is trusted are shown, never redirected (RFC 6749 §4.1.2.1).
        if client_id not in self.clients:
            return _error(400, "invalid_client", f"unknown client_id {client_id!r}")
        if not _loopback_redirect(redirect_uri):
            return _error(
                400,
                "invalid_request",
                "redirect_uri must be http://127.0.0.1:<port>/... (loopback)",
            )
        state = query.get("state")

        def back(**params: str) -> OAuthReply:
            if state is not None:
                params["state"] = state
            separator = "&" if "?" in redirect_uri else "?"
            location = f"{redirect_uri}{separator}{urlencode(params)}"
            return OAuthReply(302, None, {"Location": location, "Cache-Control": "no-store"})

        if query.get("response_type") != "code":
            return back(error="unsupported_response_type")
        challenge = query.get("code_challenge", "")
        if query.get("code_challenge_method") != "S256" or not challenge:
            return back(error="invalid_request", error_description="PKCE with S256 is required")
        scopes = frozenset(query.get("scope", "").split())
        if not scopes or not all(_SCOPE_TOKEN.match(s) for s in scopes):
            return back(error="invalid_scope", error_description="ask for at least one scope")
        with self._lock:
            if self._deny:
                return back(error=self._deny.pop(0))
            code = f"mantyx_code_{secrets.token_urlsafe(24)}"
            self._codes[code] = _Code(
                client_id=client_id,
                redirect_uri=redirect_uri,
                challenge=challenge,
                scopes=scopes,
                expires_at=self.clock.now() + _CODE_TTL_S,
            )
        return back(code=code)

    def _client(
        self, form: Mapping[str, str], authorization: Authorization | None
    ) -> str | OAuthReply:
        """The authenticated client id, or the error to answer (RFC 6749 §2.3)."""
        client_id, secret = form.get("client_id", ""), form.get("client_secret")
        if authorization is not None and authorization.type == "basic":
            client_id, secret = authorization.username or "", authorization.password
        if client_id not in self.clients:
            return _error(401, "invalid_client", "unknown client")
        expected = self.clients[client_id]
        if expected is not None and not hmac.compare_digest(expected, secret or ""):
            return _error(401, "invalid_client", "client authentication failed")
        return client_id

    def _token(self, client: str, form: Mapping[str, str]) -> OAuthReply:
        grant = form.get("grant_type")
        with self._lock:
            if grant == "authorization_code":
                return self._exchange_code(client, form)
            if grant == "refresh_token":
                return self._refresh_grant(client, form)
        return _error(400, "unsupported_grant_type", f"grant_type {grant!r} is not supported")

    def _exchange_code(self, client: str, form: Mapping[str, str]) -> OAuthReply:
        code = self._codes.get(form.get("code", ""))
        if code is None or code.client_id != client:
            return _error(400, "invalid_grant", "unknown authorization code")
        if code.used:
            # A replayed code revokes what it gave (RFC 6749 §4.1.2).
            if code.refresh_token is not None:
                self._revoke_refresh(code.refresh_token)
            return _error(400, "invalid_grant", "the authorization code was already used")
        if code.expires_at <= self.clock.now():
            return _error(400, "invalid_grant", "the authorization code expired")
        if form.get("redirect_uri") != code.redirect_uri:
            return _error(400, "invalid_grant", "redirect_uri does not match the authorization")
        verifier = form.get("code_verifier", "")
        if not _VERIFIER.match(verifier) or not hmac.compare_digest(
            _s256(verifier), code.challenge
        ):
            return _error(400, "invalid_grant", "code_verifier does not match the code_challenge")
        code.used = True
        body = self._issue(client, code.scopes, refresh_token=None)
        code.refresh_token = body["refresh_token"]
        self.code_exchanges += 1
        return OAuthReply(200, body, {"Cache-Control": "no-store"})

    def _refresh_grant(self, client: str, form: Mapping[str, str]) -> OAuthReply:
        token = form.get("refresh_token", "")
        refresh = self._refresh.get(token)
        if refresh is None or refresh.revoked or refresh.client_id != client:
            return _error(400, "invalid_grant", "the refresh token is invalid or revoked")
        scopes = refresh.scopes
        if form.get("scope"):
            asked = frozenset(form["scope"].split())
            if not asked <= refresh.scopes:
                return _error(400, "invalid_scope", "a refresh cannot widen the scopes")
            scopes = asked
        if self.rotate_refresh_tokens:
            self._revoke_refresh(token)
            body = self._issue(client, scopes, refresh_token=None)
        else:
            body = self._issue(client, scopes, refresh_token=token)
        self.refreshes += 1
        return OAuthReply(200, body, {"Cache-Control": "no-store"})

    def _issue(
        self, client_id: str, scopes: frozenset[str], *, refresh_token: str | None
    ) -> dict[str, Any]:
        # Caller holds the lock.
        if refresh_token is None:
            refresh_token = f"mantyx_rt_{secrets.token_urlsafe(32)}"
            self._refresh[refresh_token] = _Refresh(client_id=client_id, scopes=scopes)
        access = f"mantyx_at_{secrets.token_urlsafe(32)}"
        self._access[access] = _Access(
            client_id=client_id,
            scopes=scopes,
            expires_at=self.clock.now() + self.access_token_ttl,
            refresh_token=refresh_token,
        )
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(self.access_token_ttl),
            "refresh_token": refresh_token,
            "scope": " ".join(sorted(scopes)),
        }

    def _revoke_refresh(self, token: str) -> None:
        # Caller holds the lock. Revoking a refresh token ends its access tokens too.
        refresh = self._refresh.get(token)
        if refresh is not None:
            refresh.revoked = True
        for access in self._access.values():
            if access.refresh_token == token:
                access.revoked = True

    def _revoke(self, client: str, form: Mapping[str, str]) -> OAuthReply:
        token = form.get("token", "")
        with self._lock:
            access = self._access.get(token)
            if access is not None and access.client_id == client:
                access.revoked = True
            refresh = self._refresh.get(token)
            if refresh is not None and refresh.client_id == client:
                self._revoke_refresh(token)
        # RFC 7009 §2.2: 200 whether or not the token was known.
        return OAuthReply(200, None)

    def _userinfo(self, token: str) -> OAuthReply:
        try:
            scopes = self.scopes_of(token) if token else None
        except TokenRejected as exc:
            return OAuthReply(401, {"error": "invalid_token", "message": str(exc)}, exc.challenge)
        if scopes is None:
            return OAuthReply(
                401, {"error": "unauthorized", "message": "an OAuth access token is required"},
                {"WWW-Authenticate": "Bearer"},
            )  # fmt: skip
        if IDENTITY_SCOPE not in scopes:
            return OAuthReply(
                403,
                {"error": "insufficient_scope", "required": IDENTITY_SCOPE},
                {"WWW-Authenticate": _INSUFFICIENT_IDENTITY},
            )
        return OAuthReply(
            200,
            {
                "sub": "user_emulated",
                "name": "Emulated User",
                "email": "user@example.test",
                "workspaces": [{"slug": slug, "name": slug} for slug in self.workspaces],
            },
        )
