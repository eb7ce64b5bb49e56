"""The emulator's "model": script steps, the context they see, and the default model.

A model is ``None`` (:class:`DefaultModel`), a script of immutable steps replayed
from the start for every run, or a callable ``(ctx) -> step`` asked once per turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

import attrs

from .._base.argcheck import checked_init
from .steps import Overload, PlanUpdate, Supervise, ToolFiles

__all__ = ["Emit", "Fail", "FailResult", "ModelContext", "Step", "ToolCall", "Turn"]

TERMINAL_TYPES = frozenset({"result", "error", "cancelled"})


@attrs.define(kw_only=True)
class ModelContext:
    """What a scripted step or a callable model can see about the current run.

    Owned by the run's worker thread; the lists are fresh copies at each step.

    :ivar run_id: the run's id.
    :ivar prompt: the prompt, or the content of the last user message.
    :ivar messages: session history plus this run's input, as ``{role, content}``.
    :ivar tool_results: every accepted tool result so far, in arrival order, as
        ``{toolUseId, name, result}`` or ``{toolUseId, name, error}``.
    :ivar tool_calls: every local tool call made so far, in call order, as
        ``{toolUseId, name, args, kind}``.
    :ivar spec: the run's spec (the request JSON, merged with the session's).
    :ivar turn: the 0-based index of the model turn being produced.
    :ivar attachments: the files on this run's last user message, as metadata
        ``{type, filename, mimeType, sizeBytes | url}`` (never the bytes).
    :ivar retained: in a session, the results of ``retain`` tools from its
        earlier runs, as ``{toolUseId, name, result}`` (text cut to 8 KB).
    """

    run_id: str
    prompt: str
    messages: list[dict[str, Any]]
    spec: dict[str, Any]
    tool_results: list[dict[str, Any]] = attrs.field(factory=list)
    tool_calls: list[dict[str, Any]] = attrs.field(factory=list)
    turn: int = 0
    attachments: list[dict[str, Any]] = attrs.field(factory=list)
    retained: list[dict[str, Any]] = attrs.field(factory=list)


def _to_opt_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


TextLike = str | Callable[[ModelContext], str]


def _to_tuple(value: Iterable[ToolCall] | None) -> tuple[ToolCall, ...]:
    return tuple(value) if value is not None else ()


@checked_init(TypeError)
@attrs.frozen
class ToolCall:
    """A tool call the model makes (inside a :class:`Turn`, or alone as a one-call turn).

    A name declared in the spec as ``local``/``a2a_local``/``mcp_local`` becomes
    a ``local_tool_call`` the client must answer; any other name, or any call
    with ``server_result`` set, is run "server-side": informational
    ``tool_call`` + ``tool_result`` events.

    :param name: the model-facing tool name.
    :param args: the arguments (default ``{}``).
    :param id: the ``toolUseId`` (default ``tu_<run number>_<n>``).
    :param kind: force a local call with this ``kind`` even if the spec does
        not declare the tool (e.g. to test a client's unknown-tool handling).
    :param server_result: force a server-resolved call with this result text.
    """

    name: str
    args: dict[str, Any] | None = None
    id: str | None = attrs.field(default=None, kw_only=True)
    kind: str | None = attrs.field(default=None, kw_only=True)
    server_result: str | None = attrs.field(default=None, kw_only=True)


@checked_init(TypeError)
@attrs.frozen
class Turn:
    """One model turn: optional thinking, streamed text, ``assistant_message``, tool calls.

    A turn without tool calls is the final answer and ends the run with a
    successful ``result``.

    :param text: the assistant text, or a callable ``(ctx) -> str`` (e.g. to use
        tool results in the final answer).
    :param chunks: the ``assistant_delta`` texts; default: ``text`` split in a
        few word chunks (no deltas when the text is empty).
    :param thinking: text for one ``thinking_delta`` before the answer.
    :param tool_calls: the calls made at the end of this turn.
    :param finish_reason: ``finishReason`` on the ``assistant_message``.
    """

    text: TextLike = ""
    chunks: tuple[str, ...] | None = attrs.field(
        default=None, kw_only=True, converter=_to_opt_tuple
    )
    thinking: str | None = attrs.field(default=None, kw_only=True)
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), kw_only=True, converter=_to_tuple)
    finish_reason: str | None = attrs.field(default=None, kw_only=True)


@checked_init(TypeError)
@attrs.frozen
class Fail:
    """End the run with a terminal ``error`` event.

    With ``partial_text``, an ``assistant_message`` carrying that text (and
    ``finish_reason``) comes first, as on a truncated reply.
    """

    error: str = "boom"
    code: str = attrs.field(default="error", kw_only=True)
    error_class: str | None = attrs.field(default=None, kw_only=True)
    finish_reason: str | None = attrs.field(default=None, kw_only=True)
    partial_text: str | None = attrs.field(default=None, kw_only=True)
    retryable: bool | None = attrs.field(default=None, kw_only=True)


@checked_init(TypeError)
@attrs.frozen
class FailResult:
    """End the run with a non-success terminal ``result {subtype, error}``."""

    subtype: str = "error_max_turns"
    error: str = "Run exceeded the maximum number of tool turns"


@checked_init(TypeError)
@attrs.frozen
class Emit:
    """Log any raw event; it ends the run only if ``type`` is terminal."""

    type: str
    data: dict[str, Any] = attrs.field(factory=dict)


Step = Turn | ToolCall | Fail | FailResult | Emit | PlanUpdate | Supervise | Overload | ToolFiles
ModelLike = Sequence[Step] | Callable[[ModelContext], Step] | None


def chunk_text(text: str, words_per_chunk: int = 3) -> list[str]:
    """Split ``text`` into chunks of a few words whose concatenation is ``text``."""
    if not text:
        return []
    pieces = re.findall(r"\s*\S+\s*|\s+", text)
    return [
        "".join(pieces[i : i + words_per_chunk]) for i in range(0, len(pieces), words_per_chunk)
    ]


_SAMPLES: Final = {"string": "example", "integer": 1, "number": 1.5, "boolean": True, "null": None}


def sample_from_schema(schema: Any) -> Any:
    """A deterministic value for a JSON Schema: required properties only.

    string → ``"example"`` (or the first enum value), integer → 1,
    number → 1.5, boolean → true, array → ``[]`` (``minItems`` samples when
    required), object → its required properties.
    """
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return sample_from_schema(options[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        kind = "object"
    if isinstance(kind, str) and kind in _SAMPLES:
        return _SAMPLES[kind]
    if kind == "array":
        count = schema.get("minItems", 0)
        item = schema.get("items", {})
        return [sample_from_schema(item) for _ in range(count if isinstance(count, int) else 0)]
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    return {
        name: sample_from_schema(properties.get(name, {}))
        for name in required
        if isinstance(name, str)
    }


def _object(schema: Any) -> dict[str, Any]:
    """Sample arguments for a tool's schema: an object (a tool's arguments are one)."""
    sample = sample_from_schema(schema)
    return sample if isinstance(sample, dict) else {}


class DefaultModel:
    """The model used when none is configured: deterministic and easy to assert on.

    Turn 0 calls once each tool the spec declares as read-only, with
    arguments generated from its schema: a ``local`` tool with ``readOnly``
    (``read_only=True``) and an ``mcp_local`` tool whose annotations say
    ``readOnlyHint``. A tool that may change something (an MCP server's
    ``write_file``, an A2A peer, any tool not marked read-only) is called only
    when a script names it, so trying an agent offline never acts on your
    machine or your peers. The final turn
    answers ``"You said: <prompt>"`` plus one ``"<name> → <result>"`` line per
    call, or, with an ``outputSchema``, a JSON document generated from it. When
    the last user message carries files, a line says how many and of which
    MIME types (``Received 2 files: application/pdf, text/plain``).
    With a non-zero ``reasoningLevel`` each turn starts with a ``thinking_delta``.

    Stateless: one instance may serve any number of runs at once.
    """

    def __call__(self, ctx: ModelContext) -> Step:
        thinking_on = ctx.spec.get("reasoningLevel") not in (None, "off", 0)
        thinking = f"Thinking about: {ctx.prompt}" if thinking_on else None
        calls = self._calls(ctx) if ctx.turn == 0 else []
        if calls:
            names = ", ".join(call.name for call in calls)
            return Turn(
                f"Calling {names}.", thinking=thinking, tool_calls=calls, finish_reason="tool_use"
            )
        return Turn(self._final_text(ctx), thinking=thinking, finish_reason="end_turn")

    @staticmethod
    def _calls(ctx: ModelContext) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for ref in ctx.spec.get("tools") or ():
            kind = ref.get("kind")
            if kind == "local" and ref.get("readOnly") is True:
                calls.append(ToolCall(ref["name"], _object(ref.get("parameters", {}))))
            elif kind == "mcp_local":
                for tool in ref.get("tools") or ():
                    hints = tool.get("annotations")
                    if isinstance(hints, dict) and hints.get("readOnlyHint") is True:
                        calls.append(ToolCall(tool["name"], _object(tool.get("inputSchema", {}))))
        return calls

    @staticmethod
    def _final_text(ctx: ModelContext) -> str:
        output_schema = ctx.spec.get("outputSchema")
        if isinstance(output_schema, dict):
            return json.dumps(sample_from_schema(output_schema.get("schema", {})))
        lines = [f"You said: {ctx.prompt}"]
        if ctx.attachments:
            count = len(ctx.attachments)
            kinds = ", ".join(str(a.get("mimeType") or "unknown") for a in ctx.attachments)
            lines.append(f"Received {count} file{'s' if count != 1 else ''}: {kinds}")
        by_id = {r["toolUseId"]: r for r in ctx.tool_results}
        for call in ctx.tool_calls:
            result = by_id.get(call["toolUseId"])
            if result is None:
                continue
            shown = result["result"] if "result" in result else f"error: {result.get('error')}"
            lines.append(f"{call['name']} → {shown}")
        return "\n".join(lines)


def step_source(model: ModelLike) -> Callable[[ModelContext], Step | None]:
    """The next step of one run, for each context: from a callable model, a script
    (``None`` once it has run out) or :class:`DefaultModel`."""
    if model is None:
        return DefaultModel()
    if callable(model):
        return model
    script = iter(list(model))

    def next_step(ctx: ModelContext) -> Step | None:
        return next(script, None)

    return next_step
