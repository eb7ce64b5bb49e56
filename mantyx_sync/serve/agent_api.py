"""Serve a MANTYX agent over the Agent API protocol (agentscope-runtime) as a WSGI app.

::

    from mantyx_sync import Agent, serve

    app = serve.agent_api_app(Agent(system_prompt="You are terse."))

Routes, relative to where the app is mounted:

* ``POST /process``: an ``AgentRequest`` (``input`` messages, ``session_id``,
  ``stream``). The last user message's text is sent to MANTYX; the
  ``session_id`` (at most 256 characters) names one MANTYX session
  (LRU-bounded by ``max_sessions``; a missing one starts a new conversation,
  whose id the response carries).
  With ``stream`` (the default) the reply is an SSE stream of ``data:`` JSON
  objects written as the MANTYX run streams; otherwise the final response
  object. Run failures are in-band: a ``failed`` response carrying
  ``error {code, message}``; a malformed request gets HTTP 400 with the same
  error model. ``tools`` in the request are not supported (the agent's own
  tools are used) and are ignored.
* ``GET /health``: ``{"status": "ok"}``, without authentication.

Every other request must name an allowed Host (421 otherwise) and pass
``authenticate`` (401); the body must be declared JSON (415) and at most
``max_body_bytes`` (413). A ``session_id`` belongs to the caller ``authenticate``
names.

A client that disconnects mid-stream has its MANTYX run cancelled.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from .._base.argcheck import checked
from ..agent import Agent
from ..errors import ArgumentTypeError, MantyxError
from ..events import RunEvent
from ._agent_api_wire import ResponseBuilder, request_text
from ._conversations import Conversations
from ._pump import RunPump, Tick
from ._wsgi import Authenticate, BadJson, ServedApp, StartResponse, json_reply, loggable

__all__ = ["AgentApiApp", "agent_api_app"]

log: logging.Logger = logging.getLogger(__name__)

PROCESS_PATHS: Final = ("/process", "/process/")


def _bad_request(start_response: StartResponse, message: str, status: int = 400) -> list[bytes]:
    body = {
        "object": "response",
        "status": "failed",
        "error": {"code": "invalid_request", "message": message},
    }
    return json_reply(start_response, body, status)


def _no_route(start_response: StartResponse, path: str, method: str) -> list[bytes]:
    # Still the protocol's error model ({code, message}), as the 401 is.
    if path not in PROCESS_PATHS:
        error = {"code": "not_found", "message": f"no route {path}: use POST /process"}
        return json_reply(start_response, {"error": error}, 404)
    error = {"code": "method_not_allowed", "message": f"{method} {path}: use POST"}
    return json_reply(start_response, {"error": error}, 405, [("Allow", "POST")])


class AgentApiApp(ServedApp):
    """The WSGI application :func:`agent_api_app` returns; thread-safe (one instance
    serves any number of requests at once)."""

    def __init__(
        self,
        agent: Agent,
        *,
        authenticate: Authenticate | None,
        max_sessions: int,
        heartbeat: float,
        allowed_hosts: Sequence[str],
        max_body_bytes: int,
    ) -> None:
        super().__init__(authenticate, allowed_hosts, heartbeat, max_sessions, max_body_bytes)
        self.agent = agent
        self.conversations: Conversations = Conversations(
            agent, stateless=False, max_sessions=max_sessions
        )

    def _route(self, environ: dict[str, Any], start_response: StartResponse, caller: str) -> Any:
        """``POST /process``."""
        method, path = self._target(environ)
        if path not in PROCESS_PATHS or method != "POST":
            return _no_route(start_response, path, method)
        try:
            body = self._read_json(environ)
        except BadJson as exc:
            return _bad_request(start_response, str(exc))
        if not isinstance(body, Mapping):
            return _bad_request(start_response, "the body must be an AgentRequest object")
        text = request_text(body)
        if text is None:
            return _bad_request(start_response, "input must end with a user message with text")
        session_id = body.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            session_id = str(uuid.uuid4())
        elif len(session_id) > self.MAX_ID_CHARS:
            limit = f"session_id must be at most {self.MAX_ID_CHARS} characters"
            return _bad_request(start_response, limit)
        if body.get("tools"):
            log.debug(
                "ignoring %d request tools: the agent's own tools are used", len(body["tools"])
            )
        stream = body.get("stream", True) is not False
        builder = ResponseBuilder(session_id)
        try:
            turn = self.conversations.start(caller, session_id, text)
        except MantyxError as exc:
            log.warning(
                "could not start a run for session %s: %s", loggable(session_id), loggable(exc)
            )
            failure = {"code": "agent_unavailable", "message": str(exc)}
            objects = [builder.response("created"), builder.response("failed", error=failure)]
            if not stream:
                return json_reply(start_response, objects[-1])
            return self._stream(start_response, iter(objects))
        log.debug("session %s: run %s", loggable(session_id), turn.run.id)
        pump = RunPump(turn.run, listen=True, on_end=turn.finish)
        if not stream:
            return json_reply(start_response, self._collect(builder, pump))
        items = self._objects(builder, pump)
        return self._stream(start_response, items, on_close=pump.abandon)

    def _objects(self, builder: ResponseBuilder, pump: RunPump) -> Iterator[dict[str, Any] | Tick]:
        yield builder.response("created")
        yield builder.response("in_progress")
        for item in pump.events(self._heartbeat):
            if item is Tick.HEARTBEAT:
                yield builder.heartbeat() if builder.tool_pending else Tick.HEARTBEAT
                continue
            assert isinstance(item, RunEvent)
            yield from builder.on_event(item)
        pump.wait()
        yield from builder.finish(pump.outcome.value, pump.result, pump.error)

    def _collect(self, builder: ResponseBuilder, pump: RunPump) -> dict[str, Any]:
        final: dict[str, Any] = {}
        try:
            for obj in self._objects(builder, pump):
                if isinstance(obj, dict) and obj.get("object") == "response":
                    final = obj
        finally:
            pump.abandon()  # only if reading failed part-way: the run must not burn on
        return final

    def close(self) -> None:
        """End every open session (cancelling runs still going in them)."""
        self.conversations.close()


@checked(ArgumentTypeError)
def agent_api_app(
    agent: Agent,
    *,
    authenticate: Authenticate | None = None,
    max_sessions: int = 1024,
    heartbeat: float = 15.0,
    allowed_hosts: Sequence[str] = (),
    max_body_bytes: int = ServedApp.MAX_BODY_BYTES,
) -> AgentApiApp:
    """A WSGI application serving ``agent`` over the Agent API protocol.

    :param authenticate: ``authenticate(environ)``, asked for every request
        but ``GET /health``: the caller's name (a ``str``), ``True`` for a
        caller without a name, or a false value to refuse (401). A caller
        reaches only its own sessions. See :func:`bearer_token`.
    :param max_sessions: open MANTYX sessions kept per caller (one per
        ``session_id``); past it the caller's least recently used is ended.
    :param heartbeat: seconds of silence after which a stream gets a
        ``heartbeat`` message (while a tool runs) or an SSE comment.
    :param allowed_hosts: Host names the app answers to besides ``localhost``,
        ``127.0.0.1`` and ``[::1]`` (any port); other names get 421.
        ``["*"]`` answers to any name: only behind a proxy that checks it;
        ``"0.0.0.0"`` or ``"::"``, any IP address, to callers ``authenticate``
        accepts (a server bound to every address).
    :param max_body_bytes: the largest request body accepted (413 past it); a
        body also holds at most one JSON value per 16 of these bytes.
    :raises SpecError: a bad argument (a ``ValueError``), named in the message.

    .. versionadded:: 0.2
    """
    return AgentApiApp(
        agent,
        authenticate=authenticate,
        max_sessions=max_sessions,
        heartbeat=heartbeat,
        allowed_hosts=allowed_hosts,
        max_body_bytes=max_body_bytes,
    )
