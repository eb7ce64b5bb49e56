"""``define_local_agent_api``: delegate to an Agent API (agentscope-runtime) agent.

A connection owns one ``session_id``, so the calls of one run (or session, which
keeps its connections) continue one remote conversation. The model sees one
``local`` tool; a failed or unreachable remote agent is a tool error it sees.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import attrs

from ._base.argcheck import checked, checked_init
from ._base.redact import display_url
from ._peers.agent_api.client import AgentApiClient, AgentApiError
from ._peers.definition import OneTool, call_limit, check_headers, check_name, pairs
from .errors import ArgumentTypeError, SpecError, ToolError
from .events import LocalToolCall

__all__ = ["AgentApiConnection", "LocalAgentApi", "define_local_agent_api"]

logger: logging.Logger = logging.getLogger(__name__)

INPUT_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "request": {
            "type": "string",
            "description": "What to ask the agent, as a self-contained message.",
        }
    },
    "required": ["request"],
    "additionalProperties": False,
}


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True, eq=False)
class LocalAgentApi:
    """A definition made by :func:`define_local_agent_api` (immutable; header values hidden)."""

    kind: ClassVar[str] = "local"
    name: str
    url: str
    description: str | None = None
    headers: tuple[tuple[str, str], ...] | None = attrs.field(
        default=None, converter=pairs, repr=False
    )
    timeout: float = 300.0

    def connect(self) -> AgentApiConnection:
        """Open the HTTP pool and pick this run's (or session's) ``session_id``."""
        return AgentApiConnection(self)


@checked(ArgumentTypeError)
def define_local_agent_api(
    name: str,
    url: str,
    *,
    description: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 300.0,
) -> LocalAgentApi:
    """Let the model delegate to an agent served over the Agent API protocol.

    ::

        research = define_local_agent_api("researcher", "http://10.0.0.5:8090",
                                          description="Finds and summarises papers.")
        agent = Agent(system_prompt="...", tools=[research])

    :param name: the model-facing tool name, ``^[a-zA-Z0-9_]{1,64}$``.
    :param url: the endpoint (``.../process``) or the app's base URL.
    :param description: what the remote agent is good for (the model reads it).
    :param headers: sent with every request (e.g. ``Authorization``; values never logged).
    :param timeout: seconds one call may take, the whole stream included.
    :raises SpecError: a bad name, URL, header or timeout.

    .. versionadded:: 0.2
    """
    check_name("agent_api", name)
    if not url.startswith(("http://", "https://")):
        raise SpecError(f"agent_api {name!r}: url must be http:// or https://", path="url")
    check_headers("agent_api", name, headers)
    if not timeout > 0:  # NaN too
        raise SpecError(f"agent_api {name!r}: timeout must be a positive number of seconds")
    return LocalAgentApi(
        name=name, url=url, description=description, headers=headers, timeout=float(timeout)
    )


class AgentApiConnection(OneTool):
    """One run's or session's link to the remote agent (a :class:`~mantyx_sync.ToolConnection`).

    Thread-safe: concurrent calls share the HTTP pool and the ``session_id``.
    """

    kind: str = "local"
    INPUT_SCHEMA: ClassVar[Mapping[str, Any]] = INPUT_SCHEMA

    def __init__(self, definition: LocalAgentApi) -> None:
        self.name: str = definition.name
        self._definition = definition
        self.session_id: str = f"mantyx-{uuid.uuid4()}"
        self._client = AgentApiClient(
            definition.url, dict(definition.headers) if definition.headers else None
        )

    def wire_ref(self) -> dict[str, Any]:
        """The ``tools[]`` entry: a ``local`` tool taking ``{"request": string}``."""
        description = self._definition.description or (
            f"Ask the remote agent at {display_url(self._client.url)} to handle a request; "
            "it remembers earlier requests made during this conversation."
        )
        return {
            "kind": "local",
            "name": self.name,
            "description": description,
            "parameters": dict(INPUT_SCHEMA),
        }

    def call(self, call: LocalToolCall, *, timeout: float | None) -> str:
        """Send ``args.request`` and return the remote agent's answer.

        :raises ToolError: the remote agent failed, was cancelled or rejected
            the request, timed out, or could not be reached.
        """
        request = call.args.get("request")
        if not isinstance(request, str) or not request.strip():
            raise ToolError('this tool takes {"request": string}')
        limit = call_limit(self._definition.timeout, timeout)
        try:
            reply = self._client.send(request, session_id=self.session_id, timeout=limit)
        except AgentApiError as exc:
            raise ToolError(str(exc)) from exc
        if reply.status != "completed":
            detail = reply.error or "no reason given"
            if reply.status in ("unknown", "created", "in_progress"):
                raise ToolError(f"the remote agent's reply ended before it completed ({detail})")
            raise ToolError(f"the remote agent {reply.status}: {detail}")
        logger.debug("agent_api %r: answered (%d tool calls)", self.name, len(reply.tool_lines))
        return reply.as_tool_result()

    def close(self) -> None:
        """Release the HTTP pool. Idempotent."""
        self._client.close()
