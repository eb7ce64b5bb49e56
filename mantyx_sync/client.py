"""The :class:`Client` facade: credentials, the connection pool, and plain API calls."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._base.argcheck import checked
from ._base.redact import mask
from ._base.transport_hook import wrapped
from ._base.types import Closing
from ._engine.executor import ToolActivity
from ._models.checks import check_text
from .errors import ArgumentTypeError, ConfigurationError, SpecError, renamed_argument
from .messages import AttachmentLike, MessageLike, turn_input
from .spec import AgentSpec, OutputSchema, SpecKeywords, keyword_docs

if TYPE_CHECKING:
    import requests
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

    # The engine (requests, the HTTP stack, runs and sessions) is imported by the
    # first Client and the methods that use it, evaluations, history and
    # feedback by theirs: a plain script's import pays for none of them
    # (benchmarks/README.md, row 4b).
    from ._engine.evals import Evals
    from ._http.auth import TokenSource
    from ._http.config import ClientConfig
    from ._http.ratelimit import RateLimits
    from ._http.transport import Transport
    from .feedback import Feedback
    from .history import EventReplay, Listing, RunSummary, SessionSummary
    from .results import ModelCatalog, RunSnapshot, SessionInfo
    from .run import Run, RunOptions
    from .session import Session

__all__ = ["Client"]


def _transport_names() -> dict[str, Any]:
    """What ``Client()``'s argument types name from the transport, loaded by its first call."""
    import requests

    from ._http.transport import Transport

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

    Example::

        with mantyx_sync.Client() as client:
            print(client.models().default_model_id)
    """

    @checked(ArgumentTypeError, defer=("token_source",), names=_transport_names)
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
        timeout: float | tuple[float, float] | None = None,
    ) -> None:
        from ._http.api import Api  # the HTTP stack and requests, with the first Client
        from ._http.client_config import client_config
        from ._http.transport import RequestsTransport

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
        from ._engine.evals import Evals

        return Evals(self._api)

    def models(self) -> ModelCatalog:
        """The models this workspace can run (``GET /models``).

        :raises APIStatusError: e.g. :class:`~mantyx_sync.AuthError` for a bad key.
        """
        from ._http.routes import models
        from .results import ModelCatalog

        return ModelCatalog.from_wire(models(self._api) or {})

    def get_run(self, run_id: str) -> RunSnapshot:
        """A run's current state without following its events (``GET /agent-runs/{id}``)."""
        from ._http.routes import get_run
        from .results import RunSnapshot

        return RunSnapshot.from_wire(get_run(self._api, run_id) or {})

    def cancel(self, run_id: str) -> None:
        """Cancel a run (idempotent). Its stream ends with a ``cancelled`` event."""
        from ._http.routes import cancel_run

        cancel_run(self._api, run_id)

    @keyword_docs(SpecKeywords)
    @checked(ArgumentTypeError)
    def create_session(
        self,
        spec: AgentSpec | None = None,
        *,
        max_workers: int | None = None,
        on_tool: Callable[[ToolActivity], None] | None = None,
        **fields: Unpack[SpecKeywords],
    ) -> Session:
        """Create a session (``POST /agent-sessions``) with these defaults for every message.

        Client-resolved tools are connected now and stay open until the session ends.

        :param spec: a prepared :class:`~mantyx_sync.AgentSpec`; spec keywords
            given replace its fields.
        :raises SpecError: the spec breaks a documented limit (nothing is sent).
        """
        from ._engine.resolution import resolve_tools
        from ._http.routes import create_session
        from .session import Session

        if spec is None:
            spec = AgentSpec.build(**fields)
        elif fields:
            spec = spec.replace(**fields)
        spec.check_session()
        resolved = resolve_tools(spec.tools)
        try:
            session_id = create_session(self._api, spec.to_body(resolved.refs))
        except BaseException:
            resolved.close()
            raise
        options = self._run_options(max_workers, on_tool, spec.output_schema)
        return Session(self._api, session_id, tools=resolved, options=options)

    @checked(ArgumentTypeError)
    def start_run(
        self,
        spec: AgentSpec,
        prompt: str | None = None,
        *,
        messages: Sequence[MessageLike] | None = None,
        attachments: Sequence[AttachmentLike] | None = None,
        max_workers: int | None = None,
        on_tool: Callable[[ToolActivity], None] | None = None,
        run_timeout: float | None = None,
    ) -> Run:
        """Start a one-shot run of ``spec`` (``POST /agent-runs``); see :meth:`Agent.start`.

        Client-resolved tools are connected first and closed when the run ends.

        :raises SpecError: bad input (nothing is sent).
        :raises ToolResolutionError: an MCP server or A2A peer is unreachable.
        """
        from ._engine.resolution import resolve_tools
        from .run import start_run

        body = turn_input(prompt, messages, attachments, instructed=spec.instructed, streamed=True)
        options = self._run_options(max_workers, on_tool, spec.output_schema, run_timeout)
        resolved = resolve_tools(spec.tools)
        body.update(spec.to_body(resolved.refs))
        return start_run(self._api, body, resolved, options, owns_tools=True)

    @checked(ArgumentTypeError)
    def resume_session(
        self,
        session_id: str,
        *,
        tools: Sequence[Any] = (),
        output_schema: OutputSchema | Mapping[str, Any] | None = None,
        max_workers: int | None = None,
        on_tool: Callable[[ToolActivity], None] | None = None,
    ) -> Session:
        """Re-attach to an existing session, e.g. in a new process.

        The server keeps tool *definitions*, not handlers: pass the same
        ``tools`` again so this process can answer their calls.

        :raises NotFoundError: the session does not exist.
        """
        from ._engine.resolution import resolve_tools
        from .session import Session

        options = self._run_options(max_workers, on_tool, output_schema)  # checked before sending
        self.get_session(session_id)
        return Session(self._api, session_id, tools=resolve_tools(tools), options=options)

    @checked(ArgumentTypeError)
    def attach_run(
        self,
        run_id: str,
        *,
        tools: Sequence[Any] = (),
        output_schema: OutputSchema | Mapping[str, Any] | None = None,
        max_workers: int | None = None,
        on_tool: Callable[[ToolActivity], None] | None = None,
        settle: float = 0.5,
    ) -> Run:
        """Follow a run that is already going, e.g. after the process that started
        it died, and answer its pending local tool calls with ``tools``.

        The run's event log is read first, until it has been quiet for ``settle``
        seconds, so that a call already answered (by any process) is never run
        again; then the returned :class:`Run` replays those events and goes on
        live. Iterate it or :meth:`Run.wait` as usual.

        :raises NotFoundError: the run does not exist.
        """
        from ._engine.resolution import resolve_tools
        from .run import attach_run

        options = self._run_options(max_workers, on_tool, output_schema)
        return attach_run(self._api, run_id, resolve_tools(tools), options, settle=settle)

    def _run_options(
        self,
        max_workers: int | None,
        on_tool: Callable[[ToolActivity], None] | None,
        output_schema: OutputSchema | Mapping[str, Any] | None,
        timeout: float | None = None,
    ) -> RunOptions:
        from .run import RunOptions

        return RunOptions(
            max_workers=max_workers or self.config.max_workers,
            tool_timeout=self.config.tool_timeout,
            on_tool=on_tool,
            output_schema=None if output_schema is None else OutputSchema.coerce(output_schema),
            timeout=timeout,
        )

    def list_runs(
        self,
        *,
        status: str | None = None,
        model_id: str | None = None,
        agent_id: str | None = None,
        metadata: Mapping[str, str] | None = None,
        limit: int | None = None,
        include_total: bool = False,
        max_items: int | None = None,
    ) -> Listing[RunSummary]:
        """Past runs, newest first (``GET /agent-runs``), as a lazy :class:`Listing`.

        Each page is one request, made only when iteration reaches it.

        :param metadata: only runs whose metadata has all these ``key: value`` pairs.
        :param limit: page size sent to the server (1-200; default: the server's 50).
        :param include_total: ask the server to count the matches (:attr:`Listing.total`).
        :param max_items: stop after this many runs.
        :raises SpecError: a filter is invalid (nothing is sent).
        """
        from ._http.routes import run_pages
        from ._models.paging import paged
        from .history import RunSummary, metadata_query

        params: dict[str, Any] = {}
        for key, value, path in (
            ("status", status, "status"),
            ("modelId", model_id, "model_id"),
            ("agentId", agent_id, "agent_id"),
        ):
            if value is not None:
                params[key] = check_text(value, path)
        params.update(metadata_query(metadata))
        if not isinstance(include_total, bool):
            raise SpecError(f"must be True or False, got {include_total!r}", path="include_total")
        if include_total:
            params["includeTotal"] = 1
        pages = run_pages(self._api)
        return paged(pages, params, "runs", RunSummary.from_wire, limit=limit, max_items=max_items)

    def list_sessions(
        self,
        *,
        status: str | None = None,
        metadata: Mapping[str, str] | None = None,
        limit: int | None = None,
        max_items: int | None = None,
    ) -> Listing[SessionSummary]:
        """Sessions, newest first (``GET /agent-sessions``), as a lazy :class:`Listing`.

        :param status: ``"active"`` or ``"ended"``.
        :param metadata: only sessions whose metadata has all these pairs.
        :param limit: page size sent to the server (1-200).
        :param max_items: stop after this many sessions.
        :raises SpecError: a filter is invalid (nothing is sent).
        """
        from ._http.routes import session_pages
        from ._models.paging import paged
        from .history import SessionSummary, metadata_query

        if status is not None and status not in ("active", "ended"):
            raise SpecError(f"must be 'active' or 'ended', got {status!r}", path="status")
        params: dict[str, Any] = {} if status is None else {"status": status}
        params.update(metadata_query(metadata))
        build = SessionSummary.from_wire
        pages = session_pages(self._api)
        return paged(pages, params, "sessions", build, limit=limit, max_items=max_items)

    def session_events(
        self, session_id: str, *, last: int | None = None, full: bool = False
    ) -> EventReplay:
        """A session's conversation, oldest first (``GET /agent-sessions/{id}/events``).

        :param last: only the newest ``last`` events (default: all of them).
        :param full: whole texts instead of the server's shortened ones.
        :raises SpecError: an argument is invalid (nothing is sent).
        """
        from ._http.routes import session_event_pages
        from .history import replay_session

        return replay_session(session_event_pages(self._api, session_id), last=last, full=full)

    def feedback(
        self,
        run_id: str,
        verdict: str,
        explanation: str | None = None,
        content_snapshot: Any = None,
    ) -> Feedback:
        """Thumbs up or down on a run (``POST /agent-runs/{id}/feedback``).

        A run has one feedback: the first call creates it (``created`` is
        ``True``), later calls replace it, so a retry is harmless.

        :param verdict: ``"up"`` or ``"down"``.
        :param explanation: why, at most 8000 characters.
        :param content_snapshot: what was judged, e.g. the reply text (JSON).
        :raises SpecError: bad arguments (nothing is sent).
        :raises NotFoundError: no such run.
        """
        from ._http.routes import feedback_poster
        from .feedback import send_feedback

        poster = feedback_poster(self._api)
        return send_feedback(
            poster, run_id, verdict, explanation=explanation, content_snapshot=content_snapshot
        )

    def list_feedback(
        self,
        *,
        run_id: str | None = None,
        verdict: str | None = None,
        limit: int | None = None,
        max_items: int | None = None,
    ) -> Listing[Feedback]:
        """Feedback given in this workspace (``GET /reply-feedback``), as a lazy :class:`Listing`.

        :param run_id: only this run's feedback.
        :param verdict: only ``"up"`` or only ``"down"``.
        :raises SpecError: bad arguments (nothing is sent).
        """
        from ._http.routes import feedback_pages
        from ._models.paging import paged
        from .feedback import Feedback, wire_verdict

        params: dict[str, Any] = {}
        if run_id is not None:
            params["agentRunId"] = check_text(run_id, "run_id")
        if verdict is not None:
            params["verdict"] = wire_verdict(verdict)
        build = Feedback.from_wire
        pages = feedback_pages(self._api)
        return paged(pages, params, "feedback", build, limit=limit, max_items=max_items)

    def get_session(self, session_id: str) -> SessionInfo:
        """A session's state and history (``GET /agent-sessions/{id}``)."""
        from ._http.routes import get_session
        from .results import SessionInfo

        return SessionInfo.from_wire(get_session(self._api, session_id) or {})

    def end_session(self, session_id: str) -> None:
        """End a session (``DELETE``); an in-flight run is cancelled. Idempotent."""
        from ._http.routes import end_session

        end_session(self._api, session_id)

    def close(self) -> None:
        """Close pooled connections. The client must not be used afterwards."""
        self._api.close()
