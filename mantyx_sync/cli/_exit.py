"""Exit codes a cron job can rely on, and the one line that explains each."""

from __future__ import annotations

from typing import Final

from ..errors import (
    APIConnectionError,
    APIStatusError,
    AuthError,
    ConfigurationError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RunTimeoutError,
    SpecError,
    ToolResolutionError,
)

__all__ = ["ALREADY_ENDED", "INTERRUPTED", "OK", "UsageError", "exit_code_for"]

# In the order of docs/guide/cli.rst's table; ALREADY_ENDED: `cancel` found the run over.
OK, RUN_FAILED, USAGE, AUTH, TRANSPORT, ALREADY_ENDED = range(6)
INTERRUPTED: Final = 130


class UsageError(Exception):
    """The command line asks for something impossible; exit 2 with this message."""


def exit_code_for(exc: Exception) -> int:
    """The exit status for an error that ended a command: a request refused as
    invalid (400) or naming nothing (404) is a usage error; a server failure
    (5xx, 429), an unreachable MCP server or a run past ``--timeout`` is a
    transport failure (4, as it was when both timeouts were one class); a failed run
    (:class:`~mantyx_sync.RunError`) or anything else is 1."""
    usage = (UsageError, SpecError, ConfigurationError, InvalidRequestError, NotFoundError)
    if isinstance(exc, usage):
        return USAGE
    if isinstance(exc, (AuthError, PermissionDeniedError)):
        return AUTH
    if isinstance(exc, (APIConnectionError, RunTimeoutError, ToolResolutionError, APIStatusError)):
        return TRANSPORT
    return RUN_FAILED
