"""What a run, a session and the model catalog look like once they come back (immutable)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Generic, cast

import attrs

from ._base.types import TypeVar
from ._models import wire as _wire
from ._models.wire import ALIASES, RAW, WIRE, FromWire
from ._tools.validator import schema_check
from .errors import MantyxError, OutputParseError, deprecated
from .events import ModelInfo, StructuredOutputInfo, TokenUsage
from .messages import Message
from .spec import OutputSchema

if TYPE_CHECKING:
    from .events import AnyRunEvent, ModelFallback, TaskPlan
    from .feedback import Feedback, Poster

__all__ = [
    "Model",
    "ModelCatalog",
    "Pricing",
    "RunResult",
    "RunSnapshot",
    "SessionInfo",
]


OutputT = TypeVar("OutputT", default=str)


def _events_repr(events: tuple[AnyRunEvent, ...]) -> str:
    return f"<{len(events)} events>"


class FeedbackLink:
    """What a :class:`~mantyx_sync.RunResult` keeps to send feedback on its run.

    Pickling drops the connection (a result sent to another process cannot
    reach the client it came from): the copy raises when used.
    """

    __slots__ = ("post",)

    def __init__(self, post: Poster | None) -> None:
        self.post: Poster | None = post

    def __reduce__(self) -> tuple[type[FeedbackLink], tuple[None]]:
        return (FeedbackLink, (None,))

    def __repr__(self) -> str:
        return "<FeedbackLink>" if self.post is not None else "<FeedbackLink detached>"


@attrs.frozen(kw_only=True)
class RunResult(Generic[OutputT]):
    """A run that ended successfully; ``RunResult[T]`` for ``run(..., output_type=T)``.

    :ivar run_id: the run.
    :ivar text: the final assistant text (JSON when an output schema was set).
    :ivar events: every event the run streamed, in ``seq`` order.
    :ivar tokens: usage, ``None`` when the server did not report it.
    :ivar turns: model invocations, ``None`` when not reported.
    :ivar model: the model that finished the run (after a fallback, the
        fallback), ``None`` when not reported.
    :ivar session_id: the session, for session-scoped runs.
    :ivar output_schema: the schema the reply was requested in, if any.
    :ivar structured_output: how the server applied the schema, when it says.
    :ivar plan: the run's task plan as of its last revision, or a plan-only
        run's plan; ``None`` when the run had none.
    :ivar model_fallbacks: every switch to the fallback model, in order.
    :ivar output_type: the class the reply was asked for in (``output_type=``), if any.

    A plain value: it does no I/O. Feedback on the run goes through the
    client, ``client.feedback.create(result.run_id, "up")``.
    """

    run_id: str
    text: str
    events: tuple[AnyRunEvent, ...] = attrs.field(default=(), repr=_events_repr)
    tokens: TokenUsage | None = None
    turns: int | None = None
    model: ModelInfo | None = None
    session_id: str | None = None
    output_schema: OutputSchema | None = None
    structured_output: StructuredOutputInfo | None = None
    plan: TaskPlan | None = None
    model_fallbacks: tuple[ModelFallback, ...] = ()
    output_type: type[OutputT] | None = attrs.field(default=None, repr=False)
    _feedback_link: FeedbackLink | None = attrs.field(
        default=None, repr=False, eq=False, alias="feedback_link"
    )

    def feedback(
        self,
        verdict: str,
        *,
        explanation: str | None = None,
        content_snapshot: Any = None,
    ) -> Feedback:
        """Thumbs up or down on this run: :meth:`Feedbacks.create` for :attr:`run_id`.

        :param verdict: ``"up"`` or ``"down"``.
        :param explanation: why, at most 8000 characters.
        :param content_snapshot: what was judged (default: nothing is sent).
        :raises SpecError: bad arguments (nothing is sent).
        :raises MantyxError: this result was not produced by a client in this
            process (e.g. it was unpickled elsewhere).
        """
        deprecated("RunResult.feedback()", "client.feedback.create(result.run_id, ...)")
        post = None if self._feedback_link is None else self._feedback_link.post
        if post is None:
            raise MantyxError(
                f"run {self.run_id}: this result is not connected to a client (it was copied "
                "between processes); use client.feedback.create(run_id, ...) instead"
            )
        # Feedback (and its listing machinery) loads with the first feedback sent.
        from .feedback import send_feedback

        return send_feedback(
            post, self.run_id, verdict, explanation=explanation, content_snapshot=content_snapshot
        )

    @functools.cached_property
    def output(self) -> OutputT:
        """The reply as an instance of :attr:`output_type` (built once), or the
        :attr:`text` when the run was given none.

        :raises OutputParseError: the reply does not fit :attr:`output_type`;
            ``path`` names the first field that does not.
        """
        if self.output_type is None or self.output_type is str:
            return cast("OutputT", self.text)
        from ._tools.output import build_output  # the converter loads with the first output

        return cast("OutputT", build_output(self.output_type, self.text, run_id=self.run_id))

    def _repr_html_(self) -> str:
        # Jupyter: the answer, each tool call collapsible, a tokens/model footer.
        from ._display.render import render_html

        return render_html(self._display())

    def _repr_markdown_(self) -> str:
        from ._display.render import render_markdown

        return render_markdown(self._display())

    def _display(self) -> Any:
        from ._display.render import view_of

        return view_of(
            self.run_id,
            self.events,
            final_text=self.text,
            tokens=self.tokens,
            turns=self.turns,
            model=self.model,
        )

    def parse(self, validator: Callable[[Any], Any] | None = None) -> Any:
        """The reply as data: JSON-decoded, checked against :attr:`output_schema`,
        then passed to ``validator``.

        :param validator: called with the decoded object (e.g. a pydantic
            ``Model.model_validate``); when it returns something other than
            ``None`` that becomes the result. Anything it raises is wrapped.
        :raises OutputParseError: the text is not JSON, fails the schema or the
            validator; ``raw_text`` keeps the reply. There is no fallback to
            partial text.
        """
        try:
            data = json.loads(self.text)
        except ValueError as exc:
            raise OutputParseError(
                f"run {self.run_id}: the reply is not valid JSON ({exc})", raw_text=self.text
            ) from exc
        if self.output_schema is not None:
            import fastjsonschema

            try:
                check = schema_check(self.output_schema.schema)
            except fastjsonschema.JsonSchemaDefinitionException as exc:
                raise OutputParseError(
                    f"run {self.run_id}: the output schema cannot be compiled ({exc})",
                    raw_text=self.text,
                ) from exc
            try:
                check(data)
            except fastjsonschema.JsonSchemaValueException as exc:
                raise OutputParseError(
                    f"run {self.run_id}: the reply does not match the output schema: {exc.message}",
                    raw_text=self.text,
                    errors=[exc.message],
                ) from exc
        if validator is not None:
            try:
                converted = validator(data)
            except Exception as exc:
                raise OutputParseError(
                    f"run {self.run_id}: the validator rejected the reply: "
                    f"{type(exc).__name__}: {exc}",
                    raw_text=self.text,
                    errors=[str(exc)],
                ) from exc
            if converted is not None:
                return converted
        return data


@attrs.frozen(kw_only=True)
class Pricing:
    """USD per million tokens, as the catalog lists it."""

    input_per_1m_usd: float | None = attrs.field(default=None, metadata={WIRE: "inputPer1MUsd"})
    output_per_1m_usd: float | None = attrs.field(default=None, metadata={WIRE: "outputPer1MUsd"})
    cache_read_per_1m_usd: float | None = attrs.field(
        default=None, metadata={WIRE: "cacheReadPer1MUsd"}
    )


@attrs.frozen(kw_only=True)
class Model:
    """One runnable model; pass :attr:`id` as ``model_id``.

    :ivar source: e.g. ``platform_offering`` or ``workspace_provider``.
    :ivar pricing: ``None`` for bring-your-own-key providers.
    """

    id: str
    label: str | None = None
    provider: str | None = None
    vendor_model_id: str | None = None
    source: str | None = None
    context_window_tokens: int | None = None
    pricing: Pricing | None = None


@attrs.frozen(kw_only=True)
class ModelCatalog(FromWire):
    """The models a workspace can run (``GET /models``).

    Iterate it for :class:`Model` values; :meth:`get` finds one by id.
    """

    models: tuple[Model, ...] = ()
    default_model_id: str | None = None

    def __iter__(self) -> Iterator[Model]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def get(self, model_id: str) -> Model | None:
        """The model with this catalog id, or ``None``."""
        return next((m for m in self.models if m.id == model_id), None)


@attrs.frozen(kw_only=True)
class RunSnapshot:
    """A run as ``GET /agent-runs/{id}`` reports it (no live events).

    :ivar status: ``queued``, ``running``, ``succeeded``, ``failed`` or ``cancelled``.
    :ivar final_text: the reply, or the salvage text of a failed run.
    :ivar failure_reason: e.g. ``{"errorClass": "truncation", "finishReason": "max_tokens"}``.
    :ivar tokens: usage; ``None`` until the run ends and on older servers.
    :ivar raw: the body as sent.
    """

    id: str = attrs.field(metadata={ALIASES: ("runId",)})
    status: str | None = None
    final_text: str | None = None
    error: str | None = None
    failure_reason: dict[str, Any] | None = None
    session_id: str | None = None
    metadata: dict[str, Any] | None = None
    tokens: TokenUsage | None = None
    turns: int | None = None
    model: ModelInfo | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)

    @classmethod
    def from_wire(cls, body: Mapping[str, Any]) -> RunSnapshot:
        """Build the snapshot from the response body (``id`` or ``runId``).

        :raises WireFormatError: (a ``ValueError``) the body is not a run.
        """
        snapshot = _wire.structure(body, cls)
        if snapshot.model is not None and not snapshot.model.reported:
            snapshot = attrs.evolve(snapshot, tokens=None, turns=None, model=None)
        return snapshot


@attrs.frozen(kw_only=True)
class _Said:
    """One message of a session's history as the server sends it."""

    role: str
    content: str = ""
    attachments: tuple[dict[str, Any], ...] = ()


