"""Handing one ``local_tool_call`` event to an executor, whatever shape it came in.

Shared by ordinary runs and evaluation case runs, so every call gets the same
treatment: a well-formed call is submitted; arguments sent as a JSON string
are decoded; anything else still gets its one answer, an error, so the run
does not wait for the server's tool timeout.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Final

from ..events import LocalToolCall, RunEvent, structure_payload
from .executor import ToolExecutor

__all__ = ["note_answer", "submit_call"]

log = logging.getLogger(__name__)


# A call with any of these keys is read by the converter: the snake_case
# spellings and the ``input`` alias it also accepts, and the A2A/MCP fields.
_CONVERTER_KEYS: Final = frozenset(
    {
        "tool_use_id",
        "input",
        "agentCard",
        "agent_card",
        "mcpServer",
        "mcp_server",
        "mcpToolName",
        "mcp_tool_name",
        "mcpServerInfo",
        "mcp_server_info",
    }
)


def plain_call(data: Mapping[str, Any]) -> LocalToolCall | None:
    """The documented plain local call in ``data``, built without the converter;
    ``None`` for any other shape (``event.payload`` then reads it).

    The round trip's path: the converter costs ~5 µs per call. Exact types
    only, so nothing the converter would refuse gets through, and the value is
    the one it builds (``args`` and ``raw`` copied).
    """
    tool_use_id = data.get("toolUseId")
    name = data.get("name")
    args = data.get("args")
    kind = data.get("kind", "local")
    if (
        type(tool_use_id) is not str
        or type(name) is not str
        or type(args) is not dict
        or type(kind) is not str
        or not _CONVERTER_KEYS.isdisjoint(data)
        or not all(type(key) is str for key in args)
    ):
        return None
    return LocalToolCall(
        tool_use_id=tool_use_id, name=name, args=dict(args), kind=kind, raw=dict(data)
    )


def submit_call(executor: ToolExecutor, event: RunEvent, *, label: str) -> None:
    """Submit the call in ``event`` (a ``local_tool_call``) to ``executor``."""
    call = plain_call(event.data)
    if call is not None:
        executor.submit(call)
        return
    payload = event.payload
    if isinstance(payload, LocalToolCall):
        executor.submit(payload)
        return
    data = dict(event.data)
    tool_use_id = data.get("toolUseId")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        log.warning("%s: a local_tool_call without a toolUseId cannot be answered", label)
        return
    for key in ("args", "input"):
        if isinstance(data.get(key), str):
            with contextlib.suppress(ValueError):
                data[key] = json.loads(data[key])
    repaired = structure_payload("local_tool_call", data)
    if isinstance(repaired, LocalToolCall):
        executor.submit(repaired)
        return
    name = data.get("name")
    call = LocalToolCall(
        tool_use_id=tool_use_id, name=name if isinstance(name, str) else "?", raw=data
    )
    executor.submit(
        call,
        problem="malformed tool call: the arguments (or other fields) could not be read; "
        "call the tool again with a JSON object of arguments",
    )


def note_answer(executor: ToolExecutor, event: RunEvent) -> None:
    """The server's echo of an answer (by us or another process): never run that call."""
    if event.type == "local_tool_result_in":
        tool_use_id = event.data.get("toolUseId")
        if isinstance(tool_use_id, str):
            executor.mark_answered(tool_use_id)
