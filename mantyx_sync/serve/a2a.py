"""Serve a MANTYX agent over A2A (0.3 and 1.0) as a plain WSGI application.

::

    from mantyx_sync import Agent, serve

    app = serve.a2a_app(Agent(system_prompt="You are terse."),
                        authenticate=serve.bearer_token("s3cret"))

Mount ``app`` in any WSGI server or framework; nothing listens by itself.
Routes, relative to where it is mounted:

* ``GET /.well-known/agent-card.json`` (and the 0.3 path ``agent.json``): the card;
* ``POST /``: JSON-RPC 2.0 — ``message/send``, ``message/stream``,
  ``tasks/get``, ``tasks/cancel`` (0.3) and ``SendMessage``,
  ``SendStreamingMessage``, ``GetTask``, ``CancelTask`` (1.0);
* ``GET /health``: ``{"status": "ok"}``, without authentication.

Every other request must name an allowed Host (421 otherwise) and pass
``authenticate`` (401); a POST body must be declared JSON (415) and at most
``max_body_bytes`` (413). Conversations
and tasks belong to the caller ``authenticate`` names.

Every message becomes one A2A task following one MANTYX run. A streamed
reply is written as the run streams: the task, a ``working`` status, one
artifact chunk per ``assistant_delta``, status updates naming the tools the
agent calls, the whole answer as the last chunk, and the final status. A
comment line is written after ``heartbeat`` seconds of silence, so a client
that went away is noticed: its run is then cancelled on MANTYX.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from .._base.argcheck import checked
from .._version import __version__
from ..agent import Agent
from ..errors import ArgumentTypeError, MantyxError, SpecError
from ..events import RunEvent
from ._a2a_tasks import A2ATask, TaskStore
from ._a2a_wire import Dialect, agent_message, build_card, message_text, stream_update
from ._conversations import Conversations
from ._pump import Outcome, Tick
from ._wsgi import Authenticate, BadJson, ServedApp, StartResponse, base_url, json_reply, loggable

__all__ = ["A2AApp", "a2a_app"]

log = logging.getLogger(__name__)

CARD_PATHS: Final = ("/.well-known/agent-card.json", "/.well-known/agent.json")
CANCEL_WAIT_S: Final = 10.0

# JSON-RPC 2.0 and A2A error codes.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
TASK_NOT_FOUND: Final = -32001
TASK_NOT_CANCELABLE: Final = -32002

_SEND: Final[Mapping[str, tuple[Dialect, bool]]] = {
    "message/send": ("0.3", False),
    "message/stream": ("0.3", True),
    "SendMessage": ("1.0", False),
    "SendStreamingMessage": ("1.0", True),
}
_GET: Final[Mapping[str, Dialect]] = {"tasks/get": "0.3", "GetTask": "1.0"}
_CANCEL: Final[Mapping[str, Dialect]] = {"tasks/cancel": "0.3", "CancelTask": "1.0"}


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _result(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


class A2AApp(ServedApp):
    """The WSGI application :func:`a2a_app` returns.

    Thread-safety: one instance serves any number of requests at once.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        card: Mapping[str, Any] | None,
        conversation: Literal["auto", "stateless"],
        max_sessions: int,
        authenticate: Authenticate | None,
        heartbeat: float,
        allowed_hosts: Sequence[str],
        public_url: str | None,
        max_body_bytes: int,
    ) -> None:
        public_host = urlsplit(public_url).hostname if public_url else None
        hosts = [*allowed_hosts, *filter(None, [public_host])]
        super().__init__(authenticate, hosts, heartbeat, max_sessions, max_body_bytes)
        self.agent = agent
        self._card = dict(card) if card is not None else None
        self._public_url = public_url
        self.conversations = Conversations(
            agent, stateless=conversation == "stateless", max_sessions=max_sessions
        )
        self.tasks = TaskStore()

    def _route(self, environ: dict[str, Any], start_response: StartResponse, caller: str) -> Any:
        """The card (``GET``) and JSON-RPC (``POST /``)."""
        method, path = self._target(environ)
        if path in CARD_PATHS:
            if method not in ("GET", "HEAD"):
                return json_reply(start_response, {"error": "use GET"}, 405, [("Allow", "GET")])
            return json_reply(
                start_response, self.card(self._public_url or base_url(environ) + "/")
            )
        if path != "/":
            return json_reply(start_response, {"error": f"no route {path}"}, 404)
        if method != "POST":
            return json_reply(start_response, {"error": "use POST"}, 405, [("Allow", "POST")])
        return self._rpc(environ, start_response, caller)

    def card(self, rpc_url: str) -> dict[str, Any]:
        """The Agent Card, its endpoint at ``rpc_url``."""
        spec = self.agent.spec
        name = spec.name or spec.agent_id or "MANTYX agent"
        return build_card(
            name=name,
            description=f"{name}, a MANTYX agent served by mantyx_sync.",
            version=__version__,
            rpc_url=rpc_url,
            tools=spec.tools,
            overrides=self._card,
        )

    def close(self) -> None:
        """Cancel running tasks and end every open session."""
        for task in self.tasks.running():
            task.pump.close()
        self.conversations.close()

    def _rpc(self, environ: dict[str, Any], start_response: StartResponse, caller: str) -> Any:
        try:
            body = self._read_json(environ)
        except BadJson as exc:
            return json_reply(start_response, _error(None, PARSE_ERROR, str(exc)))
        if not isinstance(body, dict) or not isinstance(body.get("method"), str):
            return json_reply(
                start_response,
                _error(None, INVALID_REQUEST, "expected one JSON-RPC 2.0 request object"),
            )
        request_id = body.get("id")
        method = body["method"]
        params = {} if body.get("params") is None else body["params"]
        try:
            if not isinstance(params, dict):
                raise _RpcError(INVALID_PARAMS, "params must be an object")
            if method in _SEND:
                dialect, stream = _SEND[method]
                return self._send(start_response, caller, request_id, params, dialect, stream)
            if method in _GET:
                task = self._task(params, caller)
                history = params.get("historyLength")
                length = history if isinstance(history, int) else None
                result = task.to_wire(_GET[method], history_length=length)
            elif method in _CANCEL:
                result = self._cancel(self._task(params, caller), _CANCEL[method])
            else:
                raise _RpcError(METHOD_NOT_FOUND, f"method {method!r} is not supported")
        except _RpcError as exc:
            return json_reply(start_response, _error(request_id, exc.code, str(exc)))
        return json_reply(start_response, _result(request_id, result))

    def _task(self, params: Mapping[str, Any], caller: str) -> A2ATask:
        task_id = params.get("id")
        if not isinstance(task_id, str):
            raise _RpcError(INVALID_PARAMS, "params.id (the task id) must be a string")
        task = self.tasks.get(task_id, caller)
        if task is None:
            raise _RpcError(TASK_NOT_FOUND, f"task {task_id} not found")
        return task

    def _cancel(self, task: A2ATask, dialect: Dialect) -> dict[str, Any]:
        if task.done:
            raise _RpcError(TASK_NOT_CANCELABLE, f"task {task.id} is already {task.state}")
        task.pump.cancel()
        if not task.pump.wait(CANCEL_WAIT_S):
            # MANTYX did not confirm in time: stop following it (close cancels too).
            task.pump.close()
            task.pump.wait(CANCEL_WAIT_S)
        return task.to_wire(dialect)

    def _send(
        self,
        start_response: StartResponse,
        caller: str,
        request_id: Any,
        params: Mapping[str, Any],
        dialect: Dialect,
        stream: bool,
    ) -> Any:
        message = params.get("message")
        text = message_text(message)
        if text is None or not isinstance(message, Mapping):
            raise _RpcError(INVALID_PARAMS, "params.message must carry at least one text part")
        context_id = message.get("contextId")
        if not isinstance(context_id, str) or not context_id:
            context_id = str(uuid.uuid4())
        configuration = params.get("configuration")
        configuration = configuration if isinstance(configuration, Mapping) else {}
        immediately = (
            configuration.get("returnImmediately") is True or configuration.get("blocking") is False
        )
        try:
            turn = self.conversations.start(caller, context_id, text)
        except MantyxError as exc:
            log.warning(
                "could not start a run for context %s: %s", loggable(context_id), loggable(exc)
            )
            raise _RpcError(INTERNAL_ERROR, f"the agent could not start: {exc}") from exc
        task = A2ATask(
            caller=caller,
            context_id=context_id,
            user_message=dict(message),
            turn=turn,
            listen=stream,
            on_end=self.tasks.finished,
        )
        self.tasks.add(task)
        log.debug("task %s: run %s for context %s", task.id, turn.run.id, loggable(context_id))
        if stream:
            items = self._items(task, request_id, dialect)
            return self._stream(start_response, items, on_close=task.pump.abandon)
        if not immediately:
            task.pump.wait()
        result = task.to_wire(dialect)
        wrapped = {"task": result} if dialect == "1.0" else result
        return json_reply(start_response, _result(request_id, wrapped))

    def _items(self, task: A2ATask, request_id: Any, dialect: Dialect) -> Iterator[Any]:
        ids = (task.id, task.context_id, dialect)

        def status(state: str, message: dict[str, Any] | None, final: bool) -> dict[str, Any]:
            update = stream_update(ids, "status", state=state, message=message, final=final)
            return _result(request_id, update)

        def chunk(text: str, *, append: bool, last: bool) -> dict[str, Any]:
            fields = {"text": text, "artifact_id": task.artifact_id, "last_chunk": last}
            return _result(request_id, stream_update(ids, "artifact", append=append, **fields))

        first = task.to_wire(dialect)
        first["status"]["state"] = "submitted" if dialect == "0.3" else "TASK_STATE_SUBMITTED"
        first.pop("artifacts", None)
        yield _result(request_id, {"task": first} if dialect == "1.0" else first)
        yield status("working", None, False)
        appended = False
        for item in task.pump.events(self._heartbeat):
            if item is Tick.HEARTBEAT:
                yield item
                continue
            assert isinstance(item, RunEvent)
            if item.type == "assistant_delta" and item.text:
                yield chunk(item.text, append=appended, last=False)
                appended = True
            elif item.type in ("tool_call", "local_tool_call"):
                note = agent_message(f"calling {item.data.get('name') or 'a tool'}", ids)
                yield status("working", note, False)
        task.pump.wait()
        if task.pump.outcome is Outcome.COMPLETED:
            yield chunk(task.answer(), append=False, last=True)
        yield status(task.state, task.status_message(dialect), True)


