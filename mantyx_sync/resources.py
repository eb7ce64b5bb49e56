"""What a :class:`~mantyx_sync.Client` reaches, one attribute per kind of thing:
``client.runs``, ``client.sessions``, ``client.feedback``, ``client.models``
(and ``client.evals``, :mod:`mantyx_sync.evals`). Every listing is a lazy,
auto-paging :class:`~mantyx_sync.Listing`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ._base.argcheck import checked
from ._base.handout import handed_out
from ._models.checks import check_text
from .errors import ArgumentTypeError, SpecError, deprecated
from .messages import AttachmentLike, MessageLike, turn_input
from .spec import AgentSpec, OutputSchema, SpecKeywords, keyword_docs, typed_output
from .tools import ToolActivity, ToolLike

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

    # Runs, sessions, listings and feedback load with the first method that
    # uses them: a plain script's import pays for none of them.
    from ._engine.tracing import Telemetry
    from ._http.api import Api
    from .feedback import Feedback
    from .history import EventReplay, Listing, RunSummary, SessionSummary
    from .results import ModelCatalog, OutputT, RunSnapshot, SessionInfo
    from .run import Run, RunOptions
    from .session import Session

__all__ = ["Feedbacks", "Models", "Runs", "Sessions"]

P = ParamSpec("P")
R = TypeVar("R")


_ON_CLIENT = {"Runs": "runs", "Sessions": "sessions", "Feedbacks": "feedback"}


def moved(method: Callable[Concatenate[Any, P], R], old: str) -> Callable[..., R]:
    """A deprecated ``Client.<old>()`` that warns, naming the resource method that
    replaced it (``client.runs.get()``), then calls it: same arguments and result."""
    resource = _ON_CLIENT[method.__qualname__.split(".")[0]]
    new = f"client.{resource}.{method.__name__}()"

    def forward(self: object, *args: P.args, **kwargs: P.kwargs) -> R:
        deprecated(f"Client.{old}()", new)
        return method(getattr(self, resource), *args, **kwargs)

    forward.__name__ = forward.__qualname__ = old
    forward.__doc__ = f"Deprecated: use ``{new}``, which takes the same arguments."
    forward.__wrapped__ = method  # type: ignore[attr-defined]  # inspect.signature() shows it
    return forward


class _Resource:
    """What every resource holds: the API it calls and the telemetry it reports to."""

    def __init__(self, api: Api, telemetry: Telemetry | None = None) -> None:
        self._api = api
        self._telemetry = telemetry

    def _run_options(
        self,
        max_workers: int | None,
        on_tool: Callable[[ToolActivity], None] | None,
        output_schema: OutputSchema | Mapping[str, Any] | None,
        run_timeout: float | None = None,
        output_type: type[Any] | None = None,
    ) -> RunOptions:
        from .run import RunOptions

        config = self._api.config
        return RunOptions(
            max_workers=max_workers or config.max_workers,
            tool_timeout=config.tool_timeout,
            on_tool=on_tool,
            output_schema=None if output_schema is None else OutputSchema.coerce(output_schema),
            timeout=run_timeout,
            telemetry=self._telemetry,
            output_type=output_type,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} workspace={self._api.config.workspace!r}>"


@handed_out("use the one a Client has, client.runs")
class Runs(_Resource):
    """Runs of a workspace: ``client.runs``.

    Thread-safety: stateless; call it from any thread.

    Example::

        for summary in client.runs.list(status="failed", max_items=20):
            print(summary.id, summary.error)
    """

    @checked(ArgumentTypeError)
    def start(
        self,
        spec: AgentSpec,
        prompt: str | None = None,
        *,
        messages: Sequence[MessageLike] | None = None,
        attachments: Sequence[AttachmentLike] | None = None,
        max_workers: int | None = None,
        on_tool: Callable[[ToolActivity], None] | None = None,
        run_timeout: float | None = None,
        output_type: type[OutputT] | None = None,
    ) -> Run[OutputT]:
        """Start a one-shot run of ``spec`` (``POST /agent-runs``); see :meth:`Agent.start`.

        Client-resolved tools are connected first and closed when the run ends.

        :raises SpecError: bad input (nothing is sent).
        :raises ToolResolutionError: an MCP server or A2A peer is unreachable.
        """
        from ._engine.resolution import resolve_tools
        from .run import start_run

        body = turn_input(prompt, messages, attachments, instructed=spec.instructed, streamed=True)
        schema = typed_output(output_type)
        if schema is not None:
            spec = spec.replace(output_schema=schema)
        options = self._run_options(
            max_workers, on_tool, spec.output_schema, run_timeout, output_type
        )
        resolved = resolve_tools(spec.tools)
        body.update(spec.to_body(resolved.refs))
        return start_run(self._api, body, resolved, options, owns_tools=True)  # type: ignore[return-value]

    def get(self, run_id: str) -> RunSnapshot:
        """A run's current state without following its events (``GET /agent-runs/{id}``)."""
        from ._http.routes import get_run
        from .results import RunSnapshot

        return RunSnapshot.from_wire(get_run(self._api, run_id) or {})

    def list(
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
        from .history import RunSummary, metadata_query
        from .paging import filters, paged

        params = filters(status=status, model_id=model_id, agent_id=agent_id)
        params.update(metadata_query(metadata))
        if not isinstance(include_total, bool):
            raise SpecError(f"must be True or False, got {include_total!r}", path="include_total")
        if include_total:
            params["includeTotal"] = 1
        pages = run_pages(self._api)
        return paged(pages, params, "runs", RunSummary.from_wire, limit=limit, max_items=max_items)

    def cancel(self, run_id: str) -> None:
        """Cancel a run (idempotent). Its stream ends with a ``cancelled`` event."""
        from ._http.routes import cancel_run

        cancel_run(self._api, run_id)

    @checked(ArgumentTypeError)
    def attach(
        self,
        run_id: str,
        *,
        tools: Sequence[ToolLike] = (),
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


@handed_out("use the one a Client has, client.sessions")
class Sessions(_Resource):
    """Sessions of a workspace: ``client.sessions``.

    Thread-safety: stateless; call it from any thread.

    Example::

        with client.sessions.create(system_prompt="You are terse.") as chat:
            print(chat.run("Hello").text)
    """

    @keyword_docs(SpecKeywords)
    @checked(ArgumentTypeError)
    def create(
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

    def get(self, session_id: str) -> SessionInfo:
        """A session's state and history (``GET /agent-sessions/{id}``)."""
        from ._http.routes import get_session
        from .results import SessionInfo

        return SessionInfo.from_wire(get_session(self._api, session_id) or {})

    def list(
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
        from .history import SessionSummary, metadata_query
        from .paging import paged

        if status is not None and status not in ("active", "ended"):
            raise SpecError(f"must be 'active' or 'ended', got {status!r}", path="status")
        params: dict[str, Any] = {} if status is None else {"status": status}
        params.update(metadata_query(metadata))
        build = SessionSummary.from_wire
        pages = session_pages(self._api)
        return paged(pages, params, "sessions", build, limit=limit, max_items=max_items)

    def end(self, session_id: str) -> None:
        """End a session (``DELETE``); an in-flight run is cancelled. Idempotent."""
        from ._http.routes import end_session

        end_session(self._api, session_id)

    def events(
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

    @checked(ArgumentTypeError)
    def resume(
        self,
        session_id: str,
        *,
        tools: Sequence[ToolLike] = (),
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

        options = self._run_options(max_workers, on_tool, output_schema)  # checked first
        self.get(session_id)
        return Session(self._api, session_id, tools=resolve_tools(tools), options=options)


@handed_out("use the one a Client has, client.feedback")
class Feedbacks(_Resource):
    """Thumbs up or down on runs: ``client.feedback``.

    Thread-safety: stateless; call it from any thread.

    Example::

        result = agent.run("Summarise the ticket")
        client.feedback.create(result.run_id, "up", explanation="spot on")
    """

    def create(
        self,
        run_id: str,
        verdict: str,
        *,
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

    def list(
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
        from .feedback import Feedback, wire_verdict
        from .paging import paged

        params: dict[str, Any] = {}
        if run_id is not None:
            params["agentRunId"] = check_text(run_id, "run_id")
        if verdict is not None:
            params["verdict"] = wire_verdict(verdict)
        build = Feedback.from_wire
        pages = feedback_pages(self._api)
        return paged(pages, params, "feedback", build, limit=limit, max_items=max_items)

    def __call__(
        self,
        run_id: str,
        verdict: str,
        explanation: str | None = None,
        content_snapshot: Any = None,
    ) -> Feedback:
        """Deprecated: ``client.feedback(...)`` is ``client.feedback.create(...)``."""
        deprecated("client.feedback(...)", "client.feedback.create(...)")
        return self.create(
            run_id, verdict, explanation=explanation, content_snapshot=content_snapshot
        )


@handed_out("use the one a Client has, client.models")
class Models(_Resource):
    """The models a workspace can run: ``client.models``.

    Example::

        print(client.models.list().default_model_id)
    """

    def list(self) -> ModelCatalog:
        """The models this workspace can run (``GET /models``).

        :raises APIStatusError: e.g. :class:`~mantyx_sync.AuthError` for a bad key.
        """
        from ._http.routes import models
        from .results import ModelCatalog

        return ModelCatalog.from_wire(models(self._api) or {})

    def __call__(self) -> ModelCatalog:
        """Deprecated: ``client.models()`` is ``client.models.list()``."""
        deprecated("client.models()", "client.models.list()")
        return self.list()
