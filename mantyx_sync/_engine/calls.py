"""Handing one ``local_tool_call`` event to an executor, whatever shape it came in.

Shared by runs and evaluation case runs. Arguments sent as a JSON string are
decoded; a call that still cannot be read gets its one answer, an error, so
the run does not wait for the server's tool timeout.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Final

from .._base.bounded import decode_json
from .._models.plan import plan_of
from ..events import LocalToolCall, RunEvent, exact_call
from .executor import ToolExecutor

__all__ = ["note_answer", "submit_call"]

log = logging.getLogger(__name__)


# Where a call's arguments are read from: their wire key, then the other spellings.
_ARGS_KEYS: Final = plan_of(LocalToolCall).field("args").keys


def submit_call(executor: ToolExecutor, event: RunEvent, *, label: str) -> None:
    call = event.local_tool_call
    if call is not None:
        executor.submit(call)
        return
    data = dict(event.data)
    tool_use_id = data.get("toolUseId")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        log.warning("%s: a local_tool_call without a toolUseId cannot be answered", label)
        return
    for key in _ARGS_KEYS:
        if isinstance(data.get(key), str):
            with contextlib.suppress(ValueError):
                data[key] = decode_json(data[key])
    repaired = exact_call(data)
    if repaired is not None:
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
