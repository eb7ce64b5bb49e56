"""Serve a MANTYX agent over A2A (0.3 and 1.0) as a plain WSGI application.

::

    from mantyx_sync import Agent, serve

    app = serve.a2a_app(Agent(system_prompt="You are terse."),
                        authenticate=serve.bearer_token("s3cret"))

Mount ``app`` in any WSGI server or framework; nothing listens by itself.
Routes, relative to where it is mounted:

* ``GET /.well-known/agent-card.json`` (and the 0.3 path ``agent.json``): the card,
  readable without credentials, cacheable (``ETag``, ``max-age``); with an
  ``A2A-Version: 1.0`` header, in the 1.0 card schema alone;
* ``POST /``: JSON-RPC 2.0 — every operation of both lines (see the guide's table):
  send, stream, get, cancel and resubscribe (0.3 ``tasks/resubscribe``, 1.0
  ``SubscribeToTask``), ``ListTasks`` (1.0); push notifications and the
  extended card are answered with the errors the specifications give;
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
that went away is noticed: its run is then cancelled on MANTYX (a client that
resubscribed and went away leaves the run going).
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal
from urllib.parse import urlsplit

from .._base.argcheck import checked
from .._version import __version__
from ..agent import Agent
from ..errors import ArgumentTypeError, MantyxError, SpecError
from ..events import RunEvent
from ._a2a_params import history_length, list_query, read_message, task_id
from ._a2a_rpc import (
    METHODS,
    STREAMING,
    Request,
    RpcError,
    camel_keys,
    error_reply,
    read_request,
    result_reply,
    version_of,
)
from ._a2a_tasks import A2ATask, TaskStore
from ._a2a_wire import INPUT_MODES, Dialect, agent_message, build_card, stream_update
from ._auth import BearerHook
from ._conversations import Conversations
from ._pump import Tick
from ._wsgi import (
    Authenticate,
    BadJson,
    ServedApp,
    StartResponse,
    base_url,
    json_reply,
    loggable,
)

__all__ = ["A2AApp", "a2a_app"]

log: logging.Logger = logging.getLogger(__name__)

CARD_PATHS: Final = ("/.well-known/agent-card.json", "/.well-known/agent.json")
CARD_MAX_AGE_S: Final = 300
CANCEL_WAIT_S: Final = 10.0


class A2AApp(ServedApp):
    """The WSGI application :func:`a2a_app` returns.

    Thread-safety: one instance serves any number of requests at once.
    """

    PUBLIC_PATHS: ClassVar[frozenset[str]] = frozenset(CARD_PATHS)

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
        self._bearer = isinstance(authenticate, BearerHook)
        modes = (self._card or {}).get("defaultInputModes")
        self._input_modes = [str(m) for m in modes] if isinstance(modes, list) else INPUT_MODES
        self._public_url = public_url
        self.conversations: Conversations = Conversations(
            agent, stateless=conversation == "stateless", max_sessions=max_sessions
        )
        self.tasks: TaskStore = TaskStore()

    def _route(self, environ: dict[str, Any], start_response: StartResponse, caller: str) -> Any:
        """The card (``GET``) and JSON-RPC (``POST /``)."""
        method, path = self._target(environ)
        if path in CARD_PATHS:
            if method not in ("GET", "HEAD"):
                return json_reply(start_response, {"error": "use GET"}, 405, [("Allow", "GET")])
            return self._card_reply(environ, start_response)
        if path != "/":
            return json_reply(start_response, {"error": f"no route {path}"}, 404)
        if method != "POST":
            return json_reply(start_response, {"error": "use POST"}, 405, [("Allow", "POST")])
        return self._rpc(environ, start_response, caller)

    def card(self, rpc_url: str, dialect: Dialect | None = None) -> dict[str, Any]:
        """The Agent Card, its endpoint at ``rpc_url``: for ``dialect`` ``"1.0"`` in the 1.0
        card schema alone, else also carrying what 0.3 clients read."""
        spec = self.agent.spec
        name = spec.name or spec.agent_id or "MANTYX agent"
        return build_card(
            name=name,
            description=f"{name}, a MANTYX agent served by mantyx_sync.",
            version=__version__,
            rpc_url=rpc_url,
            tools=spec.tools,
            overrides=self._card,
            bearer=self._bearer,
            dialect=dialect,
        )

    def _card_reply(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        try:
            dialect = version_of(environ)
        except RpcError:
            dialect = None  # a version this app does not speak gets the card naming both
        card = self.card(self._public_url or base_url(environ) + "/", dialect)
        data = json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        etag = f'"{hashlib.sha256(data).hexdigest()[:32]}"'
        headers = [
            ("ETag", etag),
            ("Cache-Control", f"max-age={CARD_MAX_AGE_S}"),
            ("Vary", "A2A-Version"),
        ]
        wanted = environ.get("HTTP_IF_NONE_MATCH", "")
        if any(tag.strip().removeprefix("W/") in (etag, "*") for tag in wanted.split(",")):
            start_response("304 Not Modified", headers)
            return []
        content = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
        start_response("200 OK", [*content, *headers])
        return [data]

    def close(self) -> None:
        """Cancel running tasks and end every open session."""
        for task in self.tasks.running():
            task.close()
        self.conversations.close()

    def _rpc(self, environ: dict[str, Any], start_response: StartResponse, caller: str) -> Any:
        try:
            body = self._read_json(environ)
        except BadJson as exc:
            error = RpcError("PARSE_ERROR", str(exc))
            return json_reply(start_response, error_reply(None, error, None))
        dialect: Dialect | None = None
        stream = False
        try:
            request = read_request(body)
            asked = version_of(environ)
            dialect = asked
            operation, dialect = self._operation(request, asked)
            stream = operation in STREAMING
            params = camel_keys(request.params) if dialect == "1.0" else request.params
            return self._dispatch(start_response, caller, request, operation, dialect, params)
        except RpcError as exc:
            if exc.kind == "VERSION_NOT_SUPPORTED":
                dialect = "1.0"
            request_id = exc.request_id
            if isinstance(body, dict) and exc.kind != "INVALID_REQUEST":
                request_id = body.get("id")
            reply = error_reply(request_id, exc, dialect)
            if stream:
                return self._stream(start_response, iter([reply]))
            return json_reply(start_response, reply)

    @staticmethod
    def _operation(request: Request, asked: Dialect | None) -> tuple[str, Dialect]:
        found = METHODS.get(request.method)
        if found is None:
            raise RpcError(
                "METHOD_NOT_FOUND",
                f"method {request.method[:100]!r} is not an A2A method",
                method=request.method[:100],
            )
        operation, dialect = found
        if asked is not None and asked != dialect:
            raise RpcError(
                "METHOD_NOT_FOUND",
                f"{request.method} is an A2A {dialect} method, but the request says "
                f"A2A-Version {asked}",
                method=request.method,
            )
        return operation, dialect

    def _dispatch(
        self,
        start_response: StartResponse,
        caller: str,
        request: Request,
        operation: str,
        dialect: Dialect,
        params: dict[str, Any],
    ) -> Any:
        if operation in ("send", "stream"):
            return self._send(start_response, caller, request.id, params, dialect, operation)
        if operation == "subscribe":
            task = self._task(params, caller)
            events = task.subscribe(self._heartbeat)
            if events is None:
                raise _finished(task, "a finished task has no updates to subscribe to")
            items = self._updates(task, request.id, dialect, events, fresh=False)
            return self._stream(start_response, items)
        if operation == "get":
            length = history_length(params.get("historyLength"), "params.historyLength")
            result: Any = self._task(params, caller).to_wire(dialect, history_length=length)
        elif operation == "cancel":
            result = self._cancel(self._task(params, caller), dialect)
        elif operation == "list":
            result = self._list(params, caller)
        elif operation == "push":
            raise RpcError(
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                "this agent sends no push notifications (its card says pushNotifications: "
                "false); stream the task or poll it instead",
            )
        elif dialect == "0.3":  # the extended card
            raise RpcError(
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
                "this agent has no authenticated extended card",
            )
        else:
            raise RpcError(
                "UNSUPPORTED_OPERATION",
                "this agent has no extended card (its card says extendedAgentCard: false)",
            )
        return json_reply(start_response, result_reply(request.id, result))

    def _task(self, params: Mapping[str, Any], caller: str) -> A2ATask:
        return self._find(task_id(params), caller)

    def _find(self, wanted: str, caller: str) -> A2ATask:
        task = self.tasks.get(wanted, caller)
        if task is None:
            message = f"task {wanted} not found"
            raise RpcError("TASK_NOT_FOUND", message, taskId=wanted)
        return task

    def _cancel(self, task: A2ATask, dialect: Dialect) -> dict[str, Any]:
        if task.done:
            raise RpcError(
                "TASK_NOT_CANCELABLE",
                f"task {task.id} is already {task.state}",
                taskId=task.id,
            )
        task.cancel(CANCEL_WAIT_S)
        return task.to_wire(dialect)

    def _list(self, params: Mapping[str, Any], caller: str) -> dict[str, Any]:
        query = list_query(params)
        tasks, total, token = self.tasks.page(caller, query)
        shown = [
            task.to_wire(
                "1.0", history_length=query.history_length, artifacts=query.include_artifacts
            )
            for task in tasks
        ]
        return {
            "tasks": shown,
            "nextPageToken": token,
            "pageSize": query.page_size,
            "totalSize": total,
        }

    def _send(
        self,
        start_response: StartResponse,
        caller: str,
        request_id: Any,
        params: Mapping[str, Any],
        dialect: Dialect,
        operation: str,
    ) -> Any:
        incoming = read_message(params, dialect, self._input_modes)
        configuration = params.get("configuration")
        if configuration is None:
            configuration = {}
        if not isinstance(configuration, Mapping):
            raise RpcError("INVALID_PARAMS", "params.configuration must be an object")
        length = history_length(
            configuration.get("historyLength"), "params.configuration.historyLength"
        )
        immediately = (
            configuration.get("returnImmediately") is True or configuration.get("blocking") is False
        )
        context_id = incoming.context_id
        if incoming.task_id is not None:
            self._continues(incoming.task_id, context_id, caller)
        context_id = context_id or str(uuid.uuid4())
        try:
            turn = self.conversations.start(caller, context_id, incoming.text)
        except MantyxError as exc:
            log.warning(
                "could not start a run for context %s: %s", loggable(context_id), loggable(exc)
            )
            raise RpcError("INTERNAL_ERROR", f"the agent could not start: {exc}") from exc
        task = A2ATask(
            caller=caller,
            context_id=context_id,
            user_message=incoming.message,
            turn=turn,
            listen=operation == "stream",
            on_end=self.tasks.finished,
        )
        self.tasks.add(task)
        log.debug("task %s: run %s for context %s", task.id, turn.run.id, loggable(context_id))
        if operation == "stream":
            events = task.stream(self._heartbeat)
            items = self._updates(task, request_id, dialect, events, fresh=True)
            return self._stream(start_response, items, on_close=task.abandon)
        if not immediately:
            task.wait()
        result = task.to_wire(dialect, history_length=length)
        wrapped = {"task": result} if dialect == "1.0" else result
        return json_reply(start_response, result_reply(request_id, wrapped))

    def _continues(self, wanted: str, context_id: str | None, caller: str) -> None:
        """Refuse a message naming task ``wanted``: each task here answers one message."""
        task = self._find(wanted, caller)
        if context_id is not None and context_id != task.context_id:
            raise RpcError(
                "INVALID_PARAMS",
                f"params.message.contextId does not match task {task.id}'s contextId "
                f"{task.context_id}; leave it out or send the task's",
            )
        if task.done:
            raise _finished(task, "a finished task takes no more messages")
        raise RpcError(
            "UNSUPPORTED_OPERATION",
            f"task {task.id} is still working and takes no more input; wait for it (or "
            f"cancel it), then send a new message with contextId {task.context_id}",
            taskId=task.id,
        )

    def _updates(
        self,
        task: A2ATask,
        request_id: Any,
        dialect: Dialect,
        events: Iterator[RunEvent | Tick],
        *,
        fresh: bool,
    ) -> Iterator[Any]:
        """A stream's items: the task as it stands (``submitted`` when ``fresh``, then
        reported ``working``), its updates from ``events``, the answer, the end."""
        ids = (task.id, task.context_id, dialect)

        def status(state: str, message: dict[str, Any] | None, final: bool) -> dict[str, Any]:
            update = stream_update(ids, "status", state=state, message=message, final=final)
            return result_reply(request_id, update)

        def chunk(text: str, *, append: bool, last: bool) -> dict[str, Any]:
            fields = {"text": text, "artifact_id": task.artifact_id, "last_chunk": last}
            return result_reply(request_id, stream_update(ids, "artifact", append=append, **fields))

        first = task.to_wire(dialect)
        appended = not fresh and bool(task.answer())
        if fresh:
            first["status"]["state"] = "submitted" if dialect == "0.3" else "TASK_STATE_SUBMITTED"
            first.pop("artifacts", None)
        yield result_reply(request_id, {"task": first} if dialect == "1.0" else first)
        if fresh:
            yield status("working", None, False)
        for item in events:
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
        task.wait()
        if task.state == "completed":
            yield chunk(task.answer(), append=False, last=True)
        yield status(task.state, task.status_message(dialect), True)


def _finished(task: A2ATask, why: str) -> RpcError:
    return RpcError(
        "UNSUPPORTED_OPERATION",
        f"task {task.id} is already {task.state}: {why}; send a new message with "
        f"contextId {task.context_id} to continue the conversation",
        taskId=task.id,
    )


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
