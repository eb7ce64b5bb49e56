"""The emulator's WSGI application: routing, auth, the route handlers, request faults.

Plain WSGI (no framework) keeps the hot paths — the event stream and
tool-result POSTs — short. Every route lives under
``/api/v1/workspaces/{workspace}`` (agent-runs §2). The request, response and
JSON-error values the handlers use are in :mod:`._wsgi`.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._catalog import ModelNotFound, models_body
from ._evaluation import EmulatedEval
from ._faults import RequestFaults
from ._history import replay_body, run_list_body, session_list_body
from ._oauth import OAuthServer, TokenRejected, parse_form
from ._ratelimit import RateLimiter, bucket_for
from ._recorder import RecordedRequest, Recorder, mask_headers
from ._runs import EmulatedRun
from ._sessions import EmulatedSession
from ._sse import drop_connection, stream_frames
from ._state import EmulatorState
from ._validation import (
    InvalidRequest,
    validate_message_body,
    validate_spec,
    validate_tool_result,
)
from ._wsgi import (
    BAD_JSON,
    NO_BODY,
    HTTPError,
    Request,
    Response,
    StartResponse,
    default_code,
    read_body,
    status_line,
)

__all__ = ["EmulatorApp"]

log = logging.getLogger(__name__)

_PREFIX = re.compile(r"^/api/v1/workspaces/(?P<ws>[^/]+)(?P<rest>/.*)?$")


# (method, path pattern under the workspace prefix, OAuth scope, handler name)
_ROUTES: tuple[tuple[str, re.Pattern[str], str, str], ...] = tuple(
    (method, re.compile(pattern), scope, handler)
    for method, pattern, scope, handler in (
        ("GET", r"^/models/?$", "models:read", "_models"),
        ("GET", r"^/agent-runs/?$", "runs:read", "_list_runs"),
        ("POST", r"^/agent-runs/?$", "runs:write", "_create_run"),
        ("GET", r"^/agent-runs/(?P<id>[^/]+)/?$", "runs:read", "_get_run"),
        ("GET", r"^/agent-runs/(?P<id>[^/]+)/stream/?$", "runs:read", "_stream"),
        ("POST", r"^/agent-runs/(?P<id>[^/]+)/tool-results/?$", "runs:write", "_tool_result"),
        ("POST", r"^/agent-runs/(?P<id>[^/]+)/cancel/?$", "runs:write", "_cancel"),
        ("POST", r"^/agent-runs/(?P<id>[^/]+)/feedback/?$", "feedback:write", "_feedback"),
        ("GET", r"^/reply-feedback/?$", "feedback:read", "_list_feedback"),
        ("GET", r"^/eval-datasets/?$", "evals:read", "_eval_datasets"),
        ("GET", r"^/eval-datasets/(?P<id>[^/]+)/?$", "evals:read", "_eval_dataset"),
        ("POST", r"^/eval-runs/?$", "evals:write", "_start_eval"),
        ("GET", r"^/eval-runs/?$", "evals:read", "_list_evals"),
        ("GET", r"^/eval-runs/compare/?$", "evals:read", "_compare_evals"),
        ("GET", r"^/eval-runs/(?P<id>[^/]+)/?$", "evals:read", "_get_eval"),
        ("GET", r"^/eval-runs/(?P<id>[^/]+)/stream/?$", "evals:read", "_eval_stream"),
        ("POST", r"^/eval-runs/(?P<id>[^/]+)/cancel/?$", "evals:write", "_cancel_eval"),
        ("POST", r"^/agent-sessions/?$", "sessions:write", "_create_session"),
        ("GET", r"^/agent-sessions/?$", "sessions:read", "_list_sessions"),
        ("GET", r"^/agent-sessions/(?P<id>[^/]+)/events/?$", "sessions:read", "_replay"),
        ("GET", r"^/agent-sessions/(?P<id>[^/]+)/?$", "sessions:read", "_get_session"),
        ("POST", r"^/agent-sessions/(?P<id>[^/]+)/messages/?$", "sessions:write", "_message"),
        ("DELETE", r"^/agent-sessions/(?P<id>[^/]+)/?$", "sessions:write", "_end_session"),
    )
)


class EmulatorApp:
    """The WSGI callable serving the MANTYX agent-runs API from an :class:`EmulatorState`.

    Thread-safety: one instance serves every request thread at once.
    """

    def __init__(
        self,
        *,
        state: EmulatorState,
        api_key: str,
        workspace: str,
        oauth_tokens: Mapping[str, Iterable[str]],
        create_status: int,
        tool_result_status: int,
        keepalive: float | None,
        recorder: Recorder,
        request_faults: RequestFaults,
        oauth: OAuthServer,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        self.state = state
        self.api_key = api_key
        self.workspace = workspace
        self.oauth_tokens = {token: frozenset(scopes) for token, scopes in oauth_tokens.items()}
        self.create_status = create_status
        self.tool_result_status = tool_result_status
        self.keepalive = keepalive
        self.recorder = recorder
        self.request_faults = request_faults
        self.oauth = oauth
        self.rate_limiter = rate_limiter
        self.stop_event = threading.Event()
        self.wakeup: Any = None
        self._secrets = (api_key, *self.oauth_tokens)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Serve one request (WSGI)."""
        request = Request(environ, read_body(environ))
        try:
            response = self._handle(request)
        except HTTPError as exc:
            response = Response(exc.status, exc.body, exc.headers)
        self.recorder.add(
            RecordedRequest(
                method=request.method,
                path=request.path,
                query=request.query,
                headers=mask_headers(environ, self._secrets),
                json=None if request.body is NO_BODY or request.body is BAD_JSON else request.body,
                status=0 if response.drop else response.status,
            )
        )
        log.debug(
            "%s %s -> %s",
            request.method,
            request.path,
            "dropped" if response.drop else response.status,
        )
        if response.drop:
            drop_connection(environ.get("werkzeug.socket"))
            start_response(status_line(500), [("Content-Length", "0")])
            return []
        headers = list(response.headers.items())
        if response.stream is not None:
            headers += [
                ("Content-Type", "text/event-stream; charset=utf-8"),
                ("Cache-Control", "no-cache"),
                ("X-Accel-Buffering", "no"),
            ]
            start_response(status_line(response.status), headers)
            return response.stream
        if response.body is NO_BODY or response.status == 204:
            start_response(status_line(response.status), [*headers, ("Content-Length", "0")])
            return []
        payload = json.dumps(response.body, ensure_ascii=False).encode("utf-8")
        headers += [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
        start_response(status_line(response.status), headers)
        return [payload]

    def _handle(self, request: Request) -> Response:
        rule = self.request_faults.take(request.method, request.path)
        if rule is not None and rule.applied:
            # The server acts on the request, then the answer is lost.
            log.debug("fault: applying, then dropping %s %s", request.method, request.path)
            result = self._route(request)
            close = getattr(result.stream, "close", None)
            if close is not None:
                close()
            return Response(0, drop=True)
        if rule is not None:
            log.debug("fault: fail_next rule hit %s %s", request.method, request.path)
            if rule.drop:
                return Response(0, drop=True)
            body = (
                rule.body
                if rule.body is not None
                else {"error": default_code(rule.status), "message": "injected by fail_next"}
            )
            return Response(rule.status, body, rule.headers)
        return self._route(request)

    def _route(self, request: Request) -> Response:
        oauth = self._oauth_route(request)
        if oauth is not None:
            return oauth
        credential, scopes = self._authenticate(request.environ)
        match = _PREFIX.match(request.path)
        if match is None:
            raise HTTPError(404, "not_found", f"no route for {request.path}")
        if match["ws"] != self.workspace:
            raise HTTPError(
                404,
                "not_found",
                f"workspace '{match['ws']}' does not match this credential",
                hint=self.workspace,
            )
        rest = match["rest"] or "/"
        for method, pattern, scope, handler in _ROUTES:
            found = pattern.match(rest)
            if found is None or method != request.method:
                continue
            if scopes is not None and scope not in scopes:
                error = HTTPError(
                    403, "insufficient_scope", f"this token lacks the {scope} scope", required=scope
                )
                error.headers["WWW-Authenticate"] = (
                    f'Bearer error="insufficient_scope", scope="{scope}"'
                )
                raise error
            limits = self._rate_limit(credential, request.method, rest)
            request.params = found.groupdict()
            result: Response = getattr(self, handler)(request)
            result.headers.update(limits)
            return result
        raise HTTPError(404, "not_found", f"no route for {request.method} {request.path}")

    def _oauth_route(self, request: Request) -> Response | None:
        """The OAuth server's routes (outside the workspace prefix), else ``None``."""
        if not request.path.startswith(("/api/oauth/", "/.well-known/")):
            return None
        environ = request.environ
        host = environ.get("HTTP_HOST") or f"{environ['SERVER_NAME']}:{environ['SERVER_PORT']}"
        reply = self.oauth.handle(
            request.method,
            request.path,
            query=request.query,
            form=parse_form(request.raw, str(environ.get("CONTENT_TYPE", ""))),
            authorization=str(environ.get("HTTP_AUTHORIZATION", "")),
            base_url=f"{environ.get('wsgi.url_scheme', 'http')}://{host}",
        )
        if reply is None:
            return None
        return Response(reply.status, NO_BODY if reply.body is None else reply.body, reply.headers)

    def _rate_limit(self, credential: str, method: str, rest: str) -> dict[str, str]:
        """NEWER.md §19: count the request on its bucket; the headers to send, or a 429."""
        if self.rate_limiter is None:
            return {}
        allowed, headers = self.rate_limiter.take(credential, bucket_for(method, rest))
        if not allowed:
            error = HTTPError(
                429,
                "Too many requests",
                f"rate limit of the {headers['X-RateLimit-Bucket']} bucket exceeded",
            )
            error.body["code"] = "rate_limit_exceeded"
            error.headers.update(headers)
            raise error
        return headers

    def _authenticate(self, environ: Mapping[str, Any]) -> tuple[str, frozenset[str] | None]:
        """The credential and its OAuth scopes (``None`` for the API key: all routes)."""
        credential = ""
        authorization = str(environ.get("HTTP_AUTHORIZATION", ""))
        if authorization[:7].lower() == "bearer ":
            credential = authorization[7:].strip()
        if not credential:
            credential = str(environ.get("HTTP_X_API_KEY", "")).strip()
        if credential and credential == self.api_key:
            return credential, None
        if credential in self.oauth_tokens:
            return credential, self.oauth_tokens[credential]
        try:
            scopes = self.oauth.scopes_of(credential) if credential else None
        except TokenRejected as exc:
            error = HTTPError(401, "invalid_token", exc.reason)
            error.headers["WWW-Authenticate"] = (
                f'Bearer error="invalid_token", error_description="{exc.reason}"'
            )
            raise error from None
        if scopes is not None:
            return credential, scopes
        error = HTTPError(
            401, "unauthorized", "missing API key" if not credential else "invalid API key"
        )
        error.headers["WWW-Authenticate"] = "Bearer"
        raise error

    def _stream_url(self, run_id: str) -> str:
        return f"/api/v1/workspaces/{self.workspace}/agent-runs/{run_id}/stream"

    def _run(self, request: Request) -> EmulatedRun:
        run = self.state.runs.get(request.params["id"])
        if run is None:
            raise HTTPError(404, "not_found", f"run {request.params['id']} not found")
        return run

    def _session(self, request: Request) -> EmulatedSession:
        session = self.state.sessions.get(request.params["id"])
        if session is None:
            raise HTTPError(404, "not_found", f"session {request.params['id']} not found")
        return session

    def _models(self, request: Request) -> Response:
        return Response(200, models_body())

    def _create_run(self, request: Request) -> Response:
        body = request.json_body()
        self._validate(lambda: validate_spec(body, mode="run"))
        run = self.state.create_run(body)
        return self._created(run)

    @staticmethod
    def _validate(check: Callable[[], None]) -> None:
        try:
            check()
        except InvalidRequest as exc:
            raise HTTPError(400, "invalid_request", str(exc)) from exc
        except ModelNotFound as exc:
            raise HTTPError(400, "invalid_model", str(exc), candidates=exc.candidates) from exc

    def _created(self, run: EmulatedRun) -> Response:
        return Response(
            self.create_status, {"runId": run.id, "streamUrl": self._stream_url(run.id)}
        )

    def _get_run(self, request: Request) -> Response:
        return Response(200, self._run(request).snapshot())

    def _stream(self, request: Request) -> Response:
        run = self._run(request)
        status = run.faults.take_stream_open_error()
        if status is not None:
            log.debug("fault: stream open of run %s answers %d", run.id, status)
            return Response(
                status, {"error": default_code(status), "message": "injected stream open error"}
            )
        raw = request.query.get("lastSeq") or request.environ.get("HTTP_LAST_EVENT_ID") or "0"
        try:
            resume = max(0, int(str(raw).strip()))
        except ValueError as exc:
            raise HTTPError(400, "invalid_request", "lastSeq must be an integer") from exc
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
        return Response(200, stream=frames)

    def _tool_result(self, request: Request) -> Response:
        run = self._run(request)
        fault = run.faults.take_tool_result_fault()
        faults = run.faults.faults
        if fault == "error":
            status = faults.tool_result_error_status
            return Response(
                status, {"error": default_code(status), "message": "injected tool-result error"}
            )
        if fault == "rate_limited":
            return Response(
                429,
                {
                    "error": "rate_limited",
                    "code": "rate_limit_exceeded",
                    "message": "injected rate limit",
                },
                {"Retry-After": f"{faults.retry_after:g}"},
            )
        body = request.json_body()
        self._validate(lambda: validate_tool_result(body))
        outcome = run.post_tool_result(body)
        if outcome == "terminal":
            raise HTTPError(409, "run_terminal", f"run {run.id} has already ended")
        if outcome == "unknown":
            raise HTTPError(
                404, "unknown_tool_use", f"no pending tool call {body['toolUseId']} on run {run.id}"
            )
        if fault == "accept_then_drop":
            return Response(0, drop=True)
        if self.tool_result_status == 204:
            return Response(204)
        return Response(self.tool_result_status, {"ok": True})

    def _cancel(self, request: Request) -> Response:
        self._run(request).cancel()
        return Response(200, {"ok": True})

    def _create_session(self, request: Request) -> Response:
        body = request.json_body()
        self._validate(lambda: validate_spec(body, mode="session"))
        session = self.state.create_session(body)
        return Response(201, {"sessionId": session.id})

    def _get_session(self, request: Request) -> Response:
        return Response(200, self._session(request).snapshot())

    def _message(self, request: Request) -> Response:
        session = self._session(request)
        if session.status != "active":
            raise HTTPError(409, "session_ended", f"session {session.id} has ended")
        body = request.json_body()
        self._validate(lambda: validate_message_body(body))
        run = self.state.create_run(body, session)
        return self._created(run)

    def _end_session(self, request: Request) -> Response:
        self.state.end_session(self._session(request))
        return Response(200, {"ok": True})

    def _list_runs(self, request: Request) -> Response:
        with self.state.cond:
            runs = list(self.state.runs.values())
        body = self._checked(lambda: run_list_body(runs, request.query, request.pairs))
        return Response(200, body)

    def _list_sessions(self, request: Request) -> Response:
        with self.state.cond:
            sessions = list(self.state.sessions.values())
        body = self._checked(lambda: session_list_body(sessions, request.query, request.pairs))
        return Response(200, body)

    def _replay(self, request: Request) -> Response:
        session = self._session(request)
        return Response(200, self._checked(lambda: replay_body(session, request.query)))

    def _feedback(self, request: Request) -> Response:
        run = self._run(request)
        body = request.json_body()
        try:
            status, record = self.state.feedback.give(run.id, body)
        except InvalidRequest as exc:
            raise HTTPError(400, "invalid_request", str(exc)) from exc
        return Response(status, record)

    def _list_feedback(self, request: Request) -> Response:
        return Response(200, self._checked(lambda: self.state.feedback.list_body(request.query)))

    def _eval_datasets(self, request: Request) -> Response:
        return Response(200, self.state.evals.datasets_body())

    def _eval_dataset(self, request: Request) -> Response:
        dataset = self.state.evals.dataset(request.params["id"])
        if dataset is None:
            raise HTTPError(404, "not_found", f"dataset {request.params['id']} not found")
        return Response(200, dataset)

    def _start_eval(self, request: Request) -> Response:
        body = request.json_body()
        try:
            evaluation = self.state.evals.start(body)
        except InvalidRequest as exc:
            raise HTTPError(400, "invalid_request", str(exc)) from exc
        except LookupError as exc:
            raise HTTPError(404, "not_found", str(exc)) from exc
        stream = f"/api/v1/workspaces/{self.workspace}/eval-runs/{evaluation.id}/stream"
        return Response(
            201, {"runId": evaluation.id, "status": evaluation.status, "streamUrl": stream}
        )

    def _eval(self, eval_id: str) -> EmulatedEval:
        evaluation = self.state.evals.get(eval_id)
        if evaluation is None:
            raise HTTPError(404, "not_found", f"evaluation {eval_id} not found")
        return evaluation

    def _list_evals(self, request: Request) -> Response:
        return Response(200, self._checked(lambda: self.state.evals.list_body(request.query)))

    def _get_eval(self, request: Request) -> Response:
        return Response(200, self._eval(request.params["id"]).detail())

    def _compare_evals(self, request: Request) -> Response:
        a, b = request.query.get("a"), request.query.get("b")
        if not a or not b:
            raise HTTPError(400, "invalid_request", "compare needs ?a= and ?b=")
        return Response(200, self.state.evals.compare_body(self._eval(a), self._eval(b)))

    def _eval_stream(self, request: Request) -> Response:
        evaluation = self._eval(request.params["id"])
        sock = request.environ.get("werkzeug.socket")
        return Response(200, stream=evaluation.stream(self.stop_event, sock))

    def _cancel_eval(self, request: Request) -> Response:
        return Response(200, {"ok": self._eval(request.params["id"]).cancel()})

    @staticmethod
    def _checked(build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return build()
        except InvalidRequest as exc:
            raise HTTPError(400, "invalid_request", str(exc)) from exc
