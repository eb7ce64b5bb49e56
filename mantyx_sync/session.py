"""The :class:`Session` facade: a conversation whose runs share history."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from ._base.argcheck import checked
from ._base.handout import handed_out
from ._engine.resolution import ResolvedTools, resolve_tools
from ._http.api import Api
from ._http.routes import end_session, get_session, session_event_pages
from .controls import plan_only
from .errors import ArgumentTypeError, renamed_argument
from .messages import AttachmentLike, Message, MessageLike, turn_input
from .results import OutputT, RunResult, SessionInfo
from .run import Run, RunOptions, start_run
from .spec import (
    MessageOverrides,
    OutputSchema,
    OverrideKeywords,
    keyword_docs,
    typed_output,
)
from .types import UnsetType

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

    from .events import AnyRunEvent
    from .history import EventReplay

__all__ = ["Session"]

log: logging.Logger = logging.getLogger(__name__)


@handed_out("Agent.session(), client.sessions.create() and client.sessions.resume() return one")
class Session:
    """A MANTYX agent session: each :meth:`run` sees the conversation so far.

    Leaving its ``with`` block ends it on the server (``DELETE``), cancelling an in-flight run,
    and closes its MCP/A2A connections.

    Each message may override the session's tools, reasoning level, output
    schema, run guards and metadata for that one run.

    Thread-safety: runs of one session are sequential on the server; start
    them one at a time. :meth:`end` may be called from any thread.

    Example::

        with agent.session() as chat:
            chat.run("My name is Ada.")
            print(chat.run("What is my name?").text)
    """

    def __init__(
        self,
        api: Api,
        session_id: str,
        *,
        tools: ResolvedTools,
        options: RunOptions,
    ) -> None:
        self.id: str = session_id
        self._api = api
        self._tools = tools
        self._options = attrs.evolve(options, session_id=session_id)
        self._ended = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Session {self.id}{' ended' if self._ended else ''}>"

    @keyword_docs(OverrideKeywords)
    def start(
        self,
        prompt: str | None = None,
        *,
        messages: Sequence[MessageLike] | None = None,
        attachments: Sequence[AttachmentLike] | None = None,
        run_timeout: float | None = None,
        timeout: float | None = None,
        output_type: type[OutputT] | None = None,
        **overrides: Unpack[OverrideKeywords],
    ) -> Run[OutputT]:
        """Send a message and return the live :class:`Run` (see :meth:`Agent.start`);
        :meth:`stream` is the same call, for iterating its events.

        ``attachments`` go on the last user message (see :class:`~mantyx_sync.Attachment`).
        Spec keywords given apply to this one run only.

        :param run_timeout: seconds the run may take, as for :meth:`Agent.start`
            (``None``: no limit); past it the run is cancelled and
            :class:`~mantyx_sync.RunTimeoutError` raised. :meth:`run` and
            :meth:`stream` take it too. (``timeout=`` is its deprecated name.)
        :param output_type: ask for the reply as this class, as
            :meth:`Agent.start` does (it replaces ``output_schema`` for this run).
        :raises SpecError: bad input or override (nothing is sent).
        """
        run_timeout = renamed_argument(
            run_timeout, timeout, old="timeout", new="run_timeout", where="Session.start"
        )
        # Checks the limit first; the run's time counts from this call.
        options = attrs.evolve(self._options, timeout=run_timeout, since=time.monotonic())
        body = turn_input(prompt, messages, attachments, streamed=True)
        schema = typed_output(output_type)
        if schema is not None:
            overrides["output_schema"] = schema
            options = attrs.evolve(options, output_type=output_type)
        given = MessageOverrides.build(**overrides)
        if isinstance(given.tools, UnsetType):
            resolved, owns = self._tools, False
            body.update(given.to_body(None))
        else:
            resolved, owns = resolve_tools(given.tools), True
            body.update(given.to_body(resolved.refs))
        if isinstance(given.output_schema, OutputSchema):
            options = attrs.evolve(options, output_schema=given.output_schema)
        return start_run(self._api, body, resolved, options, owns_tools=owns)  # type: ignore[return-value]

    @checked(ArgumentTypeError)
    def run(
        self,
        prompt: str | None = None,
        *,
        messages: Sequence[MessageLike] | None = None,
        attachments: Sequence[AttachmentLike] | None = None,
        on_event: Callable[[AnyRunEvent], None] | None = None,
        run_timeout: float | None = None,
        timeout: float | None = None,
        output_type: type[OutputT] | None = None,
        **overrides: Unpack[OverrideKeywords],
    ) -> RunResult[OutputT]:
        """Send a message and block until the run ends; ``run_timeout`` and spec
        keywords as for :meth:`start`.

        :raises RunError: the run failed (``RunCancelledError`` if cancelled).
        :raises RunTimeoutError: the run did not end within ``run_timeout``; it was cancelled.
        :raises OutputParseError: the reply does not fit ``output_type``.
        """
        run_timeout = renamed_argument(
            run_timeout, timeout, old="timeout", new="run_timeout", where="Session.run"
        )
        with self.start(
            prompt,
            messages=messages,
            attachments=attachments,
            run_timeout=run_timeout,
            output_type=output_type,
            **overrides,
        ) as run:
            return run.wait(on_event)

    stream = start  # the Run is iterated for its events: see start()

    def run_plan(
        self,
        prompt: str | None = None,
        *,
        messages: Sequence[MessageLike] | None = None,
        steps: Sequence[str] | None = None,
        brief: str | None = None,
    ) -> RunResult:
        """Make a plan for this turn without carrying it out (see :meth:`Agent.run_plan`).

        The plan is not added to the session's history.
        """
        with self.start(
            prompt, messages=messages, plan=plan_only(None, steps=steps, brief=brief)
        ) as run:
            return run.wait()

    def info(self) -> SessionInfo:
        """The session as the server has it (status, metadata, messages)."""
        return SessionInfo.from_wire(get_session(self._api, self.id) or {})

    def history(self) -> list[Message]:
        """The conversation so far, as :class:`~mantyx_sync.Message` values
        (``role``, ``content``, ``attachments``): the shape ``messages=`` takes,
        and what :meth:`info` and each replayed :meth:`events` item hold."""
        return list(self.info().messages)

    def events(self, *, last: int | None = None, full: bool = False) -> EventReplay:
        """The conversation as the server replays it, oldest first.

        Unlike :meth:`history`, this pages through the whole session
        (``GET /agent-sessions/{id}/events``) and yields typed
        :class:`~mantyx_sync.history.SessionEvent` values.

        :param last: only the newest ``last`` events (default: all).
        :param full: whole texts instead of the server's shortened ones.
        """
        from .history import replay_session  # history is off a plain run's import path

        return replay_session(session_event_pages(self._api, self.id), last=last, full=full)

    def end(self) -> None:
        """End the session on the server and close its tool connections. Idempotent."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
        try:
            end_session(self._api, self.id)
        finally:
            self._tools.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.end()
