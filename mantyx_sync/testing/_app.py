"""The emulator's WSGI application on werkzeug: routes, auth, the route handlers, request faults.

Every workspace route lives under ``/api/v1/workspaces/<ws>``; the OAuth
server's routes sit beside them. A handler takes werkzeug's request and the
route's path values and returns werkzeug's response; it raises
:func:`_failure` to answer a JSON error ``{"error": ..., "message": ...}``.
It is the one module of the emulator that imports werkzeug at run time;
:class:`~mantyx_sync.testing.LocalMantyx` loads it only once the app is needed.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import attrs
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from ._catalog import ModelNotFound, models_body
from ._evaluation import EmulatedEval
from ._history import replay_body, run_list_body, session_list_body
from ._ratelimit import RateLimiter
from ._serving import KeepAliveServer
from ._sse import drop_connection, stream_frames
from ._state import EmulatorState
from ._validation import InvalidRequest, validate_message_body, validate_spec, validate_tool_result
from .oauth import OAuthReply, OAuthServer, TokenRejected, bearer_token
from .recorder import RecordedRequest, mask_headers
from .runs import EmulatedRun
from .sessions import EmulatedSession

__all__ = ["EmulatorApp"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

# method, path under the workspace, OAuth scope, rate-limit bucket, EmulatorApp handler
_WORKSPACE_ROUTES = (
    ("GET", "/models", "models:read", "reads", "_models"),
    ("GET", "/agent-runs", "runs:read", "reads", "_list_runs"),
    ("POST", "/agent-runs", "runs:write", "runs", "_create_run"),
    ("GET", "/agent-runs/<run_id>", "runs:read", "reads", "_get_run"),
    ("GET", "/agent-runs/<run_id>/stream", "runs:read", "reads", "_stream"),
    ("POST", "/agent-runs/<run_id>/tool-results", "runs:write", "lifecycle", "_tool_result"),
    ("POST", "/agent-runs/<run_id>/cancel", "runs:write", "lifecycle", "_cancel"),
    ("POST", "/agent-runs/<run_id>/feedback", "feedback:write", "lifecycle", "_feedback"),
    ("GET", "/reply-feedback", "feedback:read", "reads", "_list_feedback"),
    ("GET", "/eval-datasets", "evals:read", "reads", "_eval_datasets"),
    ("GET", "/eval-datasets/<dataset_id>", "evals:read", "reads", "_eval_dataset"),
    ("POST", "/eval-runs", "evals:write", "mutations", "_start_eval"),
    ("GET", "/eval-runs", "evals:read", "reads", "_list_evals"),
    ("GET", "/eval-runs/compare", "evals:read", "reads", "_compare_evals"),
    ("GET", "/eval-runs/<eval_id>", "evals:read", "reads", "_get_eval"),
    ("GET", "/eval-runs/<eval_id>/stream", "evals:read", "reads", "_eval_stream"),
    ("POST", "/eval-runs/<eval_id>/cancel", "evals:write", "lifecycle", "_cancel_eval"),
    ("POST", "/agent-sessions", "sessions:write", "mutations", "_create_session"),
    ("GET", "/agent-sessions", "sessions:read", "reads", "_list_sessions"),
    ("GET", "/agent-sessions/<session_id>", "sessions:read", "reads", "_get_session"),
    ("GET", "/agent-sessions/<session_id>/events", "sessions:read", "reads", "_replay"),
    ("POST", "/agent-sessions/<session_id>/messages", "sessions:write", "runs", "_message"),
    ("DELETE", "/agent-sessions/<session_id>", "sessions:write", "mutations", "_end_session"),
)
# method, path, OAuthServer.handle endpoint; these routes take no API credential
_OAUTH_ROUTES = (
    ("GET", "/.well-known/oauth-authorization-server", "metadata"),
    ("GET", "/api/oauth/authorize", "authorize"),
    ("POST", "/api/oauth/token", "token"),
    ("POST", "/api/oauth/revoke", "revoke"),
    ("GET", "/api/oauth/userinfo", "userinfo"),
)
# Endpoints are (handler, scope, bucket); an OAuth route's scope is None.
_ROUTES = Map(
    [
        Rule(f"/api/v1/workspaces/<ws>{path}", methods=[method], endpoint=(handler, scope, bucket))
        for method, path, scope, bucket, handler in _WORKSPACE_ROUTES
    ]
    + [
        Rule(path, methods=[method], endpoint=(name, None, None))
        for method, path, name in _OAUTH_ROUTES
    ],
    strict_slashes=False,  # "/models/" is "/models"
    merge_slashes=False,  # no redirects
)

# The error code an injected fault answers with, by status.
_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    429: "rate_limited",
    500: "internal_error",
    502: "bad_gateway",
    503: "unavailable",
    504: "timeout",
}


def _json(status: int, body: Any = None, headers: Mapping[str, str] | None = None) -> Response:
    """An answer with the JSON ``body`` (``None``: no body)."""
    if body is None:
        return Response(status=status, headers=headers)
    text = json.dumps(body, ensure_ascii=False)
    return Response(text, status, headers, content_type="application/json")


def _failure(
    status: int, error: str, message: str, headers: Mapping[str, str] | None = None, **extra: Any
) -> HTTPException:
    """The exception to raise to answer ``{"error": error, "message": message, **extra}``."""
    body = {"error": error, "message": message, **extra}
    return HTTPException(response=_json(status, body, headers))


def _found(value: _T | None, what: str) -> _T:
    """``value``, or a 404 saying ``what`` was not found."""
    if value is None:
        raise _failure(404, "not_found", f"{what} not found")
    return value


def _injected(status: int, what: str, headers: Mapping[str, str] | None = None) -> Response:
    """An injected fault's answer, with the usual error code of ``status``."""
    body = {"error": _CODES.get(status, "error"), "message": f"injected {what}"}
    return _json(status, body, headers)


