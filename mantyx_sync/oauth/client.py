"""The :class:`OAuth` client: endpoints, sign-in, refresh, revocation, user info."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

import attrs
import requests

from .._base.argcheck import checked
from .._base.bounded import decode_json
from .._base.redact import display_url, redact_value, register_secret
from .._http.api_errors import api_error
from .._http.failures import wire_json
from .._http.retry import RetryPolicy, Safety
from .._http.transport import RequestsTransport
from .._version import __version__
from ..auth import TokenSet, TokenSource
from ..config import DEFAULT_BASE_URL
from ..errors import (
    APIStatusError,
    ArgumentTypeError,
    AuthError,
    ConfigurationError,
    InvalidRequestError,
    MantyxError,
    RequestTimeoutError,
    WireFormatError,
)
from ..transport import HttpRequest, HttpResponse
from ._redirect import LoopbackRedirect, pkce_pair, show_url
from ._redirect import open_browser as launch_browser
from .source import RefreshingTokenSource
from .values import ServerMetadata, UserInfo, scope_list

__all__ = ["OAuth"]

log: logging.Logger = logging.getLogger(__name__)

_METADATA_PATH = "/.well-known/oauth-authorization-server"
# OAuth errors that mean "this credential is no good: sign in again" (RFC 6749 §5.2).
_AUTH_ERRORS = frozenset(
    {"invalid_grant", "invalid_client", "unauthorized_client", "invalid_token"}
)
# Form fields that carry a secret: registered for redaction before they are
# sent, so a server echoing the form cannot put them in a message or a log.
_SECRET_FIELDS = ("client_secret", "refresh_token", "code", "code_verifier", "token")
# A code exchange is never repeated after a timeout (codes are single-use); a
# refresh, a revocation or a metadata/userinfo read may be. The deadline is
# OAuth(timeout=), set per call.
_SAFE = RetryPolicy(safety=Safety.SAFE, attempts=3)
_ONCE = RetryPolicy(safety=Safety.CREATE, attempts=3)


class OAuth:
    """An OAuth 2.0 client of a MANTYX server.

    :param client_id: the OAuth app's client id.
    :param client_secret: its secret, for confidential clients (sent in the
        form body with ``client_id``); ``None`` for public clients (PKCE only).
    :param base_url: the MANTYX origin; default ``MANTYX_BASE_URL`` or
        ``https://app.mantyx.io``.
    :param timeout: the most seconds one request to the server may take in
        all (connecting, the whole answer, retries), e.g. a token refresh;
        past it a :class:`~mantyx_sync.RequestTimeoutError` is raised, however
        slowly the server keeps sending.
    :param http_session: a ``requests.Session`` to use (proxies, custom TLS).

    Thread-safety: every method may be called from any thread. Fork-safe:
    after ``fork()`` the child opens its own connections (unless
    ``http_session`` was given).

    .. versionadded:: 0.2.0
    """

    @checked(ArgumentTypeError)
    def __init__(
        self,
        client_id: str,
        client_secret: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        http_session: requests.Session | None = None,
    ) -> None:
        if not _text(client_id):
            raise ConfigurationError("client_id must be the OAuth app's client id (a string)")
        if client_secret is not None and not _text(client_secret):
            raise ConfigurationError("client_secret must be a non-empty string or None")
        url = (base_url or os.environ.get("MANTYX_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"base_url must start with http:// or https://, got {url!r}")
        _check_seconds("timeout", timeout)
        self.client_id = client_id
        self._client_secret = client_secret
        register_secret(client_secret)
        self.base_url: str = url
        self._timeout = timeout
        self._owns_session = http_session is None
        self._transport = RequestsTransport(url, session=http_session)
        # Each written whole by one assignment, so threads need no lock to share them.
        self._metadata: ServerMetadata | None = None
        self._last: TokenSource | TokenSet | None = None

    def __repr__(self) -> str:
        secret = ", client_secret=***" if self._client_secret else ""
        return f"<OAuth client_id={self.client_id!r}{secret} base_url={self.base_url!r}>"

    def close(self) -> None:
        """Close the pooled connections of the session this ``OAuth`` made.

        Token sources made by it keep working: they open new connections."""
        if self._owns_session:
            closed, self._transport = self._transport, RequestsTransport(self.base_url)
            closed.close()

    def metadata(self) -> ServerMetadata:
        """The server's endpoints (fetched once): RFC 8414 metadata, or the fallback paths."""
        if self._metadata is not None:
            return self._metadata
        body = None
        try:
            body = self._call("GET", f"{self.base_url}{_METADATA_PATH}", policy=_SAFE)
        except APIStatusError as exc:
            log.debug("no OAuth metadata (HTTP %d): using the fallback paths", exc.status)
        except WireFormatError:
            # A web app that answers every unknown path with its HTML page.
            log.debug("the OAuth metadata path answered without JSON: using the fallback paths")
        self._metadata = (
            ServerMetadata.from_document(body, self.base_url)
            if isinstance(body, Mapping)
            else ServerMetadata.fallback(self.base_url)
        )
        return self._metadata

    def sign_in(
        self,
        scopes: Iterable[str] | str,
        *,
        open_browser: bool = True,
        timeout: float = 300.0,
        redirect_port: int = 0,
        on_url: Callable[[str], None] | None = None,
    ) -> TokenSet:
        """Sign in interactively (Authorization Code + PKCE) and return the tokens.

        A listener on ``127.0.0.1`` (port ``redirect_port``, default a free one)
        waits for the browser's redirect to ``http://127.0.0.1:<port>/callback``.
        The sign-in URL is always shown: written to stderr (it must reach a
        person even with logging off; notebooks show stderr) with a browser
        opened too when ``open_browser`` — or handed to ``on_url`` instead of
        stderr. Nothing secret is in that URL. A request to the listener with a
        wrong or missing ``state`` (one this sign-in did not start) is answered
        400 and ignored.

        :param scopes: e.g. ``["runs:read", "runs:write", "mantyx.identity:read"]``
            (add the last to let ``Client(token_source=...)`` find the workspace).
        :param timeout: seconds to wait for the redirect.
        :param redirect_port: a fixed port, for an OAuth app registered with one.

        :raises SignInError: refused (``code`` from the server), ``timeout``,
            ``state_mismatch`` (the time ran out and only requests with the
            wrong state came), or ``listener_unavailable`` (the port is taken).
        :raises AuthError: the server refused the code exchange.
        """
        wanted = scope_list(scopes)
        _check_seconds("timeout", timeout)
        port: object = redirect_port
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ConfigurationError(f"redirect_port must be 0..65535, got {redirect_port!r}")
        endpoints = self.metadata()
        verifier, challenge = pkce_pair()
        with LoopbackRedirect(redirect_port) as listener:
            params = {
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": listener.redirect_uri,
                "scope": " ".join(wanted),
                "state": listener.state,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
            }
            separator = "&" if "?" in endpoints.authorization_endpoint else "?"
            url = f"{endpoints.authorization_endpoint}{separator}{urlencode(params)}"
            log.info("sign-in: waiting for the redirect to %s", listener.redirect_uri)
            opened = launch_browser(url) if open_browser else False
            if on_url is not None:
                on_url(url)
            else:
                show_url(url, opened)
            code = listener.wait(timeout)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": listener.redirect_uri,
            "code_verifier": verifier,
        }
        body = self._token_request(form, policy=_ONCE)
        tokens = TokenSet.from_token_response(body, now=time.time(), requested_scopes=wanted)
        log.info("signed in (scopes: %s)", " ".join(tokens.scopes))
        self._last = tokens
        return tokens

    def refresh(self, refresh_token: str, *, scopes: Iterable[str] | None = None) -> TokenSet:
        """One refresh grant: a new access token (the refresh token is kept when
        the server does not rotate it).

        :param scopes: a subset of the granted scopes to narrow to, if wanted.
        :raises AuthError: the refresh token is invalid or revoked (sign in again).
        """
        if not _text(refresh_token):
            raise ConfigurationError("refresh_token must be a non-empty string")
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        wanted = scope_list(scopes) if scopes is not None else []
        if wanted:
            form["scope"] = " ".join(wanted)
        body = self._token_request(form, policy=_SAFE)
        return TokenSet.from_token_response(
            body, now=time.time(), requested_scopes=wanted, refresh_token=refresh_token
        )

    @checked(ArgumentTypeError)
    def refresh_token_source(
        self,
        tokens: str | TokenSet,
        *,
        scopes: Iterable[str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> RefreshingTokenSource:
        """A :class:`RefreshingTokenSource` for ``Client(token_source=...)``.

        :param tokens: a refresh token, or a :class:`TokenSet` (its access token
            is used until it is due, and it must hold a refresh token).
        :param clock: epoch seconds, injectable for tests.
        """
        if isinstance(tokens, TokenSet):
            if not tokens.refresh_token:
                raise ConfigurationError("this token set has no refresh token to refresh with")
            refresh_token, initial = tokens.refresh_token, tokens
        elif _text(tokens):
            refresh_token, initial = tokens, None
        else:
            raise ConfigurationError("pass a refresh token (str) or a TokenSet")
        source = RefreshingTokenSource(
            refresh_token,
            refresh=self._refresh_grant,
            userinfo=self.userinfo,
            base_url=self.base_url,
            initial=initial,
            scopes=scopes,
            clock=clock,
        )
        self._last = source
        return source

    def revoke(self, token: str | TokenSet | RefreshingTokenSource) -> None:
        """Revoke a token (RFC 7009). A :class:`TokenSet` or token source has its
        refresh token revoked, which ends its access tokens too. Revoking an
        unknown or already revoked token is not an error."""
        if isinstance(token, RefreshingTokenSource):
            value, hint = token.refresh_token, "refresh_token"
        elif isinstance(token, TokenSet):
            value = token.refresh_token or token.access_token
            hint = "refresh_token" if token.refresh_token else "access_token"
        elif _text(token):
            value, hint = token, ""
        else:
            raise ConfigurationError("pass the token to revoke (str, TokenSet or token source)")
        form = {"token": value}
        if hint:
            form["token_type_hint"] = hint
        self._call("POST", self.metadata().revocation_endpoint, form=self._client_form(form))
        log.info("revoked a %s", hint or "token")

    def userinfo(self, token: str | TokenSet | TokenSource | None = None) -> UserInfo:
        """Who the token belongs to and the workspaces it reaches (scope
        ``mantyx.identity:read``). Default: the last sign-in or token source
        made by this ``OAuth``.

        :raises PermissionDeniedError: the token lacks ``mantyx.identity:read``.
        """
        if token is None:
            token = self._last
            if token is None:
                raise ConfigurationError("sign in first, or pass the token to userinfo()")
        endpoint = self.metadata().userinfo_endpoint
        if isinstance(token, TokenSource):
            current = token.token()
            try:
                body = self._call("GET", endpoint, bearer=current, policy=_SAFE)
            except AuthError as exc:
                if exc.status != 401:
                    raise
                body = self._call("GET", endpoint, bearer=token.refresh(current), policy=_SAFE)
        else:
            bearer = token.access_token if isinstance(token, TokenSet) else token
            body = self._call("GET", endpoint, bearer=bearer, policy=_SAFE)
        return UserInfo.from_wire(body if isinstance(body, Mapping) else {})

    def _refresh_grant(self, refresh_token: str, scopes: list[str] | None) -> TokenSet:
        return self.refresh(refresh_token, scopes=scopes)

    def _client_form(self, form: dict[str, str]) -> dict[str, str]:
        form["client_id"] = self.client_id
        if self._client_secret is not None:
            form["client_secret"] = self._client_secret
        return form

    def _token_request(self, form: dict[str, str], *, policy: RetryPolicy) -> Mapping[str, Any]:
        body = self._call(
            "POST", self.metadata().token_endpoint, form=self._client_form(form), policy=policy
        )
        if not isinstance(body, Mapping):
            raise MantyxError("the token endpoint answered without a JSON object")
        return body

    def _call(
        self,
        method: str,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        bearer: str | None = None,
        policy: RetryPolicy | None = None,
    ) -> Any:
        """One JSON answer from an OAuth endpoint, errors in the package's tree,
        within ``timeout`` in all."""
        headers = {"Accept": "application/json", "User-Agent": f"mantyx-sync/{__version__}"}
        body = None
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = urlencode(form).encode()
        if bearer is not None:
            register_secret(bearer)
            headers["Authorization"] = f"Bearer {bearer}"
        for field in _SECRET_FIELDS:
            register_secret((form or {}).get(field))
        label = f"{method} {display_url(url)}"
        too_slow = (
            f"{label}: no complete answer within {self._timeout:g}s (a slow server "
            "or proxy): try again later, or give OAuth(timeout=...) more seconds"
        )

        # One deadline for the whole call, held by the transport however slowly
        # the bytes come (requests alone bounds each read, never the answer).
        deadline = time.monotonic() + self._timeout

        def once() -> Any:
            timeouts = (min(10.0, self._timeout), self._timeout)
            request = HttpRequest(method, url, headers, body, timeouts, deadline)
            try:
                response = self._transport.send(request)
            except RequestTimeoutError as exc:
                if time.monotonic() < deadline:
                    raise
                raise RequestTimeoutError(too_slow) from exc
            content = b"".join(response)  # read by send(): closing loses nothing
            response.close()
            log.debug("%s -> %d", label, response.status)
            if response.status >= 300:
                raise _oauth_error(response, content)
            what = f"{display_url(url)} answered HTTP {response.status}, and the body"
            return wire_json(content, what, response.headers.get("content-type"))

        chosen = attrs.evolve(policy or _SAFE, deadline=self._timeout)
        return chosen.call(once, label=label)


def _oauth_error(response: HttpResponse, content: bytes) -> APIStatusError:
    """RFC 6749 §5.2 errors (``error``, ``error_description``) as AuthError or
    InvalidRequestError; anything else as the transport would map it. What the
    body says is redacted: a server may echo the form, client secret included."""
    try:
        body = redact_value(decode_json(content))
    except ValueError:
        body = None
    code = body.get("error") if isinstance(body, dict) else None
    if response.status in (400, 401) and isinstance(code, str):
        description = body.get("error_description") if isinstance(body, dict) else None
        message = description if isinstance(description, str) and description else code
        auth = code in _AUTH_ERRORS or response.status == 401
        cls = AuthError if auth else InvalidRequestError
        return cls(message, status=response.status, code=code, body=body)
    return api_error(response.status, response.headers, content)


def _text(value: object) -> bool:
    """Whether ``value`` is a non-blank string."""
    return isinstance(value, str) and bool(value.strip())


def _check_seconds(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigurationError(f"{name} must be a number of seconds > 0, got {value!r}")