@checked(ArgumentTypeError)
def a2a_app(
    agent: Agent,
    *,
    card: Mapping[str, Any] | None = None,
    conversation: Literal["auto", "stateless"] = "auto",
    max_sessions: int = 1024,
    authenticate: Authenticate | None = None,
    heartbeat: float = 15.0,
    allowed_hosts: Sequence[str] = (),
    public_url: str | None = None,
    max_body_bytes: int = ServedApp.MAX_BODY_BYTES,
) -> A2AApp:
    """A WSGI application serving ``agent`` over A2A 0.3 and 1.0 (JSON-RPC).

    :param card: Agent Card fields replacing the built ones (name, description,
        skills, provider…). The built card names the agent, turns its tools
        into skills, and advertises both protocol lines on this app's URL.
    :param conversation: ``"auto"``: each A2A ``contextId`` is one MANTYX
        session of its caller (created on first use); ``"stateless"``: every
        message is a one-shot run.
    :param max_sessions: open sessions kept per caller; past it the caller's
        least recently used one is ended on MANTYX.
    :param authenticate: ``authenticate(environ)``, asked for every request
        but ``GET /health``: the caller's name (a ``str``), ``True`` for a
        caller without a name, or a false value to refuse (401). A caller
        reaches only its own conversations and tasks. See :func:`bearer_token`.
    :param heartbeat: seconds of silence after which a stream gets a comment line.
    :param allowed_hosts: Host names the app answers to besides ``localhost``,
        ``127.0.0.1`` and ``[::1]`` (any port); other names get 421.
        ``["*"]`` answers to any name: only behind a proxy that checks it;
        ``"0.0.0.0"`` or ``"::"``, any IP address, to callers ``authenticate``
        accepts (a server bound to every address).
    :param public_url: the URL clients reach this app at (``https://example.com/a2a``),
        which the card advertises and whose host is allowed; by default the
        card names the URL of the request.
    :param max_body_bytes: the largest request body accepted (413 past it); a
        body also holds at most one JSON value per 16 of these bytes.
    :raises SpecError: a bad argument (a ``ValueError``), named in the message.

    .. versionadded:: 0.2
    """
    if public_url is not None:
        parts = urlsplit(public_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SpecError(
                "must be an http(s) URL such as https://example.com/a2a", path="public_url"
            )
        public_url = public_url.rstrip("/") + "/"
    return A2AApp(
        agent,
        card=card,
        conversation=conversation,
        max_sessions=max_sessions,
        authenticate=authenticate,
        heartbeat=heartbeat,
        allowed_hosts=allowed_hosts,
        public_url=public_url,
        max_body_bytes=max_body_bytes,
    )
