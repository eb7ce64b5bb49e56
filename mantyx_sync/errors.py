"""Every error mantyx_sync raises: subclasses of :class:`MantyxError`, grouped by
what failed (configuration, input, transport, an API status, a run, sign-in, a
tool), each saying when it is raised.

Every class name ends in ``Error``. The HTTP status errors share one base,
:class:`APIStatusError`; the failures to get any answer share another,
:class:`APIConnectionError`. The two limits a caller sets have their own
errors, both builtin ``TimeoutError`` subclasses: :class:`RequestTimeoutError`
(one request's ``request_timeout``) and :class:`RunTimeoutError` (a run's
``run_timeout``).

Messages and reprs are built from fields that never hold secrets: API keys,
tokens and header values are not stored on errors.

The names of 0.1 still work for one release, each with a
``DeprecationWarning`` naming its replacement (see :data:`RENAMED`).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "ArgumentTypeError",
    "AuthError",
    "ConfigurationError",
    "ConflictError",
    "ConnectError",
    "InvalidRequestError",
    "MantyxError",
    "NotFoundError",
    "OutputParseError",
    "PermissionDeniedError",
    "RateLimitError",
    "RequestTimeoutError",
    "RunCancelledError",
    "RunError",
    "RunTimeoutError",
    "SchemaWarning",
    "ServerError",
    "SignInError",
    "SpecError",
    "StreamError",
    "ToolError",
    "ToolResolutionError",
    "WireFormatError",
]


class MantyxError(Exception):
    """Base class of every error raised by mantyx_sync, the emulator's
    (``mantyx_sync.testing``) included, so one ``except MantyxError`` catches both."""


class SchemaWarning(UserWarning):
    """A warning, not an error: a Python type could not be expressed in JSON
    Schema, and a permissive schema was used in its place."""


class ConfigurationError(MantyxError, ValueError):
    """The client is missing configuration (API key, workspace) or got a bad option."""


class SpecError(MantyxError, ValueError):
    """The agent spec, a tool or a turn input breaks a documented rule.

    Raised before any request is sent; the message says what to fix.
    ``path`` names the argument to fix as the caller wrote it (e.g. ``tools[2].name``).
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class ArgumentTypeError(SpecError, ConfigurationError, TypeError):
    """An argument of the wrong type, refused at the call that passed it.

    Raised where a wrong type would otherwise fail late: a value kept to be
    sent later, a handler called later. The message names the argument as
    written in Python, what it must be and the type it got (never the value);
    ``path`` is the argument's name. It is a :class:`SpecError` (an agent's
    or a tool's argument), a :class:`ConfigurationError` (a client option)
    and a ``TypeError`` alike, so each of those ``except`` clauses catches it.
    """


class APIConnectionError(MantyxError):
    """No usable HTTP answer: the connection failed, timed out or broke.

    .. versionchanged:: 0.2.0 renamed from ``TransportError``.
    """


class ConnectError(APIConnectionError):
    """The TCP/TLS connection could not be made (the server cannot have acted)."""


class RequestTimeoutError(APIConnectionError, TimeoutError):
    """One request got no answer within the client's ``request_timeout``
    (connecting, or waiting for the server to send), or a run's stream stayed
    quiet past ``stream_idle_timeout`` and could not be resumed.

    A builtin ``TimeoutError`` as well: ``except TimeoutError`` catches it and
    :class:`RunTimeoutError` alike.

    .. versionchanged:: 0.2.0 renamed from ``Timeout``.
    """


