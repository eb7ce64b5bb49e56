"""Tool calls as the emulated run logs them: who answers a call, and what each side sees.

A model turn's :class:`~.model.ToolCall` is answered by the client when the
spec's tool reference that offers it is ``local``, ``a2a_local`` or
``mcp_local`` and no server result is given (by the step itself or by an
evaluation's ``toolMocks``); otherwise the server answers it. The waiting
itself is :class:`~.runs.EmulatedRun`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ._validation import attachment_metadata
from .model import ToolCall

__all__ = ["answer_of", "describe_call", "retained"]

CLIENT_KINDS: Final = ("local", "a2a_local", "mcp_local")
RETAIN_MAX_BYTES: Final = 8 * 1024
"""How much of a ``retain`` tool's result a session keeps (about 8 KB)."""


def describe_call(spec: Mapping[str, Any], call: ToolCall, tool_use_id: str) -> dict[str, Any]:
    """What the run logs for one tool call of a model turn, and who answers it.

    The wire fields (``toolUseId``, ``name``, ``args``; for a client-answered
    call its ``kind`` and the A2A card or MCP server it names) plus ``local``
    (the client answers), ``server_result`` (the server's answer, from the
    step or an evaluation's tool mock) and ``mocked``.
    """
    ref, found = find_ref(spec, call.name)
    kind = found if call.kind is None else call.kind
    server_result = call.server_result
    mocks = spec.get("toolMocks")
    if server_result is None and isinstance(mocks, dict) and call.name in mocks:
        # An evaluation's tool mock answers on the server (see _evals.py).
        mock = mocks[call.name]
        if not isinstance(mock, str):
            mock = json.dumps(mock, ensure_ascii=False, separators=(",", ":"))
        server_result = mock
    local = server_result is None and kind in CLIENT_KINDS
    data: dict[str, Any] = {
        "toolUseId": tool_use_id,
        "name": call.name,
        "args": dict(call.args or {}),
    }
    if local:
        data["kind"] = kind
        if kind == "a2a_local" and ref is not None and "agentCard" in ref:
            data["agentCard"] = ref["agentCard"]
        elif kind == "mcp_local":
            data["mcpServer"] = ref["name"] if ref is not None else call.name
            data["mcpToolName"] = call.name
            if ref is not None and "serverInfo" in ref:
                data["mcpServerInfo"] = ref["serverInfo"]
    mocked = server_result is not None and call.server_result is None
    return {"local": local, "server_result": server_result, "mocked": mocked, **data}


def find_ref(spec: Mapping[str, Any], name: str) -> tuple[dict[str, Any] | None, str | None]:
    """The spec's tool reference that offers ``name``, and its kind (or ``None, None``)."""
    for ref in spec.get("tools") or ():
        kind = ref.get("kind")
        if kind in ("local", "a2a_local") and ref.get("name") == name:
            return ref, kind
        if kind == "mcp_local" and any(t.get("name") == name for t in ref.get("tools", ())):
            return ref, kind
    return None, None


def answer_of(name: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(echo, data)`` of an accepted tool-result body: the model's view and the event's.

    Files appear as metadata only, never their bytes.
    """
    tool_use_id = body["toolUseId"]
    echo: dict[str, Any] = {"toolUseId": tool_use_id, "name": name}
    data: dict[str, Any] = {"toolUseId": tool_use_id}
    if "result" in body:
        echo["result"] = data["output"] = body["result"]
        if body.get("files"):
            meta = [attachment_metadata(f) for f in body["files"]]
            echo["files"] = data["files"] = meta
    else:
        echo["error"] = data["error"] = body["error"]
    return echo, data


def retained(spec: Mapping[str, Any], echoes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results a session keeps from a run: those of ``retain: true`` tools.

    Text only (an error, or files, are not kept), cut to :data:`RETAIN_MAX_BYTES`
    of UTF-8; replayed to the model on the session's later runs.
    """
    names = {
        ref.get("name")
        for ref in spec.get("tools") or ()
        if isinstance(ref, Mapping) and ref.get("retain") is True
    }
    return [
        {
            "toolUseId": echo["toolUseId"],
            "name": echo["name"],
            "result": echo["result"].encode()[:RETAIN_MAX_BYTES].decode(errors="ignore"),
        }
        for echo in echoes
        if echo.get("name") in names and isinstance(echo.get("result"), str)
    ]
