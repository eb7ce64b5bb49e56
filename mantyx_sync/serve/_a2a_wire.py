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

__all__ = [
    "INPUT_MODES",
    "Dialect",
    "agent_message",
    "build_card",
    "stream_update",
    "task_object",
    "timestamp",
]

Dialect = Literal["0.3", "1.0"]

INPUT_MODES: tuple[str, ...] = ("text/plain", "application/json")
"""Media types the served agent takes unless its card says otherwise (data parts are JSON)."""


def _part(text: str, dialect: Dialect) -> dict[str, Any]:
    return {"kind": "text", "text": text} if dialect == "0.3" else {"text": text}


def _state(state: str, dialect: Dialect) -> str:
    if dialect == "0.3":
        return state
    return "TASK_STATE_" + state.upper().replace("-", "_")


def agent_message(
    text: str, ids: tuple[str, str, Dialect], message_id: str | None = None
) -> dict[str, Any]:
    """An agent-role Message holding ``text`` (a new one unless ``message_id`` is given),
    in the task ``ids`` names (task id, context id, dialect)."""
    task_id, context_id, dialect = ids
    out: dict[str, Any] = {
        "messageId": message_id or str(uuid.uuid4()),
        "role": "agent" if dialect == "0.3" else "ROLE_AGENT",
        "parts": [_part(text, dialect)],
        "contextId": context_id,
        "taskId": task_id,
    }
    if dialect == "0.3":
        out["kind"] = "message"
    return out


def timestamp(moment: datetime.datetime | None = None) -> str:
    """``moment`` (default: now) as the specifications write times: UTC, milliseconds, ``Z``."""
    moment = moment or datetime.datetime.now(datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"


def _status(
    state: str, message: dict[str, Any] | None, dialect: Dialect, stamp: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"state": _state(state, dialect), "timestamp": stamp or timestamp()}
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
    status_time: str,
    artifact: tuple[str, str] | None,
    history: Sequence[dict[str, Any]],
    dialect: Dialect,
) -> dict[str, Any]:
    """A Task. ``artifact`` is ``(artifact_id, text)`` once there is an answer."""
    out: dict[str, Any] = {
        "id": task_id,
        "contextId": context_id,
        "status": _status(state, status_message, dialect, status_time),
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
    bearer: bool,
    dialect: Dialect | None,
) -> dict[str, Any]:
    """The Agent Card, advertising JSON-RPC in both lines on one endpoint.

    ``dialect`` ``"1.0"`` gives the card in the 1.0 schema alone; otherwise it also
    carries the fields 0.3 clients read. With ``bearer`` it declares the bearer
    scheme every request but the card's needs. Fields in ``overrides`` replace the
    built ones.
    """
    card: dict[str, Any] = {
        "name": name,
        "description": description,
        "version": version,
        "supportedInterfaces": [
            {"url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": list(INPUT_MODES),
        "defaultOutputModes": ["text/plain"],
        "skills": _skills(tools, name),
    }
    if dialect == "1.0":
        card["capabilities"]["extendedAgentCard"] = False
        if bearer:
            card["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
            card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
    else:
        # The 0.3 line reads these top-level fields.
        card.update(url=rpc_url, preferredTransport="JSONRPC", protocolVersion="0.3.0")
        if bearer:
            card["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
            card["security"] = [{"bearer": []}]
    if overrides:
        card.update(overrides)
    return card
