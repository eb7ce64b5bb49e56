"""Sign in to MANTYX with OAuth 2.0 and stay signed in.

:class:`OAuth` talks to a MANTYX authorization server:

* :meth:`OAuth.sign_in` runs Authorization Code with PKCE (S256) for scripts
  and notebooks: a one-shot listener on ``127.0.0.1`` (random port) takes the
  browser's redirect, checks ``state`` and exchanges the code;
* :meth:`OAuth.refresh_token_source` gives a :class:`RefreshingTokenSource` for
  ``Client(token_source=...)``: it caches the access token, refreshes it 60 s
  before it expires and once after a ``401``, one refresh for all threads;
* :meth:`OAuth.revoke` and :meth:`OAuth.userinfo`.

Endpoints come from the server's RFC 8414 metadata
(``/.well-known/oauth-authorization-server``), falling back to
``/api/oauth/authorize``, ``/api/oauth/token``, ``/api/oauth/revoke`` and
``/api/oauth/userinfo``.

Example::

    oauth = mantyx_sync.OAuth("my-client-id")
    tokens = oauth.sign_in(["runs:read", "runs:write", "models:read", "mantyx.identity:read"])
    mantyx_sync.credentials.save(tokens)
    client = mantyx_sync.Client(token_source=oauth.refresh_token_source(tokens))

The pieces: :class:`OAuth` (the endpoints and the sign-in), :class:`RefreshingTokenSource`
(what a :class:`~mantyx_sync.Client` asks for tokens), :class:`TokenSet`,
:class:`UserInfo` and :class:`ServerMetadata`.
"""

from __future__ import annotations

from .._http.auth import TokenSet
from ._client import OAuth
from ._source import RefreshingTokenSource
from ._values import ServerMetadata, UserInfo

__all__ = ["OAuth", "RefreshingTokenSource", "ServerMetadata", "TokenSet", "UserInfo"]
