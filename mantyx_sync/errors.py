"""Every error mantyx_sync raises: subclasses of :class:`MantyxError`, grouped by
what failed (configuration, input, transport, an API status, a run, sign-in, a
tool), each saying when it is raised.

Messages and reprs are built from fields that never hold secrets: API keys,
tokens and header values are not stored on errors. ``TimeoutError_``, the old
name of :class:`Timeout`, still works (the same class) with a ``DeprecationWarning``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._base.root_error import MantyxError

__all__ = [
    "APIError",
    "ArgumentTypeError",
    "AuthError",
    "ConfigurationError",
    "ConflictError",
    "ConnectError",
    "InvalidRequestError",
    "MantyxError",
    "NotFoundError",
    "OutputParseError",
    "PermissionDenied",
    "RateLimitError",
    "RunCancelled",
    "RunError",
    "ServerError",
    "SignInError",
    "SpecError",
    "StreamError",
    "Timeout",
    "ToolError",
    "ToolResolutionError",
    "TransportError",
    "WireFormatError",
]


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


class TransportError(MantyxError):
    """No usable HTTP answer: the connection failed, timed out or broke."""


class ConnectError(TransportError):
    """The TCP/TLS connection could not be made (the server cannot have acted)."""


class Timeout(TransportError):
    """A connect or read timeout expired.

    .. versionchanged:: 0.2.0 renamed from ``TimeoutError_``, which still works
       (the same class) with a ``DeprecationWarning``.
    """


class StreamError(TransportError):
    """The run's event stream broke and could not be resumed within the retry budget."""

    def __init__(self, message: str, *, run_id: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id


class WireFormatError(MantyxError, ValueError):
    """A server's answer is not what the protocol says: a 2xx body that is not
    JSON (the message names its content type), JSON nested too deeply, a body
    past the size cap, or a value without its documented shape (the message
    names the field)."""


class APIError(MantyxError):
    """The server answered with an error status.

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


class InvalidRequestError(APIError):
    """400: the server rejected the body (``invalid_request``, ``invalid_model``, ...)."""


class AuthError(APIError):
    """401: the API key or access token is missing, invalid or expired."""


class PermissionDenied(APIError):
    """403: the credential may not do this.

    :ivar required_scopes: for OAuth tokens lacking a scope, the scopes the route needs.
    """

    def __init__(self, message: str, *, required_scopes: Sequence[str] = (), **kw: Any) -> None:
        self.required_scopes: list[str] = list(required_scopes)
        super().__init__(message, **kw)


class NotFoundError(APIError):
    """404: unknown workspace, run, session or tool use. ``hint`` may name the right slug."""


class ConflictError(APIError):
    """409: e.g. ``run_terminal`` for a tool result that arrived after the run ended."""


class RateLimitError(APIError):
    """429: too many requests.

    :ivar retry_after: seconds to wait: the server's ``Retry-After``, else the
        time until the bucket's reset, if known.
    :ivar rate_limit: the :class:`~mantyx_sync.RateLimit` the 429 carried
        (bucket, limit, remaining, reset), or ``None``.
    """

    def __init__(self, message: str, *, rate_limit: Any = None, **kw: Any) -> None:
        self.rate_limit = rate_limit
        super().__init__(message, **kw)


class ServerError(APIError):
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
    :ivar structured_output: a :class:`~mantyx_sync.StructuredOutputInfo` saying
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


class RunCancelled(RunError):
    """The run was cancelled (by :meth:`Run.cancel`, Ctrl-C, or another client)."""


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


def renamed(name: str) -> type[MantyxError] | None:
    """:class:`Timeout` for its old name ``TimeoutError_``, after a ``DeprecationWarning``;
    ``None`` for any other name.

    Called by this module's and the package's ``__getattr__``, so the warning
    points at the caller's line.
    """
    if name != "TimeoutError_":
        return None
    warnings.warn(
        f"mantyx_sync.{name} is deprecated: use mantyx_sync.Timeout, the same class",
        DeprecationWarning,
        stacklevel=3,
    )
    return Timeout


if TYPE_CHECKING:
    TimeoutError_ = Timeout
else:

    def __getattr__(name: str) -> type[MantyxError]:
        cls = renamed(name)
        if cls is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return cls
