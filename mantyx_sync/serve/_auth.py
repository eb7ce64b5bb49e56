"""The bearer-token ``authenticate`` hook for the served apps."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

from .._base.redact import register_secret
from ..errors import ArgumentTypeError, SpecError

__all__ = ["BearerHook", "bearer_token"]


class BearerHook:
    """An ``authenticate`` hook :func:`bearer_token` made (so a card can declare its scheme)."""

    def __init__(self, check: Callable[[dict[str, Any]], str | None]) -> None:
        self._check = check

    def __call__(self, environ: dict[str, Any]) -> str | None:
        return self._check(environ)

    def __repr__(self) -> str:
        return "<bearer_token hook>"


def bearer_token(*tokens: str) -> Callable[[dict[str, Any]], str | None]:
    """An ``authenticate`` hook accepting ``Authorization: Bearer <token>`` for any of ``tokens``.

    Each token is its own caller, named by its position (``"token 1"``,
    ``"token 2"``…): conversations and tasks opened with one token are not
    reachable with another. Comparison takes constant time; the tokens are
    registered as secrets, so they never appear in this package's logs. ::

        app = serve.a2a_app(agent, authenticate=serve.bearer_token(os.environ["A2A_TOKEN"]))

    :raises SpecError: (a ``ValueError``) no token or an empty one; its
        :class:`~mantyx_sync.ArgumentTypeError` (also a ``TypeError``) for one
        that is not a ``str``.
    """
    for index, token in enumerate(tokens):
        if not isinstance(token, str):
            # The value may be a secret: only its type is shown.
            raise ArgumentTypeError(
                f"bearer_token(): each token must be str, got {type(token).__name__}",
                path=f"tokens[{index}]",
            )
    if not tokens or not all(tokens):
        raise SpecError("bearer_token needs at least one non-empty token", path="tokens")
    for token in tokens:
        register_secret(token)
    expected = [token.encode("utf-8") for token in tokens]

    def authenticate(environ: dict[str, Any]) -> str | None:
        header = environ.get("HTTP_AUTHORIZATION", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given:
            return None
        candidate = given.strip().encode("utf-8")
        # Compare against every token, so timing does not tell which matched.
        matches = [hmac.compare_digest(candidate, token) for token in expected]
        return next((f"token {index + 1}" for index, hit in enumerate(matches) if hit), None)

    return BearerHook(authenticate)
