"""The :class:`Client` facade: credentials, the connection pool, and plain API calls."""

from __future__ import annotations

import atexit
import os
import threading
from typing import TYPE_CHECKING, Any

from ._base.argcheck import checked
from ._base.redact import mask
from ._base.transport_hook import wrapped, wrapped_token_source
from ._base.types import Closing
from .errors import ArgumentTypeError, ConfigurationError, renamed_argument
from .resources import Feedbacks, Models, Runs, Sessions, moved
from .transport import Transport

if TYPE_CHECKING:
    from collections.abc import Callable

    import requests
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from .auth import TokenSource
    from .config import ClientConfig

    # The engine (requests, the HTTP stack) is imported by the first Client,
    # evaluations by client.evals: a plain script's import pays for neither
    # (benchmarks/README.md, row 4b).
    from .evals import Evals
    from .feedback import Feedback
    from .history import EventReplay, Listing, RunSummary, SessionSummary
    from .rate_limits import RateLimits
    from .results import RunSnapshot, SessionInfo
    from .run import Run
    from .session import Session

__all__ = ["Client"]


def _transport_names() -> dict[str, Any]:
    """What ``Client()``'s argument types name from the transport, loaded by its first call."""
    import requests

    return {"requests": requests, "Transport": Transport}


class Client(Closing):
    """A connection to one MANTYX workspace.

    Arguments left as ``None`` fall back to the environment: ``MANTYX_API_KEY``
    (a workspace API key ``mantyx_…`` or an OAuth access token ``mantyx_at_…``;
    both go in the same header), ``MANTYX_WORKSPACE`` and ``MANTYX_BASE_URL``.
    A missing key or workspace raises :class:`~mantyx_sync.ConfigurationError`
    naming the variable.

    Thread-safety: one ``Client`` serves every thread of a process (a Flask or
    Django worker, a thread pool). It holds one shared ``requests.Session``
    whose connection pool is sized for many concurrent runs and which is never
    mutated per call. It is fork-safe: a client created before gunicorn or
    Celery forks builds a fresh pool in each child.

    :param api_key: API key or OAuth access token; never shown in reprs or logs.
    :param token_source: instead of ``api_key``, a source of OAuth access
        tokens (e.g. :meth:`mantyx_sync.OAuth.refresh_token_source`), asked
        before every request and refreshed once after a ``401``. Then
        ``MANTYX_API_KEY`` is not read, ``base_url`` defaults to the source's
        server, and when neither ``workspace`` nor ``MANTYX_WORKSPACE`` is
        given the workspace is the one the token reaches (an error names the
        choices when there are several).
    :param workspace: workspace slug.
    :param base_url: API origin, default ``https://app.mantyx.io``.
    :param request_timeout: the limit on one request: seconds to wait for the
        server's answer to a JSON request (or to connect), or a
        ``(connect, read)`` pair. Past it,
        :class:`~mantyx_sync.RequestTimeoutError`. A whole run's limit is
        another setting, ``run_timeout=`` (see :meth:`Agent.start`).
    :param max_retries: retries of a safe request after its first attempt.
    :param stream_idle_timeout: seconds without an event before a stream is
        considered dead and resumed (keep-alives do not count).
    :param stream_reconnects: failed reopens of a run's stream in a row (a quiet
        one counts, unless the run waits on our own tool) before
        :class:`~mantyx_sync.StreamError` (default 8; reset once events flow).
    :param max_workers: threads per run for local tools (default 32).
    :param tool_timeout: default seconds a local tool may run (``None``: no limit).
    :param max_event_bytes: the largest one event-stream frame may be (default
        32 MB); past it the stream fails with :class:`~mantyx_sync.StreamError`
        instead of buffering whatever a server or proxy sends.
    :param http_session: a ``requests.Session`` to use instead of our own (for
        proxies or custom TLS); it is then shared across forks as given.
    :param transport: what carries the bytes instead of ``requests`` (see
        :class:`~mantyx_sync.Transport`), e.g. ``mantyx_sync.testing``'s
        in-memory one; credentials, retries and rate limits work the same.
    :param tracer_provider: an OpenTelemetry ``TracerProvider`` for spans of runs and
        tool calls (default: the global one, once the application imported it).
    :param meter_provider: an OpenTelemetry ``MeterProvider`` for run metrics.

    Example::

        with mantyx_sync.Client() as client:
            print(client.models.list().default_model_id)
    """

    @checked(
        ArgumentTypeError,
        # OpenTelemetry is optional: Telemetry checks the providers by what they do.
        defer=("token_source", "tracer_provider", "meter_provider"),
        names=_transport_names,
    )
    def __init__(
        self,
        api_key: str | None = None,
        *,
        token_source: TokenSource | None = None,
        workspace: str | None = None,
        base_url: str | None = None,
        request_timeout: float | tuple[float, float] | None = None,
        max_retries: int | None = None,
        stream_idle_timeout: float | None = None,
        stream_reconnects: int | None = None,
        max_workers: int | None = None,
        tool_timeout: float | None = None,
        http_session: requests.Session | None = None,
        max_event_bytes: int | None = None,
        transport: Transport | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        timeout: float | tuple[float, float] | None = None,
    ) -> None:
        from ._engine.tracing import Telemetry
        from ._http.api import Api  # the HTTP stack and requests, with the first Client
        from ._http.client_config import client_config
        from ._http.transport import RequestsTransport

        if token_source is not None:  # a cassette that only replays asks it nothing
            token_source = wrapped_token_source(token_source)
        self.config: ClientConfig = client_config(
            api_key,
            token_source=token_source,
            workspace=workspace,
            base_url=base_url,
            timeout=renamed_argument(
                request_timeout, timeout, old="timeout", new="request_timeout", where="Client"
            ),
            max_retries=max_retries,
            stream_idle_timeout=stream_idle_timeout,
            stream_reconnects=stream_reconnects,
            max_workers=max_workers,
            tool_timeout=tool_timeout,
            max_event_bytes=max_event_bytes,
        )
        if transport is not None and http_session is not None:
            raise ConfigurationError("pass either http_session= or transport=, not both")
        transport = transport or RequestsTransport(self.config.base_url, session=http_session)
        self._api = Api(self.config, wrapped(transport), token_source=token_source)
        telemetry = Telemetry(tracer_provider, meter_provider, self.config.base_url)
        self.runs: Runs = Runs(self._api, telemetry)
        """Runs: ``start``, ``get``, ``list``, ``cancel``, ``attach``."""
        self.sessions: Sessions = Sessions(self._api, telemetry)
        """Sessions: ``create``, ``get``, ``list``, ``end``, ``events``, ``resume``."""
        self.feedback: Feedbacks = Feedbacks(self._api)
        """Feedback on runs: ``create``, ``list``."""
        self.models: Models = Models(self._api)
        """The models this workspace can run: ``list``."""

    def __repr__(self) -> str:
        credential = (
            f"api_key={mask(self.config.api_key)}"
            if self.config.api_key is not None
            else "token_source=***"
        )
        return (
            f"<Client workspace={self.config.workspace!r} base_url={self.config.base_url!r} "
            f"{credential}>"
        )

    @property
    def rate_limits(self) -> RateLimits:
        """The latest rate-limit state per bucket, from every response's headers.

        A read-only mapping: ``client.rate_limits["runs"].remaining``. Before a
        run starts, a ``runs`` bucket known to be empty is waited out (up to
        the retry deadline) instead of spending a request on a certain 429.
        """
        return self._api.rate_limits

    @property
    def evals(self) -> Evals:
        """Evaluations of this workspace: datasets, starting, following, comparing.

        See :mod:`mantyx_sync.evals`.
        """
        from .evals import Evals

        return Evals(self._api)

    # The 0.1 flat methods, each now a resource's: they warn, then call it. Declared
    # (what the resource method returns) so that type checkers agree on them.
    get_run: Callable[..., RunSnapshot] = moved(Runs.get, "get_run")
    cancel: Callable[..., None] = moved(Runs.cancel, "cancel")
    start_run: Callable[..., Run[Any]] = moved(Runs.start, "start_run")
    attach_run: Callable[..., Run[str]] = moved(Runs.attach, "attach_run")
    list_runs: Callable[..., Listing[RunSummary]] = moved(Runs.list, "list_runs")
    list_feedback: Callable[..., Listing[Feedback]] = moved(Feedbacks.list, "list_feedback")
    create_session: Callable[..., Session] = moved(Sessions.create, "create_session")
    get_session: Callable[..., SessionInfo] = moved(Sessions.get, "get_session")
    end_session: Callable[..., None] = moved(Sessions.end, "end_session")
    list_sessions: Callable[..., Listing[SessionSummary]] = moved(Sessions.list, "list_sessions")
    session_events: Callable[..., EventReplay] = moved(Sessions.events, "session_events")
    resume_session: Callable[..., Session] = moved(Sessions.resume, "resume_session")
    # client.models() and client.feedback(...) are the resources' deprecated __call__.

    def close(self) -> None:
        """Close pooled connections. The client must not be used afterwards."""
        self._api.close()


class _Shared:
    """The process's default client: made by the first ``Agent()`` given none,
    closed when the last such agent is closed (or at exit). A forked child
    inherits it: the transport builds the child its own pool."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.client: Client | None = None
        self.users = 0

    def acquire(self) -> Client:
        with self.lock:
            if self.client is None:
                self.client = Client()
            self.users += 1
            return self.client

    def release(self, client: Client) -> None:
        with self.lock:
            if client is not self.client:
                return
            self.users -= 1
            if self.users > 0:
                return
            self.client = None
        client.close()

    def close(self) -> None:
        with self.lock:
            client, self.client, self.users = self.client, None, 0
        if client is not None:
            client.close()

    def after_fork(self) -> None:
        self.lock = threading.Lock()  # another thread may have held it at the fork


_SHARED = _Shared()
atexit.register(_SHARED.close)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_SHARED.after_fork)


def shared_client() -> Client:
    """The process's default :class:`Client` (from the environment), one more user of it.

    :raises ConfigurationError: the environment lacks the key or workspace.
    """
    return _SHARED.acquire()


def release_shared_client(client: Client) -> None:
    """One user fewer of the default client ``client``; the last closes it."""
    _SHARED.release(client)