class StreamError(APIConnectionError):
    """The run's event stream broke and could not be resumed within the retry budget."""

    def __init__(self, message: str, *, run_id: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id


class WireFormatError(MantyxError, ValueError):
    """A server's answer is not what the protocol says: a 2xx body that is not
    JSON (the message names its content type), JSON nested too deeply, a body
    past the size cap, or a value without its documented shape (the message
    names the field)."""


class APIStatusError(MantyxError):
    """The server answered with an error status: the base of every HTTP status error.

    .. versionchanged:: 0.2.0 renamed from ``APIError``.

    :ivar status: HTTP status code.
    :ivar code: machine-readable ``error`` code from the body (e.g. ``invalid_model``).
    :ivar message: human-readable message from the body.
    :ivar hint: the server's hint, e.g. the right workspace slug on a 404.
    :ivar candidates: candidate values the server offered (e.g. model ids).
    :ivar request_id: the server's request id header, when it sends one.
    :ivar retry_after: seconds the server asked to wait (``Retry-After``), if any.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str | None = None,
        hint: str | None = None,
        candidates: Sequence[Any] | None = None,
        body: Any = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.retry_after = retry_after
        self.code = code
        self.message = message
        self.hint = hint
        self.candidates: list[str] = list(candidates) if candidates else []
        self.body = body
        self.request_id = request_id
        text = f"HTTP {status}"
        if code:
            text += f" {code}"
        text += f": {message}"
        if hint:
            text += f" (hint: {hint})"
        if self.candidates:
            text += f" (candidates: {', '.join(map(str, self.candidates))})"
        super().__init__(text)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
            f"message={self.message!r})"
        )


class InvalidRequestError(APIStatusError):
    """400: the server rejected the body (``invalid_request``, ``invalid_model``, ...)."""


class AuthError(APIStatusError):
    """401: the API key or access token is missing, invalid or expired."""


class PermissionDeniedError(APIStatusError):
    """403: the credential may not do this.

    .. versionchanged:: 0.2.0 renamed from ``PermissionDenied``.

    :ivar required_scopes: for OAuth tokens lacking a scope, the scopes the route needs.
    """

    def __init__(self, message: str, *, required_scopes: Sequence[str] = (), **kw: Any) -> None:
        self.required_scopes: list[str] = list(required_scopes)
        super().__init__(message, **kw)


class NotFoundError(APIStatusError):
    """404: unknown workspace, run, session or tool use. ``hint`` may name the right slug."""


class ConflictError(APIStatusError):
    """409: e.g. ``run_terminal`` for a tool result that arrived after the run ended."""


class RateLimitError(APIStatusError):
    """429: too many requests.

    :ivar retry_after: seconds to wait: the server's ``Retry-After``, else the
        time until the bucket's reset, if known.
    :ivar rate_limit: the :class:`~mantyx_sync.RateLimit` the 429 carried
        (bucket, limit, remaining, reset), or ``None``.
    """

    def __init__(self, message: str, *, rate_limit: Any = None, **kw: Any) -> None:
        self.rate_limit = rate_limit
        super().__init__(message, **kw)


class ServerError(APIStatusError):
    """5xx: the server failed; safe requests are retried before this is raised."""


class RunError(MantyxError):
    """The run ended without success (an ``error`` terminal or a non-success ``result``).

    :ivar run_id: the run.
    :ivar code: the ``result`` subtype (e.g. ``error_local_tool_timeout``) or the
        ``error`` event's ``code``.
    :ivar error_class: the canonical ``errorClass`` when the server sent one.
        ``"rate_limit"`` means the model provider throttled the run (after the
        server's own retries), not MANTYX's API: that is a
        :class:`RateLimitError` (HTTP 429) on the request itself.
    :ivar message: the server's human-readable message.
    :ivar finish_reason: the model's stop reason, e.g. ``max_tokens``.
    :ivar partial_text: salvage text the model produced before failing (diagnostic
        only: for output-schema runs it is usually incomplete JSON).
    :ivar retryable: the server's coarse retry hint, when given.
    :ivar api_status: the provider API's HTTP status behind the failure, when given.
    :ivar api_code: the provider API's error code, when given.
    :ivar structured_output: a :class:`~mantyx_sync.events.StructuredOutputInfo` saying
        how an output schema was applied, when the server says.
    :ivar result: the :class:`~mantyx_sync.RunResult` gathered so far (events, tokens).

    With ``OutputSchema(..., enforcement="strict")`` a run that cannot be
    constrained fails instead of answering unconstrained, with ``error_class``
    ``structured_output_schema_rejected`` (the provider refused the schema),
    ``structured_output_not_supported`` (the model cannot enforce schemas) or
    ``structured_output_not_enforced`` (enforcement was lost mid-run).
    """

    def __init__(
        self,
        message: str,
        *,
        run_id: str | None = None,
        code: str | None = None,
        error_class: str | None = None,
        finish_reason: str | None = None,
        partial_text: str | None = None,
        retryable: bool | None = None,
        result: Any = None,
        api_status: int | None = None,
        api_code: str | None = None,
        structured_output: Any = None,
    ) -> None:
        self.run_id = run_id
        self.code = code
        self.error_class = error_class
        self.message = message
        self.finish_reason = finish_reason
        self.partial_text = partial_text
        self.retryable = retryable
        self.result = result
        self.api_status = api_status
        self.api_code = api_code
        self.structured_output = structured_output
        text = f"run {run_id} failed" if run_id else "run failed"
        if code:
            text += f" ({code})"
        super().__init__(f"{text}: {message}")


class RunCancelledError(RunError):
    """The run was cancelled (by :meth:`Run.cancel`, Ctrl-C, or another client).

    .. versionchanged:: 0.2.0 renamed from ``RunCancelled``.
    """


class RunTimeoutError(MantyxError, TimeoutError):
    """A run did not end within its ``run_timeout``: it was cancelled.

    Counted from the run's start, however quiet or slow the server is. A
    builtin ``TimeoutError`` as well (see :class:`RequestTimeoutError`).

    :ivar run_id: the run, when it had started.
    """

    def __init__(self, message: str, *, run_id: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id


class OutputParseError(MantyxError, ValueError):
    """An output-schema reply is not JSON or fails validation. ``raw_text`` keeps the reply.

    :ivar path: for an ``output_type`` reply, the first field that does not fit
        (``items[0].price``); ``None`` when the whole reply is wrong.
    """

    def __init__(
        self,
        message: str,
        *,
        raw_text: str,
        errors: Sequence[str] = (),
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.errors: list[str] = list(errors)
        self.path = path


class SignInError(MantyxError):
    """An interactive OAuth sign-in (:meth:`mantyx_sync.OAuth.sign_in`) did not complete.

    :ivar code: ``"access_denied"`` (or the other OAuth error the redirect
        carried), ``"timeout"`` (no redirect in time), ``"state_mismatch"``
        (a redirect that this sign-in did not start: possible forgery) or
        ``"listener_unavailable"`` (the redirect port could not be opened).
    """

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


class ToolError(MantyxError):
    """Raise from a tool handler to send ``str(error)`` to the model verbatim.

    Any other exception is reported to the model as ``"<Type>: <message>"``.
    """


class ToolResolutionError(MantyxError):
    """A client-resolved tool (MCP server, A2A peer) could not be started, reached or listed."""


RENAMED: dict[str, tuple[type[BaseException], str]] = {
    "APIError": (APIStatusError, "mantyx_sync.APIStatusError, the same class"),
    "TransportError": (APIConnectionError, "mantyx_sync.APIConnectionError, the same class"),
    "PermissionDenied": (
        PermissionDeniedError,
        "mantyx_sync.PermissionDeniedError, the same class",
    ),
    "RunCancelled": (RunCancelledError, "mantyx_sync.RunCancelledError, the same class"),
    # A run's deadline and a request's limit were both ``Timeout``: the old name
    # is the builtin both now subclass, so an ``except`` catches what it did.
    "Timeout": (
        TimeoutError,
        "mantyx_sync.RequestTimeoutError (a request), mantyx_sync.RunTimeoutError (a run's "
        "run_timeout) or the builtin TimeoutError (either)",
    ),
    "TimeoutError_": (TimeoutError, "mantyx_sync.RequestTimeoutError or the builtin TimeoutError"),
}
"""Each 0.1 exception name -> (what it is now, the replacement its warning names)."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def deprecated(old: str, new: str) -> None:
    """Warn that ``old`` is deprecated, naming ``new``: one ``DeprecationWarning``,
    attributed to the first caller outside this package (the line to change)."""
    frame, level = sys._getframe(1), 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=level)


_T = TypeVar("_T")


def renamed_argument(new_value: _T, old_value: _T, *, old: str, new: str, where: str) -> _T:
    """``new_value``, or the value given under the argument's deprecated name
    ``old`` (after a warning naming ``new``) when only that one was given.

    :raises ArgumentTypeError: both names were given.
    """
    if old_value is None:
        return new_value
    if new_value is not None:
        raise ArgumentTypeError(f"pass {new}= only: {old}= is its deprecated name", path=new)
    deprecated(f"{where}({old}=)", f"{new}=")
    return old_value


def renamed(name: str, module: str = "mantyx_sync") -> type[BaseException] | None:
    """The class an old exception ``name`` stands for, after a ``DeprecationWarning``
    naming its replacement; ``None`` for any other name.

    Called by this module's and the package's ``__getattr__``, so the warning
    points at the caller's line. Not cached, so every use warns (the warnings
    filter shows it once per line).
    """
    entry = RENAMED.get(name)
    if entry is None:
        return None
    if not _asked_by_import():
        deprecated(f"{module}.{name}", entry[1])
    return entry[0]


def moved(name: str, home: str) -> None:
    """Warn that ``mantyx_sync.<name>`` is deprecated, naming ``<home>.<name>``
    (the same object), which the package's ``__getattr__`` then returns.

    Every use warns, as for :func:`renamed`, pointing at the caller's line.
    """
    if not _asked_by_import():
        deprecated(f"mantyx_sync.{name}", f"{home}.{name}, the same")


def _asked_by_import() -> bool:
    # ``from mantyx_sync import Old`` asks twice (hasattr, then the import): the
    # import's own ask warns, so the statement warns once. Frames: this one, the
    # warning function, the package's __getattr__, then who asked.
    return sys._getframe(3).f_code.co_filename.startswith("<frozen importlib")


if TYPE_CHECKING:
    APIError = APIStatusError
    TransportError = APIConnectionError
    PermissionDenied = PermissionDeniedError
    RunCancelled = RunCancelledError
    Timeout = TimeoutError
    TimeoutError_ = TimeoutError
else:

    def __getattr__(name: str) -> type[BaseException]:
        cls = renamed(name, __name__)
        if cls is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return cls
