"""From the :class:`~mantyx_sync.Client` constructor's arguments to a :class:`ClientConfig`.

A token source may also name the server and, when its token reaches exactly
one workspace, the workspace.
"""

from __future__ import annotations

import os
from typing import Any

from ..auth import IdentityAware, TokenSource
from ..config import ClientConfig
from ..errors import ArgumentTypeError, ConfigurationError, MantyxError

__all__ = ["client_config"]


def client_config(
    api_key: str | None,
    *,
    token_source: TokenSource | None,
    workspace: str | None,
    base_url: str | None,
    timeout: float | tuple[float, float] | None,
    **settings: float | None,
) -> ClientConfig:
    """``settings``: the remaining numeric options, ``None`` for the default.

    :raises ConfigurationError: a bad or missing argument, naming what to fix.
    """
    options: dict[str, Any] = {key: value for key, value in settings.items() if value is not None}
    if isinstance(timeout, tuple):
        if len(timeout) != 2:
            raise ConfigurationError(
                f"request_timeout must be seconds or a (connect, read) pair, got {timeout!r}"
            )
        options["connect_timeout"], options["read_timeout"] = timeout
    elif timeout is not None:
        options["read_timeout"] = timeout
    if token_source is not None:
        if not isinstance(token_source, TokenSource):
            raise ArgumentTypeError(
                "token_source must have token() and refresh(rejected) methods, e.g. "
                f"OAuth.refresh_token_source(...); got {type(token_source).__name__}"
            )
        if api_key is not None:
            raise ConfigurationError("pass either api_key= or token_source=, not both")
        if isinstance(token_source, IdentityAware):
            base_url = base_url or token_source.base_url
            if not workspace and not os.environ.get("MANTYX_WORKSPACE"):
                workspace = _only_workspace(token_source)
    return ClientConfig.from_env(
        api_key,
        workspace=workspace,
        base_url=base_url,
        key_required=token_source is None,
        **options,
    )


def _only_workspace(source: IdentityAware) -> str:
    try:
        slugs = list(dict.fromkeys(source.workspaces()))
    except MantyxError as exc:
        raise ConfigurationError(
            f"no workspace given and the token's workspaces could not be listed ({exc}): "
            "pass workspace= or set MANTYX_WORKSPACE"
        ) from exc
    if len(slugs) == 1:
        return slugs[0]
    if not slugs:
        raise ConfigurationError("the token reaches no workspace: pass workspace=")
    raise ConfigurationError(
        f"the token reaches {len(slugs)} workspaces ({', '.join(slugs)}): "
        "pass workspace= to choose one"
    )