def _events(frames: Iterator[bytes]) -> Response:
    """A server-sent event stream; werkzeug's server writes and flushes each chunk at once."""
    return Response(
        frames,
        200,
        {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        content_type="text/event-stream; charset=utf-8",
        direct_passthrough=True,
    )


def _scope_sets(tokens: Mapping[str, Iterable[str]]) -> dict[str, frozenset[str]]:
    return {token: frozenset(scopes) for token, scopes in tokens.items()}


class _Request(Request):
    """werkzeug's request; a body that is not JSON where one is needed answers 400."""

    def on_json_loading_failed(self, e: ValueError | None) -> Any:
        message = "the body is not valid JSON" if self.get_data() else "a JSON body is required"
        raise _failure(400, "invalid_request", message) from e


class _Dropped(Exception):
    """Raised to answer nothing at all: the connection is cut (recorded with status 0)."""


@attrs.define(kw_only=True, repr=False, eq=False, slots=False)
class EmulatorApp:
    """The WSGI callable serving the MANTYX agent-runs API from an :class:`EmulatorState`.

    Thread-safety: one instance serves every request thread at once.
    """

    state: EmulatorState
    api_key: str
    workspace: str
    oauth_tokens: Mapping[str, frozenset[str]] = attrs.field(converter=_scope_sets)
    create_status: int
    tool_result_status: int
    keepalive: float | None
    oauth: OAuthServer
    rate_limiter: RateLimiter | None = None
    stop_event: threading.Event = attrs.Factory(threading.Event)
    wakeup: Any = None

    def serve(self, host: str, port: int) -> KeepAliveServer:
        """A threaded server for this app, bound but not yet serving."""
        return KeepAliveServer(host, port, self)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = _Request(environ)
        response: Response | None
        try:
            response = self._answer(request)
        except HTTPException as exc:
            response = exc.get_response(environ)
        except InvalidRequest as exc:
            response = _json(400, {"error": "invalid_request", "message": str(exc)})
        except ModelNotFound as exc:
            body = {"error": "invalid_model", "message": str(exc), "candidates": exc.candidates}
            response = _json(400, body)
        except _Dropped:
            response = None
        status = 0 if response is None else response.status_code
        recorded = RecordedRequest(
            method=request.method,
            path=request.path,
            query=dict(request.args.items(multi=True)),
            headers=mask_headers(request.headers, (self.api_key, *self.oauth_tokens)),
            json=request.get_json(force=True, silent=True),
            status=status,
        )
        with self.state.cond:
            self.state.requests.append(recorded)
        log.debug("%s %s -> %s", request.method, request.path, status or "dropped")
        if response is None:
            drop_connection(environ.get("werkzeug.socket"))
            response = Response(status=500)
        return response(environ, start_response)

    def _answer(self, request: Request) -> Response:
        rule = self.state.request_faults.take(request.method, request.path)
        if rule is None:
            return self._route(request)
        log.debug("fault: fail_next rule hit %s %s", request.method, request.path)
        if rule.applied:
            # The server acts on the request, then the answer is lost.
            self._route(request).close()
        if rule.drop:
            raise _Dropped
        if rule.body is None:
            return _injected(rule.status, "by fail_next", rule.headers)
        return _json(rule.status, rule.body, rule.headers)

    def _route(self, request: Request) -> Response:
        try:
            endpoint, args = _ROUTES.bind_to_environ(request.environ).match()
        except MethodNotAllowed as exc:
            allowed = {"Allow": ", ".join(exc.valid_methods or ())}
            message = f"{request.method} is not allowed on {request.path}"
            raise _failure(405, "method_not_allowed", message, allowed) from None
        except NotFound:
            self._authenticate(request)
            message = f"no route for {request.method} {request.path}"
            raise _failure(404, "not_found", message) from None
        handler, scope, bucket = endpoint
        if scope is None:
            reply: OAuthReply = self.oauth.handle(handler, request)
            return _json(reply.status, reply.body, reply.headers)
        credential, scopes = self._authenticate(request)
        values = dict(args)
        workspace = values.pop("ws")
        if workspace != self.workspace:
            message = f"workspace '{workspace}' does not match this credential"
            raise _failure(404, "not_found", message, hint=self.workspace)
        if scopes is not None and scope not in scopes:
            challenge = {"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'}
            message = f"this token lacks the {scope} scope"
            raise _failure(403, "insufficient_scope", message, challenge, required=scope)
        limits = self._rate_limit(credential, bucket)
        response: Response = getattr(self, handler)(request, **values)
        response.headers.update(limits)
        return response

    def _rate_limit(self, credential: str, bucket: str) -> dict[str, str]:
        """Count the request on its bucket; the headers to send, or a 429."""
        if self.rate_limiter is None:
            return {}
        allowed, headers = self.rate_limiter.take(credential, bucket)
        if not allowed:
            message = f"rate limit of the {bucket} bucket exceeded"
            raise _failure(429, "Too many requests", message, headers, code="rate_limit_exceeded")
        return headers

    def _authenticate(self, request: Request) -> tuple[str, frozenset[str] | None]:
        """The credential and its OAuth scopes (``None`` for the API key: all routes)."""
        credential = bearer_token(request.headers.get("Authorization", ""))
        credential = credential or request.headers.get("X-API-Key", "").strip()
        if credential and credential == self.api_key:
            return credential, None
        if credential in self.oauth_tokens:
            return credential, self.oauth_tokens[credential]
        try:
            scopes = self.oauth.scopes_of(credential) if credential else None
        except TokenRejected as exc:
            raise _failure(401, "invalid_token", str(exc), exc.challenge) from None
        if scopes is not None:
            return credential, scopes
        message = "invalid API key" if credential else "missing API key"
        raise _failure(401, "unauthorized", message, {"WWW-Authenticate": "Bearer"})

    def _run(self, run_id: str) -> EmulatedRun:
        return _found(self.state.runs.get(run_id), f"run {run_id}")

    def _session(self, session_id: str) -> EmulatedSession:
        return _found(self.state.sessions.get(session_id), f"session {session_id}")

    def _eval(self, eval_id: str) -> EmulatedEval:
        return _found(self.state.evals.get(eval_id), f"evaluation {eval_id}")

    def _created(self, run: EmulatedRun) -> Response:
        stream = f"/api/v1/workspaces/{self.workspace}/agent-runs/{run.id}/stream"
        return _json(self.create_status, {"runId": run.id, "streamUrl": stream})

    def _models(self, request: Request) -> Response:
        return _json(200, models_body())

    def _create_run(self, request: Request) -> Response:
        body = request.get_json(force=True)
        validate_spec(body, mode="run")
        return self._created(self.state.create_run(body))

    def _get_run(self, request: Request, run_id: str) -> Response:
        return _json(200, self._run(run_id).snapshot())

    def _stream(self, request: Request, run_id: str) -> Response:
        run = self._run(run_id)
        status = run.faults.take_stream_open_error()
        if status is not None:
            log.debug("fault: stream open of run %s answers %d", run.id, status)
            return _injected(status, "stream open error")
        raw = request.args.get("lastSeq") or request.headers.get("Last-Event-ID") or "0"
        try:
            resume = max(0, int(raw.strip()))
        except ValueError:
            raise _failure(400, "invalid_request", "lastSeq must be an integer") from None
        with run.cond:
            run.stream_connections += 1
        frames = stream_frames(
            run,
            resume_seq=resume,
            keepalive=self.keepalive,
            sock=request.environ.get("werkzeug.socket"),
            wakeup=self.wakeup,
            stop=self.stop_event,
        )
        return _events(frames)

    def _tool_result(self, request: Request, run_id: str) -> Response:
        run = self._run(run_id)
        fault = run.faults.take_tool_result_fault()
        faults = run.faults.faults
        if fault == "error":
            return _injected(faults.tool_result_error_status, "tool-result error")
        if fault == "rate_limited":
            body = {"error": "rate_limited", "code": "rate_limit_exceeded"}
            body["message"] = "injected rate limit"
            return _json(429, body, {"Retry-After": f"{faults.retry_after:g}"})
        body = request.get_json(force=True)
        validate_tool_result(body)
        outcome = run.post_tool_result(body)
        if outcome == "terminal":
            raise _failure(409, "run_terminal", f"run {run.id} has already ended")
        if outcome == "unknown":
            message = f"no pending tool call {body['toolUseId']} on run {run.id}"
            raise _failure(404, "unknown_tool_use", message)
        if fault == "accept_then_drop":
            raise _Dropped
        status = self.tool_result_status
        return _json(status, None if status == 204 else {"ok": True})

    def _cancel(self, request: Request, run_id: str) -> Response:
        self._run(run_id).cancel()
        return _json(200, {"ok": True})

    def _feedback(self, request: Request, run_id: str) -> Response:
        run = self._run(run_id)
        status, record = self.state.feedback.give(run.id, request.get_json(force=True))
        return _json(status, record)

    def _list_feedback(self, request: Request) -> Response:
        return _json(200, self.state.feedback.list_body(request.args))

    def _create_session(self, request: Request) -> Response:
        body = request.get_json(force=True)
        validate_spec(body, mode="session")
        return _json(201, {"sessionId": self.state.create_session(body).id})

    def _get_session(self, request: Request, session_id: str) -> Response:
        return _json(200, self._session(session_id).snapshot())

    def _message(self, request: Request, session_id: str) -> Response:
        session = self._session(session_id)
        if session.status != "active":
            raise _failure(409, "session_ended", f"session {session.id} has ended")
        body = request.get_json(force=True)
        validate_message_body(body)
        return self._created(self.state.create_run(body, session))

    def _end_session(self, request: Request, session_id: str) -> Response:
        self.state.end_session(self._session(session_id))
        return _json(200, {"ok": True})

    def _list_runs(self, request: Request) -> Response:
        with self.state.cond:
            runs = list(self.state.runs.values())
        return _json(200, run_list_body(runs, request.args, request.args.getlist("metadata")))

    def _list_sessions(self, request: Request) -> Response:
        with self.state.cond:
            sessions = list(self.state.sessions.values())
        metadata = request.args.getlist("metadata")
        return _json(200, session_list_body(sessions, request.args, metadata))

    def _replay(self, request: Request, session_id: str) -> Response:
        return _json(200, replay_body(self._session(session_id), request.args))

    def _eval_datasets(self, request: Request) -> Response:
        return _json(200, self.state.evals.datasets_body())

    def _eval_dataset(self, request: Request, dataset_id: str) -> Response:
        return _json(200, _found(self.state.evals.dataset(dataset_id), f"dataset {dataset_id}"))

    def _start_eval(self, request: Request) -> Response:
        try:
            evaluation = self.state.evals.start(request.get_json(force=True))
        except LookupError as exc:
            raise _failure(404, "not_found", str(exc)) from exc
        stream = f"/api/v1/workspaces/{self.workspace}/eval-runs/{evaluation.id}/stream"
        body = {"runId": evaluation.id, "status": evaluation.status, "streamUrl": stream}
        return _json(201, body)

    def _list_evals(self, request: Request) -> Response:
        return _json(200, self.state.evals.list_body(request.args))

    def _get_eval(self, request: Request, eval_id: str) -> Response:
        return _json(200, self._eval(eval_id).detail())

    def _compare_evals(self, request: Request) -> Response:
        a, b = request.args.get("a"), request.args.get("b")
        if not a or not b:
            raise _failure(400, "invalid_request", "compare needs ?a= and ?b=")
        return _json(200, self.state.evals.compare_body(self._eval(a), self._eval(b)))

    def _eval_stream(self, request: Request, eval_id: str) -> Response:
        sock = request.environ.get("werkzeug.socket")
        return _events(self._eval(eval_id).stream(self.stop_event, sock))

    def _cancel_eval(self, request: Request, eval_id: str) -> Response:
        return _json(200, {"ok": self._eval(eval_id).cancel()})
