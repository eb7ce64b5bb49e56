"""Tool calls and their answers read alike from a local or server-side tool's
event, for the views of a run (notebook, terminal, served Agent API)."""

from __future__ import annotations

from typing import Any, Final

import attrs

from ..events import LocalToolCall, LocalToolResultIn, RunEvent, ToolCallEvent, ToolResultEvent

__all__ = ["ToolStep", "tool_step"]


_TOOL_TYPES: Final = frozenset(
    {"tool_call", "local_tool_call", "tool_result", "local_tool_result_in"}
)


@attrs.frozen(kw_only=True)
class ToolStep:
    """A tool call (``done`` false) or its answer, read alike from a local or
    server-side tool's event, for the views of a run."""

    tool_use_id: str
    name: str | None
    done: bool
    args: Any = None
    ok: bool = True
    outcome: Any = None


def tool_step(event: RunEvent) -> ToolStep | None:
    """The tool call or answer in ``event``; ``None`` for other events and for
    one without a ``toolUseId`` (it cannot be paired)."""
    if event.type not in _TOOL_TYPES:
        return None
    # local_tool_call first: it skips the converter for the documented shape.
    payload = event.local_tool_call or event.payload
    if isinstance(payload, (LocalToolCall, ToolCallEvent)) and payload.tool_use_id:
        args = payload.args if isinstance(payload, LocalToolCall) else payload.input
        return ToolStep(tool_use_id=payload.tool_use_id, name=payload.name, done=False, args=args)
    name = None
    if isinstance(payload, LocalToolResultIn) and payload.tool_use_id:
        ok = payload.error is None
        outcome = payload.output if ok else payload.error
    elif isinstance(payload, ToolResultEvent) and payload.tool_use_id:
        ok = payload.ok is not False and not payload.is_error
        outcome = payload.summary if payload.result is None else payload.result
        name = payload.name
    else:
        return None
    return ToolStep(tool_use_id=payload.tool_use_id, name=name, done=True, ok=ok, outcome=outcome)
