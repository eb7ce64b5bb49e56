"""The run handle: its iteration reads the stream on the caller's thread and hands
each ``local_tool_call`` to a :class:`~mantyx_sync._engine.executor.ToolExecutor`.
"""

from __future__ import annotations

import collections
import logging
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic

import attrs

from ._base.argcheck import checked
from ._base.handout import handed_out
from ._base.types import ReleaseOnce
from ._engine.calls import note_answer, submit_call
from ._engine.executor import ToolExecutor
from ._engine.outcome import Followed, failure_of
from ._engine.progress import OBSERVED_TYPES, RunProgress
from ._engine.resolution import ResolvedTools
from ._engine.tracing import NO_TRACE, SPAN_EVENT_TYPES, RunTrace, Telemetry
from ._http.api import Api
from ._http.poster import PostGate, ResultPoster
from ._http.routes import cancel_run, create_run, feedback_poster, run_stream
from ._http.stream import RunStream, check_timeout, read_backlog
from .errors import (
    ArgumentTypeError,
    MantyxError,
    RunCancelledError,
    RunError,
    RunTimeoutError,
    renamed_argument,
)
from .events import TERMINAL_TYPES, ModelInfo, RunEvent, outcome_of
from .results import FeedbackLink, OutputT, RunResult
from .spec import OutputSchema
from .tools import ToolActivity

if TYPE_CHECKING:
    from .events import AnyRunEvent, TaskPlan
    from .text import TextPiece

__all__ = ["Run"]

log: logging.Logger = logging.getLogger(__name__)

# The event types a run does more with than keep (see Run._act).
_ACTED_ON: frozenset[str] = frozenset(
    {"local_tool_call", "local_tool_result_in", *OBSERVED_TYPES, *TERMINAL_TYPES, *SPAN_EVENT_TYPES}
)


@attrs.frozen(kw_only=True)
class RunOptions:
    """Per-run settings the engine needs beyond the request body."""

    max_workers: int
    tool_timeout: float | None = None
    on_tool: Callable[[ToolActivity], None] | None = None
    output_schema: OutputSchema | None = None
    output_type: type[Any] | None = None
    session_id: str | None = None
    #: Seconds the run may take (``None``: no limit), counted from ``since``.
    timeout: float | None = attrs.field(default=None, validator=lambda _o, _a, v: check_timeout(v))
    #: The Client's tracing and metrics (``None``: neither).
    telemetry: Telemetry | None = None
    #: When the call that starts the run began (``time.monotonic()``): the time
    #: spent connecting its tools and creating it counts against ``timeout``.
    since: float = attrs.field(factory=time.monotonic)


def start_run(
    api: Api,
    body: Mapping[str, Any],
    tools: ResolvedTools,
    options: RunOptions,
    *,
    owns_tools: bool,
) -> Run:
    """Start a run (a message of ``options.session_id`` when set) and return the live :class:`Run`.

    ``owns_tools``: close ``tools``' connections when the run ends (one-shot
    runs); a session keeps its own open instead.
    """
    run_id = None
    telemetry = options.telemetry
    trace = NO_TRACE if telemetry is None else telemetry.start_run(body, options.session_id)
    deadline = None if options.timeout is None else options.since + options.timeout
    try:
        try:
            if deadline is not None and time.monotonic() >= deadline:
                raise RunTimeoutError("the time ran out before the run was created")
            run_id, stream_path = create_run(
                api,
                dict(body),
                session_id=options.session_id,
                deadline=deadline,
                headers=trace.headers(),
            )
        except TimeoutError as exc:  # the request's (RequestTimeoutError) or the run's
            if deadline is None or time.monotonic() < deadline:
                raise  # the request's own limit, not the run's
            raise RunTimeoutError(
                f"the run did not start within its timeout of {options.timeout:g}s "
                f"(connecting its tools and creating it count): {exc}; pass a larger "
                "timeout= (or timeout=None for no limit)"
            ) from exc
        log.debug("started run %s", run_id)
        return Run(
            api,
            run_id,
            stream_path,
            tools=tools,
            options=options,
            owns_tools=owns_tools,
            trace=trace,
        )
    except BaseException as exc:
        trace.end(error_type=_error_type(exc), error=exc)
        # Ctrl-C between the server's answer and the handle: do not leave the run burning.
        if run_id is not None:
            cancel_run(api, run_id, best_effort=True)
        if owns_tools:
            tools.close()
        raise


