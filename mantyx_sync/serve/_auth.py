"""The bearer-token ``authenticate`` hook for the served apps."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

from .._base.redact import register_secret

__all__ = ["bearer_token"]


def bearer_token(*tokens: str) -> Callable[[dict[str, Any]], bool]:
    """An ``authenticate`` hook accepting ``Authorization: Bearer <token>`` for any of ``tokens``.

    Comparison takes constant time; the tokens are registered as secrets, so
    they never appear in this package's logs. ::

        app = serve.a2a_app(agent, authenticate=serve.bearer_token(os.environ["A2A_TOKEN"]))

    :raises ValueError: no token, or an empty one.
    """
    if not tokens or not all(tokens):
        raise ValueError("bearer_token needs at least one non-empty token")
    for token in tokens:
        register_secret(token)
    expected = [token.encode("utf-8") for token in tokens]

    def authenticate(environ: dict[str, Any]) -> bool:
        header = environ.get("HTTP_AUTHORIZATION", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given:
            return False
        candidate = given.strip().encode("utf-8")
        # Compare against every token, so timing does not tell which matched.
        matches = [hmac.compare_digest(candidate, token) for token in expected]
        return any(matches)

    return authenticate