@attrs.frozen(kw_only=True)
class _SessionMessages:
    messages: tuple[_Said, ...] = ()


@attrs.frozen(kw_only=True)
class SessionInfo(FromWire):
    """A session as ``GET /agent-sessions/{id}`` reports it.

    :ivar status: ``active`` or ``ended``.
    :ivar messages: the conversation so far, as :class:`~mantyx_sync.Message`
        values (the shape a run's ``messages=`` takes).
    :ivar spec: the stored agent spec, as sent.
    :ivar raw: the body as sent.
    """

    id: str = attrs.field(metadata={WIRE: "sessionId", ALIASES: ("id",)})
    status: str | None = None
    metadata: dict[str, Any] | None = None
    messages: tuple[Message, ...] = ()
    spec: dict[str, Any] | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False)

    @classmethod
    def from_wire(cls, body: Mapping[str, Any]) -> SessionInfo:
        """Build the info from the response body (``sessionId`` or ``id``).

        :raises WireFormatError: (a ``ValueError``) the body is not a session.
        """
        said = _wire.structure(body, _SessionMessages).messages
        info = _wire.structure({k: v for k, v in body.items() if k != "messages"}, cls)
        messages = tuple(Message(m.role, m.content, m.attachments) for m in said)
        return attrs.evolve(info, messages=messages, raw=dict(body))
