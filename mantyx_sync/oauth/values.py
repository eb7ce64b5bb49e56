"""The OAuth values: server endpoints, user info, and scope lists."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ..errors import ConfigurationError

__all__ = ["ServerMetadata", "UserInfo"]


@attrs.frozen(kw_only=True)
class ServerMetadata:
    """The authorization server's endpoints.

    :ivar discovered: whether they came from RFC 8414 metadata (``False``:
        the documented fallback paths).
    """

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    revocation_endpoint: str
    userinfo_endpoint: str
    discovered: bool

    @classmethod
    def fallback(cls, base_url: str) -> ServerMetadata:
        """The documented paths under ``base_url``."""
        return cls(
            issuer=base_url,
            authorization_endpoint=f"{base_url}/api/oauth/authorize",
            token_endpoint=f"{base_url}/api/oauth/token",
            revocation_endpoint=f"{base_url}/api/oauth/revoke",
            userinfo_endpoint=f"{base_url}/api/oauth/userinfo",
            discovered=False,
        )

    @classmethod
    def from_document(cls, body: Mapping[str, Any], base_url: str) -> ServerMetadata:
        """Read an RFC 8414 document; missing endpoints keep their fallback paths."""
        fields = attrs.asdict(cls.fallback(base_url)) | {"discovered": True}
        for key in fields:
            value = body.get(key)
            if key != "discovered" and isinstance(value, str) and value.startswith("http"):
                fields[key] = value
        return cls(**fields)


@attrs.frozen(kw_only=True)
class UserInfo:
    """Who a token belongs to and which workspaces it reaches (``GET /api/oauth/userinfo``).

    :ivar workspaces: the workspace slugs, in the server's order.
    :ivar raw: the whole response body.
    """

    subject: str | None
    name: str | None
    email: str | None
    workspaces: tuple[str, ...]
    raw: Mapping[str, Any] = attrs.field(repr=False, eq=False)

    @classmethod
    def from_wire(cls, body: Mapping[str, Any]) -> UserInfo:
        """Read the body; workspaces may be slugs or objects with a ``slug``."""
        found: list[Any] = []
        if isinstance(body.get("workspaces"), list):
            found.extend(body["workspaces"])
        if body.get("workspace") is not None:
            found.append(body["workspace"])
        slugs = (item.get("slug") if isinstance(item, Mapping) else item for item in found)

        def text(key: str) -> str | None:
            value = body.get(key)
            return value if isinstance(value, str) else None

        return cls(
            subject=text("sub"),
            name=text("name"),
            email=text("email"),
            workspaces=tuple(dict.fromkeys(s for s in slugs if isinstance(s, str) and s)),
            raw=dict(body),
        )


def scope_list(scopes: Iterable[str] | str | None) -> list[str]:
    if isinstance(scopes, str):
        scopes = scopes.split()
    try:
        wanted = list(dict.fromkeys(scopes or ()))
    except TypeError:
        raise ConfigurationError(
            f"scopes must be a list of strings like 'runs:read', got {scopes!r}"
        ) from None
    bad = [s for s in wanted if not _scope_name(s)]
    if bad or not wanted:
        raise ConfigurationError(
            "scopes must be a non-empty list of scope names like 'runs:read'"
            + (f"; bad: {bad!r}" if bad else "")
        )
    return wanted


def _scope_name(value: object) -> bool:
    return isinstance(value, str) and bool(value) and not any(c.isspace() for c in value)