def _error_type(exc: BaseException) -> str:
    """How a run's span names the exception that ended it."""
    return "timeout" if isinstance(exc, TimeoutError) else type(exc).__qualname__


def _abandon(api: Api, run_id: str, resources: ReleaseOnce) -> None:
    log.warning("run %s was dropped before it ended without close(); cancelling it", run_id)
    cancel_run(api, run_id, best_effort=True)
    resources.release()


def attach_run(
    api: Api,
    run_id: str,
    tools: ResolvedTools,
    options: RunOptions,
    *,
    settle: float,
) -> Run:
    """Follow a run that is already going and answer its still-pending tool calls.

    The run's log is read first (until it goes quiet for ``settle`` seconds), so
    a call already answered — by this or another process — is never run again.
    """
    try:
        path = run_stream(run_id)
        backlog = read_backlog(api, path, run_id=run_id, quiet=settle)
        return Run(
            api, run_id, path, tools=tools, options=options, owns_tools=True, backlog=backlog
        )
    except BaseException:
        tools.close()
        raise


@handed_out(
    "Agent.start() and Agent.stream() return one, as do a Session's start() and "
    "stream(), Runs.start and Runs.attach"
)
class Run(Followed, Generic[OutputT]):
    """A live agent run: iterate it for events, :meth:`wait` for the result
    (a ``RunResult[T]`` for a run started with ``output_type=T``).

    The ``id`` is known as soon as the server accepted the run, before any
    event. Iterating yields every :class:`~mantyx_sync.RunEvent` once, in ``seq``
    order, including the terminal one; after an ``error`` terminal or a
    non-success ``result`` the next step raises :class:`~mantyx_sync.RunError`,
    after ``cancelled`` :class:`~mantyx_sync.RunCancelledError` — a failure is never
    silent. Local tool calls are answered on a thread pool while you iterate.

    Stopping early: leaving a ``with run:`` block, or calling :meth:`close`,
    before the terminal event cancels the run on the server (best effort) and
    closes the connection; nothing is left burning tokens. A Run dropped
    without either is cancelled the same way when it is garbage-collected. Ctrl-C while
    iterating or waiting does the same, then re-raises ``KeyboardInterrupt``.
    So does running out of time: past the ``run_timeout=`` given when the run was
    started, or to :meth:`wait`, the run is cancelled and
    :class:`~mantyx_sync.RunTimeoutError` raised.

    Thread-safety: iterate or :meth:`wait` from one thread; :meth:`cancel` and
    :meth:`close` may be called from any thread (a Flask "stop" button, a
    watchdog).

    Example::

        with agent.start("Summarise the report") as run:
            print("started", run.id)
            for event in run:
                if event.type == "assistant_delta":
                    print(event.text, end="", flush=True)
        print(run.result.text)
    """

    def __init__(
        self,
        api: Api,
        run_id: str,
        stream_path: str,
        *,
        tools: ResolvedTools,
        options: RunOptions,
        owns_tools: bool,
        backlog: Sequence[AnyRunEvent] = (),
        trace: RunTrace = NO_TRACE,
    ) -> None:
        self.id: str = run_id
        self.session_id: str | None = options.session_id
        self._api = api
        self._options = options
        self._tools = tools
        self._owns_tools = owns_tools
        self._events: list[AnyRunEvent] = []
        self._progress = RunProgress()
        self._result: RunResult[OutputT] | None = None
        self._failure: RunError | None = None
        self._done = False
        self._trace = trace
        trace.run_id(run_id)
        gate = PostGate()
        poster = ResultPoster(api, run_id, gate=gate)
        self._executor = ToolExecutor(
            tools.registry(),
            poster.post,
            max_workers=options.max_workers,
            default_timeout=options.tool_timeout,
            on_tool=options.on_tool,
            run_label=f"run {run_id}",
            trace=trace,
        )
        self._stream = RunStream(
            api,
            stream_path,
            run_id=run_id,
            last_seq=backlog[-1].seq if backlog else 0,
            timeout=options.timeout,
            started=options.since,
            busy=self._executor.busy,
        )
        # Stepped directly: one Python frame less per event than next(self._stream).
        self._next_event = self._stream.events().__next__
        # Released once, by whoever gets there first; apart from the Run, so the
        # finalizer need not keep it alive. Never waits on a running handler.
        owned = [tools.close] if owns_tools else []
        # A run released before its end (closed, dropped) was cancelled by us.
        self._resources = ReleaseOnce(
            gate.close,
            self._stream.close,
            self._executor.shutdown,
            *owned,
            lambda: trace.end(error_type="cancelled"),
        )
        # A Run dropped mid-stream (``for e in agent.stream(...): break`` without
        # ``with``) is cancelled and released when it is garbage-collected.
        self._finalizer = weakref.finalize(self, _abandon, api, run_id, self._resources)
        self._finalizer.atexit = False
        self._replay: collections.deque[AnyRunEvent] = collections.deque(backlog)
        self._absorb(backlog)

    def _absorb(self, backlog: Sequence[AnyRunEvent]) -> None:
        # Answers first, then calls: a call whose answer is anywhere in the log
        # must never run again (events are delivered at least once).
        for event in backlog:
            note_answer(self._executor, event)
        for event in backlog:
            self._handle(event)

    def __repr__(self) -> str:
        state = "done" if self._done else "running"
        return f"<Run {self.id} {state}, {len(self._events)} events>"

    def _repr_html_(self) -> str:
        # Jupyter: what has arrived so far (see mantyx_sync.notebook.show).
        if self._result is not None:
            return self._result._repr_html_()
        # A snapshot: notebook.show renders while its reader thread appends.
        from ._display.render import render_html, view_of

        return render_html(view_of(self.id, tuple(self._events)))

    def _repr_markdown_(self) -> str:
        if self._result is not None:
            return self._result._repr_markdown_()
        from ._display.render import render_markdown, view_of

        return render_markdown(view_of(self.id, tuple(self._events)))

    @property
    def plan(self) -> TaskPlan | None:
        """The run's task plan as of the latest revision seen (``None`` before any).

        Updated while you iterate; a replayed or out-of-date ``task_plan``
        revision never moves it backwards.
        """
        return self._progress.plan

    @property
    def result(self) -> RunResult[OutputT] | None:
        """The result once the run has ended (also set for failed runs), else ``None``."""
        return self._result

    def __next__(self) -> AnyRunEvent:
        if self._replay:
            # Events read before this handle existed (attach_run), already handled.
            return self._replay.popleft()
        if self._done:
            if self._failure is not None:
                raise self._failure
            raise StopIteration
        try:
            event = self._next_event()
        except StopIteration:
            self._release()
            raise
        except KeyboardInterrupt as exc:
            self._trace.end(error_type=_error_type(exc))
            self._interrupt()
            raise
        except RunTimeoutError as exc:
            self._trace.end(error_type=_error_type(exc), error=exc)
            log.info("run %s: out of time; cancelling it on the server", self.id)
            self.close()
            raise
        except BaseException as exc:
            self._trace.end(error_type=_error_type(exc), error=exc)
            self._release()
            raise
        self._handle(event)
        return event

    def text_stream(self, *, thinking: bool = False) -> Iterator[TextPiece]:
        """Iterate the run as text to print: ``print(piece, end="", flush=True)``.

        Each :class:`~mantyx_sync.TextPiece` is the answer as it streams, the
        line end that closes a model turn (so the next one starts a line of its
        own), or a whole line for a tool call and one for its answer. It reads
        the run as iterating it does: a failed run raises
        :class:`~mantyx_sync.RunError` here too, and :attr:`result` is set at the end.

        :param thinking: include the model's reasoning, as ``"thinking"`` pieces.
        """
        from ._display.text import follow_text  # loaded by the first run shown as text

        return follow_text(self, thinking=thinking)

    @checked(ArgumentTypeError)
    def wait(
        self,
        on_event: Callable[[AnyRunEvent], None] | None = None,
        *,
        run_timeout: float | None = None,
        timeout: float | None = None,
    ) -> RunResult[OutputT]:
        """Read the remaining events and return the result.

        :param on_event: called with each event on this thread as it arrives.
        :param run_timeout: seconds, from now, the run may still take (``None``:
            no new limit; one given when the run was started still holds,
            whichever ends first). ``timeout=`` is its deprecated name.
        :raises RunError: the run failed; ``RunCancelledError`` when it was cancelled.
        :raises RunTimeoutError: the run did not end in time; it was cancelled.
        :raises StreamError: the stream broke and could not be resumed.
        :raises OutputParseError: the reply does not fit the run's ``output_type``.
        """
        run_timeout = renamed_argument(
            run_timeout, timeout, old="timeout", new="run_timeout", where="Run.wait"
        )
        self._stream.limit(run_timeout)
        try:
            for event in self:
                if on_event is not None:
                    on_event(event)
        except KeyboardInterrupt:
            self._interrupt()
            raise
        if self._result is None:
            raise MantyxError(f"run {self.id}: the stream was closed before the run ended")
        if self._result.output_type is not None:
            self._result.output  # noqa: B018 - built now: a reply that does not fit raises here
        return self._result

    def cancel(self) -> None:
        """Ask the server to cancel the run (idempotent). The stream then ends
        with a ``cancelled`` event; iterate or :meth:`wait` to see it."""
        cancel_run(self._api, self.id)

    def close(self, *, cancel: bool = True) -> None:
        """Stop following the run. Before its end, the run is cancelled (best effort).

        ``cancel=False`` leaves it going for another process to :meth:`Runs.attach`
        (a job handed over); answers of calls still running here are never sent.
        Nothing is posted once it has returned: an answer already on the wire is
        waited for (at most its request's timeout).
        """
        # Only the first close cancels: Ctrl-C passes through __next__, wait() and
        # a with-block, and each must not spend another cancel_timeout.
        first = self._finalizer.detach() is not None
        if first and cancel and not self._done:
            cancel_run(self._api, self.id, best_effort=True)
        self._release()

    def _handle(self, event: AnyRunEvent) -> None:
        # Runs for every event: most (deltas) are only kept.
        self._events.append(event)
        if event.type in _ACTED_ON:
            self._act(event)

    def _act(self, event: AnyRunEvent) -> None:
        # Only calls need their typed payload here; structuring every delta
        # would dominate the cost of a fast stream.
        kind = event.type
        if kind == "local_tool_call":
            submit_call(self._executor, event, label=f"run {self.id}")
        elif kind == "local_tool_result_in":
            note_answer(self._executor, event)
        elif kind in OBSERVED_TYPES:
            self._progress.observe(kind, event.data)
        elif kind in TERMINAL_TYPES:
            self._finish(event)
        if kind in SPAN_EVENT_TYPES:
            self._trace.note(event)

    def _finish(self, event: RunEvent) -> None:
        self._done = True
        outcome = outcome_of(event)
        assert outcome is not None  # called for terminal events only
        payload = outcome.payload
        result = RunResult(
            run_id=self.id,
            text=getattr(payload, "text", None) or "",
            events=tuple(self._events),
            tokens=getattr(payload, "tokens", None),
            turns=getattr(payload, "turns", None),
            model=self._final_model(getattr(payload, "model", None)),
            session_id=self.session_id,
            output_schema=self._options.output_schema,
            output_type=self._options.output_type,
            structured_output=getattr(payload, "structured_output", None),
            plan=self._progress.final_plan(getattr(payload, "plan", None)),
            model_fallbacks=self._progress.fallbacks,
            feedback_link=FeedbackLink(feedback_poster(self._api)),
        )
        self._result = result
        self._failure = failure = failure_of(outcome, result, self.id)
        if failure is None:
            self._trace.end(result)
        else:
            code = "cancelled" if isinstance(failure, RunCancelledError) else failure.code
            self._trace.end(result, error_type=code or type(failure).__qualname__, error=failure)
        log.debug("run %s ended with %s", self.id, event.type)
        self._release()
        # The server had every answer it needed: their on_tool "end"s come before the result.
        self._executor.settle()

    def _final_model(self, reported: ModelInfo | None) -> ModelInfo | None:
        # A server that reports no model still said which one it fell back to.
        if reported is None and self._progress.fallbacks:
            return ModelInfo(id=self._progress.fallbacks[-1].model)
        return reported

    def _release(self) -> None:
        if self._done:
            self._finalizer.detach()
        self._resources.release()

    def _interrupt(self) -> None:
        log.info("run %s: interrupted; cancelling it on the server", self.id)
        try:
            self.close()
        except KeyboardInterrupt:  # a second Ctrl-C gives up the cancel: one traceback, not two
            self._release()
