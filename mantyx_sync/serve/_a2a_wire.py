"""A2A wire shapes for the served app, in both protocol lines (pure: dicts in, dicts out).

The lines differ as the A2A client (:mod:`mantyx_sync._peers.a2a.client`) says;
here also: 0.3 status updates carry ``final``, and 1.0 stream items are
``{"task"|"message"|"statusUpdate"|"artifactUpdate": …}``.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ._wsgi import parts_text

__all__ = [
    "Dialect",
    "agent_message",
    "build_card",
    "message_text",
    "stream_update",
    "task_object",
]

Dialect = Literal["0.3", "1.0"]


def _part(text: str, dialect: Dialect) -> dict[str, Any]:
    return {"kind": "text", "text": text} if dialect == "0.3" else {"text": text}


def _state(state: str, dialect: Dialect) -> str:
    if dialect == "0.3":
        return state
    return "TASK_STATE_" + state.upper().replace("-", "_")


def message_text(message: Any) -> str | None:
    """The text a client's A2A message carries (both lines), or ``None`` if none;
    file parts are named (their bytes are not forwarded)."""
    return parts_text(message.get("parts"), files=True) if isinstance(message, Mapping) else None


def agent_message(text: str, ids: tuple[str, str, Dialect]) -> dict[str, Any]:
    """A new agent-role Message holding ``text``, in the task ``ids`` names (task id,
    context id, dialect)."""
    task_id, context_id, dialect = ids
    out: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "role": "agent" if dialect == "0.3" else "ROLE_AGENT",
        "parts": [_part(text, dialect)],
        "contextId": context_id,
        "taskId": task_id,
    }
    if dialect == "0.3":
        out["kind"] = "message"
    return out


def _status(state: str, message: dict[str, Any] | None, dialect: Dialect) -> dict[str, Any]:
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    out: dict[str, Any] = {"state": _state(state, dialect), "timestamp": stamp}
    if message is not None:
        out["message"] = message
    return out


def _artifact(text: str, artifact_id: str, dialect: Dialect) -> dict[str, Any]:
    return {"artifactId": artifact_id, "name": "response", "parts": [_part(text, dialect)]}


def task_object(
    *,
    task_id: str,
    context_id: str,
    state: str,
    status_message: dict[str, Any] | None,
    artifact: tuple[str, str] | None,
    history: Sequence[dict[str, Any]],
    dialect: Dialect,
) -> dict[str, Any]:
    """A Task. ``artifact`` is ``(artifact_id, text)`` once there is an answer."""
    out: dict[str, Any] = {
        "id": task_id,
        "contextId": context_id,
        "status": _status(state, status_message, dialect),
    }
    if artifact is not None:
        out["artifacts"] = [_artifact(artifact[1], artifact[0], dialect)]
    if history:
        out["history"] = list(history)
    if dialect == "0.3":
        out["kind"] = "task"
    return out


def stream_update(
    ids: tuple[str, str, Dialect], kind: Literal["status", "artifact"], **fields: Any
) -> dict[str, Any]:
    """A stream item updating the task ``ids`` names (task id, context id, dialect):
    ``kind`` ``"status"`` with ``state``, ``message`` and ``final`` (sent in 0.3 only), or
    ``"artifact"`` with ``text``, ``artifact_id``, ``append`` and ``last_chunk``: a chunk of
    the answer, or (``append`` false) the whole answer so far."""
    task_id, context_id, dialect = ids
    body: dict[str, Any] = {"taskId": task_id, "contextId": context_id}
    if kind == "status":
        body["status"] = _status(fields["state"], fields["message"], dialect)
        if dialect == "0.3":
            body["final"] = fields["final"]
    else:
        body["artifact"] = _artifact(fields["text"], fields["artifact_id"], dialect)
        body.update(append=fields["append"], lastChunk=fields["last_chunk"])
    if dialect == "0.3":
        return {**body, "kind": f"{kind}-update"}
    return {f"{kind}Update": body}


def _skills(tools: Sequence[Any], agent_name: str) -> list[dict[str, Any]]:
    skills: list[dict[str, Any]] = []
    for tool in tools:
        name = getattr(tool, "name", None) or getattr(tool, "id", None)
        if not isinstance(name, str):
            continue
        description = getattr(tool, "description", None)
        kind = str(getattr(tool, "kind", "tool"))
        if not (isinstance(description, str) and description):
            description = f"Can use the {name} tool ({kind})."
        skills.append({"id": name, "name": name, "description": description, "tags": [kind]})
    chat = f"Answers messages as the MANTYX agent {agent_name}."
    return skills or [{"id": "chat", "name": "Chat", "description": chat, "tags": ["chat"]}]


def build_card(
    *,
    name: str,
    description: str,
    version: str,
    rpc_url: str,
    tools: Sequence[Any],
    overrides: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The Agent Card, advertising JSON-RPC in both lines on one endpoint.

    Fields in ``overrides`` replace the built ones.
    """
    card: dict[str, Any] = {
        "name": name,
        "description": description,
        "version": version,
        "supportedInterfaces": [
            {"url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        # The 0.3 line reads these top-level fields.
        "url": rpc_url,
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": _skills(tools, name),
    }
    if overrides:
        card.update(overrides)
    return card
