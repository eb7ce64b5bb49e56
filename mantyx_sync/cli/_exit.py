"""Exit codes a cron job can rely on, and the one line that explains each."""

from __future__ import annotations

from typing import Final

from ..errors import (
    APIError,
    AuthError,
    ConfigurationError,
    InvalidRequestError,
    NotFoundError,
    PermissionDenied,
    RunError,
    SpecError,
    ToolResolutionError,
    TransportError,
)

__all__ = ["INTERRUPTED", "OK", "UsageError", "exit_code_for"]

OK: Final = 0
RUN_FAILED: Final = 1
USAGE: Final = 2
AUTH: Final = 3
TRANSPORT: Final = 4
INTERRUPTED: Final = 130


class UsageError(Exception):
    """The command line asks for something impossible; exit 2 with this message."""


def exit_code_for(exc: BaseException) -> int:
    """The exit status for an error that ended a command.

    * 1: the run failed or was cancelled elsewhere (:class:`RunError`), or any
      other MANTYX error;
    * 2: usage, configuration or spec errors, and requests the server refused
      as invalid (400) or naming something that does not exist (404);
    * 3: authentication (401) or permission (403);
    * 4: no usable answer: connection, timeout, broken stream, an MCP server
      that could not be started or reached, or a server failure (5xx, 429).
    """
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(exc, RunError):
        return RUN_FAILED
    if isinstance(exc, (UsageError, SpecError, ConfigurationError)):
        return USAGE
    if isinstance(exc, (AuthError, PermissionDenied)):
        return AUTH
    if isinstance(exc, (InvalidRequestError, NotFoundError)):
        return USAGE
    if isinstance(exc, (TransportError, ToolResolutionError, APIError)):
        return TRANSPORT
    return RUN_FAILED
