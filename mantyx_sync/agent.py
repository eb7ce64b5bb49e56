"""The :class:`Agent` facade: a spec you run, stream, or talk to in a session."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._base.argcheck import checked
from ._base.types import Closing
from .client import Client, release_shared_client, shared_client
from .controls import plan_only
from .errors import ArgumentTypeError, renamed_argument
from .messages import AttachmentLike, MessageLike
from .spec import AgentSpec, OverrideKeywords, SpecKeywords, keyword_docs
from .tools import ToolActivity

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

    from .events import AnyRunEvent
    from .results import OutputT, RunResult
    from .run import Run
    from .session import Session

__all__ = ["Agent"]


@keyword_docs(SpecKeywords)
class Agent(Closing):
    """An agent spec bound to a :class:`Client`.

    The spec is validated here, when the agent is built, so a bad field fails
    with :class:`~mantyx_sync.SpecError` before anything is sent.

    Without a ``client``, every such agent of the process shares one default
    client, made from the environment (``MANTYX_API_KEY``,
    ``MANTYX_WORKSPACE``, ``MANTYX_BASE_URL``) by the first of them: one
    connection pool, closed when the last agent sharing it is closed (leaving
    its ``with`` block) or else when the process exits. A client given is the
    caller's: closing the agent leaves it open.

    Thread-safety: an ``Agent`` is immutable after construction; call
    :meth:`run` from many threads at once — each call is its own run.
    :meth:`with_options` returns a changed copy.

    Example::

        agent = mantyx_sync.Agent(system_prompt="You are terse.", tools=[add])
        print(agent.run("What is 2 + 3?").text)

    :param max_workers: threads answering local tool calls in each run
        (default: the client's, 32).
    :param on_tool: called with a :class:`ToolActivity` when each local tool
        call starts and ends (from pool threads), e.g. for progress output.
    """

    @checked(ArgumentTypeError, defer=("client",))
    def __init__(
        self,
        client: Client | None = None,
        *,
        max_workers: int | None = None,
        on_tool: Callable[[ToolActivity], None] | None = None,
        **spec: Unpack[SpecKeywords],
    ) -> None:
        given: object = client  # checked here: Agent("You are terse.") is the likeliest slip
        if given is not None and not isinstance(given, Client):
            hint = "; a system prompt goes in system_prompt=" if isinstance(given, str) else ""
            exc = ArgumentTypeError(
                f"Agent(): client must be Client | None, got {type(given).__name__}{hint}"
            )
            exc.path = "client"
            raise exc
        self.spec: AgentSpec = AgentSpec.build(**spec)
        self._shared = client is None
        self.client: Client = shared_client() if client is None else client
        self._max_workers = max_workers
        self._on_tool = on_tool

    def with_options(self, **spec: Unpack[SpecKeywords]) -> Agent:
        """A new agent with these spec keywords replacing this one's, on the same
        client with the same tool settings; this agent is unchanged.

        :raises SpecError: an option breaks a rule (nothing is sent).
        """
        changed = copy.copy(self)
        changed.spec = self.spec.replace(**spec)
        if self._shared:  # one more user of the shared client, released on its own close()
            changed.client = shared_client()
        return changed

    def close(self) -> None:
        """Stop sharing the default client (closed with its last agent); a client
        given to the agent stays open. The agent must not be used afterwards."""
        if self._shared:
            self._shared = False
            release_shared_client(self.client)

    def __repr__(self) -> str:
        label = self.spec.name or self.spec.agent_id or "ephemeral"
        return f"<Agent {label} tools={len(self.spec.tools)}>"

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
        """Start a run and return its :class:`Run` handle at once (its ``id`` is known).

        Pass ``prompt`` or ``messages`` (:class:`~mantyx_sync.Message` values,
        ``{"role", "content"}`` dicts or ``(role, content)`` tuples), not both.
        ``attachments`` (:class:`~mantyx_sync.Attachment` values or
        ``pathlib.Path`` files) go on the prompt or the last user message.

        :meth:`stream` is the same call, for iterating the events as they
        arrive: every event is yielded, the terminal one included; a failed run
        then raises :class:`RunError`. :meth:`Run.text_stream` yields the run's
        text as it grows instead. Use it in a ``with`` block: leaving early
        cancels the run on the server and closes the connection::

            with agent.stream("Tell me a story", run_timeout=300) as run:
                for piece in run.text_stream():
                    print(piece, end="", flush=True)

        :param run_timeout: the limit on the whole run: seconds it may take,
            counted from this call: connecting its MCP servers and creating the
            run count too (``None``: no limit). Past it, this call, iterating or
            waiting cancels the run and raises
            :class:`~mantyx_sync.RunTimeoutError`, however quiet or slow the
            server is. (One request's limit is the client's
            ``request_timeout``.) ``timeout=`` is its deprecated name.
        :param output_type: ask for the reply as this class (a dataclass, an
            attrs class, a ``TypedDict`` or a pydantic model): its JSON Schema
            replaces the agent's ``output_schema`` for this run, and the
            result's :attr:`~mantyx_sync.RunResult.output` is an instance, typed
            as one (``str``, the text, without it).
        :param overrides: spec keywords for this one run (below), as a
            session's message takes them; :meth:`run` and :meth:`stream` take
            them too, and :meth:`with_options` makes them the agent's own.
        :raises SpecError: bad input (nothing is sent).
        :raises ToolResolutionError: an MCP server or A2A peer is unreachable.
        :raises APIStatusError: the server refused the run.
        """
        run_timeout = renamed_argument(
            run_timeout, timeout, old="timeout", new="run_timeout", where="Agent.start"
        )
        spec = self.spec.replace(**overrides) if overrides else self.spec
        return self._start(
            spec,
            prompt,
            messages=messages,
            attachments=attachments,
            run_timeout=run_timeout,
            output_type=output_type,
        )

    def _start(self, spec: AgentSpec, prompt: str | None, **turn: Any) -> Run[Any]:
        # Every run of this agent gets its tool pool settings.
        return self.client.runs.start(
            spec, prompt, max_workers=self._max_workers, on_tool=self._on_tool, **turn
        )

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
        """Run to the end and return the :class:`RunResult`.

        With ``output_type=T`` (see :meth:`start`) the result is a
        ``RunResult[T]`` whose ``output`` is the reply built as a ``T``::

            @dataclasses.dataclass
            class Verdict:
                ok: bool
                reason: str

            verdict = agent.run("Is 7 prime?", output_type=Verdict).output

        :param on_event: called with every event as it arrives, on this thread.
        :param run_timeout: seconds the run may take (``None``: no limit); see :meth:`start`.
        :raises RunError: the run failed (``RunCancelledError`` if cancelled); the
            error carries the partial text and the events gathered.
        :raises RunTimeoutError: the run did not end within ``run_timeout``; it was cancelled.
        :raises OutputParseError: the reply does not fit ``output_type``.
        """
        # The with-block cancels the run if anything (Ctrl-C included) interrupts the wait.
        run_timeout = renamed_argument(
            run_timeout, timeout, old="timeout", new="run_timeout", where="Agent.run"
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
        """Make a plan without carrying it out: a plan-only run.

        The result's :attr:`~mantyx_sync.RunResult.plan` holds the brief and the
        steps; such a run uses no tokens and reports ``turns == 0``.

        :param steps: step titles to seed the plan with.
        :param brief: a one-line goal to seed the plan with.
        :raises SpecError: bad input (nothing is sent).
        """
        spec = self.spec.replace(plan=plan_only(self.spec.plan, steps=steps, brief=brief))
        with self._start(spec, prompt, messages=messages) as run:
            return run.wait()

    def session(self, **overrides: Unpack[SpecKeywords]) -> Session:
        """Open a :class:`Session` with this agent's spec; spec keywords given replace its own.

        :raises SpecError: an override breaks a rule, or the spec has no
            ``system_prompt`` or ``agent_id`` (nothing is sent).
        """
        return self.client.sessions.create(
            self.spec,
            max_workers=self._max_workers,
            on_tool=self._on_tool,
            **overrides,
        )
