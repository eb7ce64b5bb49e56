"""Recorded requests, with secrets masked before they are stored."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import attrs

__all__ = ["RecordedRequest"]

MASK = "***"

# Header names that always carry a credential, whatever their value.
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "proxy-authorization", "cookie"})
# WSGI loses the case of header names; these restore the spelling the API uses.
_SPELLING = {"X-Api-Key": "X-API-Key", "Last-Event-Id": "Last-Event-ID"}


def mask_headers(headers: Iterable[tuple[str, str]], secrets: Collection[str]) -> dict[str, str]:
    """The request ``headers`` as a dict, secret values masked.

    Credential headers are always masked; any other header is masked when its
    value contains one of ``secrets`` (the API key and the OAuth tokens).
    """
    out: dict[str, str] = {}
    for name, value in headers:
        secret = name.lower() in _SECRET_HEADERS or any(s and s in value for s in secrets)
        out[_SPELLING.get(name, name)] = MASK if secret else value
    return out


@attrs.frozen(kw_only=True)
class RecordedRequest:
    """One request the emulator answered (or dropped), as the test sees it.

    Credentials never appear: ``Authorization``, ``X-API-Key`` and any header
    whose value contains the API key or an OAuth token read ``"***"``.

    :ivar method: the HTTP method, upper case.
    :ivar path: the request path without the query string.
    :ivar query: the query parameters (last value wins).
    :ivar headers: the request headers, masked.
    :ivar json: the parsed JSON body, or ``None`` (no body, or not JSON).
    :ivar status: the response status; ``0`` when the connection was dropped
        without an answer.
    """

    method: str
    path: str
    query: dict[str, str] = attrs.field(factory=dict, hash=False)
    headers: dict[str, str] = attrs.field(factory=dict, hash=False)
    json: Any = attrs.field(default=None, hash=False)
    status: int = 0

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (case-insensitive), or ``None``."""
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)
