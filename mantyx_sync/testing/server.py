"""``LocalMantyx``: the emulator's public facade and its werkzeug server thread."""

from __future__ import annotations

import contextlib
import importlib
import logging
import re
import socket
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._base.argcheck import checked
from ._evaluation import EmulatedEval
from ._ratelimit import RateLimiter
from ._state import EmulatorState
from .clock import EmulatorClock
from .faults import Faults, RequestFault, check_status
from .model import ModelLike
from .oauth import DEFAULT_CLIENT_ID, OAuthServer
from .recorder import RecordedRequest
from .runs import EmulatedRun
from .sessions import EmulatedSession, RunOptions
from .transport import WSGITransport

if TYPE_CHECKING:
    from ._app import EmulatorApp

__all__ = ["LocalMantyx"]

log: logging.Logger = logging.getLogger(__name__)


class LocalMantyx:
    """A local MANTYX agent-runs server for tests and offline development.

    It speaks the real HTTP protocol on 127.0.0.1 (what ``moto`` is to boto3):
    runs, sessions, the SSE event stream with replay, local tool round trips,
    cancellation, auth and validation — driven by a scripted or default model,
    with fault injection for the failure paths. Like the hosted service, it
    keeps each HTTP/1.1 connection open for the client's next request.

    Example::

        from mantyx_sync.testing import LocalMantyx, Turn, ToolCall

        with LocalMantyx(model=[Turn("Looking.", tool_calls=[ToolCall("lookup", {"q": "x"})]),
                                Turn(lambda ctx: ctx.tool_results[0]["result"])]) as srv:
            client = srv.client()
            ...

    :param host: interface to bind.
    :param port: port to bind (0: a free one).
    :param api_key: the workspace API key the server accepts.
    :param workspace: the workspace slug of that key.
    :param model: ``None`` (the default model), a list of steps replayed for
        every run, or a callable ``(ctx) -> step``.
    :param tool_timeout: seconds a local tool call waits before the run ends
        with ``result {subtype: "error_local_tool_timeout"}``.
    :param result_shape: ``"subtype"`` (``{"subtype": "success", "text"}``) or
        ``"ok"`` (``{"ok": true, "text"}``) for the terminal success.
    :param usage: whether terminal events carry ``tokens``/``turns``/``model``.
    :param create_status: the status of ``POST /agent-runs`` (202 or 201).
    :param tool_result_status: the status of an accepted tool result (200 or 204).
    :param keepalive: seconds of silence before a ``: ping`` comment, or ``None``.
    :param oauth_tokens: fixed OAuth access tokens accepted, each with its
        scopes (tokens issued by the emulator's own OAuth server are accepted too).
    :param started_event: whether each run opens with a ``started`` event.
    :param oauth_clients: OAuth client id -> secret (``None``: a public
        client) that the authorization server knows; default one public client,
        ``"mantyx-test-client"``.
    :param access_token_ttl: seconds an issued access token lives (3600).
    :param oauth_metadata: whether ``/.well-known/oauth-authorization-server``
        answers; ``False`` makes clients use the fallback paths.
    :param rate_limits: requests per window by bucket (``runs``, ``lifecycle``,
        ``mutations``, ``reads``), e.g. ``{"runs": 10}``; only those buckets
        are limited, send ``X-RateLimit-*`` headers and answer 429 with
        ``Retry-After`` when empty. Default: no limits, no headers.
    :param rate_limit_window: the window length in seconds (the real server: 60).
    :param rate_limit_reset: ``"seconds"`` (seconds until the reset) or
        ``"epoch"`` (a timestamp on the emulator's clock) for ``X-RateLimit-Reset``.

    :ivar oauth: the OAuth authorization server (auto-approving; ``deny_next()``,
        ``issue_tokens()``, ``expire_access_tokens()``, ``refreshes``...).
    :ivar clock: the emulator's clock for token expiry and rate-limit windows;
        ``advance_clock()`` moves it forward.
    :ivar rate_limiter: the rate-limit buckets, or ``None`` when unlimited.

    Every argument here, and of each method that keeps a value for later, is
    checked where it is written: a wrong type raises :class:`TypeError` naming
    the argument, what it must be and the type it got (never the value); a
    port, status or duration out of range raises :class:`ValueError`.

    Thread-safety: every method may be called from any thread.

    .. versionadded:: 0.1.0
    """

    @checked(TypeError)
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str = "mantyx_test_key",
        workspace: str = "test-ws",
        model: ModelLike = None,
        tool_timeout: float = 30.0,
        result_shape: Literal["subtype", "ok"] = "subtype",
        usage: bool = True,
        create_status: int = 202,
        tool_result_status: int = 200,
        keepalive: float | None = None,
        oauth_tokens: Mapping[str, Iterable[str]] | None = None,
        started_event: bool = False,
        oauth_clients: Mapping[str, str | None] | None = None,
        access_token_ttl: float = 3600.0,
        oauth_metadata: bool = True,
        rate_limits: Mapping[str, int] | None = None,
        rate_limit_window: float = 60.0,
        rate_limit_reset: Literal["seconds", "epoch"] = "seconds",
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError("LocalMantyx(): port must be 0 to 65535")
        durations = {
            "tool_timeout": tool_timeout,
            "keepalive": keepalive,
            "access_token_ttl": access_token_ttl,
            "rate_limit_window": rate_limit_window,
        }
        for name, seconds in durations.items():
            if seconds is not None and seconds <= 0:
                raise ValueError(f"LocalMantyx(): {name} must be positive")
        check_status("LocalMantyx", "create_status", create_status)
        check_status("LocalMantyx", "tool_result_status", tool_result_status)
        self.host = host
        self._port = port
        self.api_key = api_key
        self.workspace = workspace
        self.clock: EmulatorClock = EmulatorClock()
        self.oauth: OAuthServer = OAuthServer(
            clock=self.clock,
            clients={DEFAULT_CLIENT_ID: None} if oauth_clients is None else oauth_clients,
            workspaces=[workspace],
            access_token_ttl=access_token_ttl,
            metadata_enabled=oauth_metadata,
        )
        self.rate_limiter: RateLimiter | None = (
            None
            if rate_limits is None
            else RateLimiter(
                limits=rate_limits,
                window=rate_limit_window,
                clock=self.clock,
                reset_style=rate_limit_reset,
            )
        )
        self._state = EmulatorState(
            model=model,
            options=RunOptions(
                tool_timeout=tool_timeout,
                result_shape=result_shape,
                usage=usage,
                started_event=started_event,
            ),
        )
        # For the WSGI app, built when first needed (it needs werkzeug).
        self._oauth_tokens = oauth_tokens or {}
        self._statuses = (create_status, tool_result_status)
        self._keepalive = keepalive
        self._app: EmulatorApp | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._wakeup: tuple[socket.socket, socket.socket] | None = None

    def __repr__(self) -> str:
        if self._server is None:
            return "<LocalMantyx stopped>"
        return f"<LocalMantyx running at {self.base_url}>"

    @property
    def port(self) -> int:
        """The bound port (the requested one until :meth:`start`)."""
        return self._port

    @property
    def base_url(self) -> str:
        """``http://<host>:<port>``, no trailing slash."""
        return f"http://{self.host}:{self._port}"

    @property
    def app(self) -> EmulatorApp:
        """The WSGI application itself, if you would rather mount it in another
        server (the drop and stall faults need werkzeug's socket).

        :raises RuntimeError: werkzeug is not installed.
        """
        with self._lock:
            if self._app is None:
                try:
                    from ._app import EmulatorApp
                except ImportError as exc:
                    raise RuntimeError(
                        "LocalMantyx needs werkzeug: pip install 'mantyx-sync[testing]'"
                    ) from exc
                self._app = EmulatorApp(
                    state=self._state,
                    api_key=self.api_key,
                    workspace=self.workspace,
                    oauth_tokens=self._oauth_tokens,
                    create_status=self._statuses[0],
                    tool_result_status=self._statuses[1],
                    keepalive=self._keepalive,
                    oauth=self.oauth,
                    rate_limiter=self.rate_limiter,
                    stop_event=self._stop,
                )
            return self._app

    def start(self) -> LocalMantyx:
        """Bind and serve in a daemon thread; returns ``self``.

        :raises RuntimeError: already started, or werkzeug is not installed.
        """
        app = self.app
        with self._lock:
            if self._server is not None:
                raise RuntimeError("LocalMantyx is already started")
            if self._stop.is_set():
                raise RuntimeError("a stopped LocalMantyx cannot be restarted; create a new one")
            server = app.serve(self.host, self._port)
            self._wakeup = socket.socketpair()
            app.wakeup = self._wakeup[0]
            self._port = server.server_address[1]
            self._server = server
            self._thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"mantyx-emulator-{self._port}",
                daemon=True,
            )
            self._thread.start()
        log.debug("LocalMantyx serving on %s (workspace %s)", self.base_url, self.workspace)
        return self

    def stop(self) -> None:
        """Stop serving, end every run and stream (idempotent)."""
        with self._lock:
            server, thread, wakeup = self._server, self._thread, self._wakeup
            self._server = self._thread = self._wakeup = None
            self._stop.set()
        self._state.close()  # also ends the runs of in-memory clients
        if server is None:
            return
        if wakeup is not None:
            wakeup[1].send(b"x")
        # socketserver only notices shutdown() when its select() returns; raising
        # the flag first and poking the listening socket makes stop() immediate
        # instead of waiting out the poll interval.
        setattr(server, "_BaseServer__shutdown_request", True)  # noqa: B010
        with contextlib.suppress(OSError):
            socket.create_connection(server.server_address[:2], timeout=1).close()
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        if wakeup is not None:
            for sock in wakeup:
                sock.close()

    def __enter__(self) -> LocalMantyx:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def client(self, *, in_memory: bool = False, **kwargs: Any) -> Any:
        """A ``mantyx_sync.Client`` for this server (extra keyword arguments pass through).

        :param in_memory: requests go straight to :attr:`app` through a
            :class:`~mantyx_sync.testing.WSGITransport`, with no socket: the
            server need not be started (call :meth:`stop` when done, to end
            its runs).

        The SDK is imported here, lazily, so the emulator never depends on it.
        """
        sdk = importlib.import_module("mantyx_sync")
        base_url = f"http://{self.host}" if in_memory else self.base_url
        options: dict[str, Any] = {"workspace": self.workspace, "base_url": base_url}
        if in_memory:
            options["transport"] = WSGITransport(self.app)
        if "token_source" not in kwargs:
            options["api_key"] = self.api_key
        options.update(kwargs)
        return sdk.Client(**options)

    def advance_clock(self, seconds: float) -> None:
        """Move the emulator's clock ``seconds`` forward: tokens expire and
        rate-limit windows refill as if that much time had passed."""
        self.clock.advance(seconds)

    @checked(TypeError)
    def set_model(self, model: ModelLike) -> None:
        """Use ``model`` (steps, callable or ``None``) for every later run."""
        with self._state.cond:
            self._state.model = model

    @checked(TypeError)
    def queue_script(self, steps: ModelLike) -> None:
        """Use ``steps`` for the next created run only; queued scripts are used FIFO."""
        with self._state.cond:
            self._state.scripts.append(steps)

    @checked(TypeError)
    def inject(self, faults: Faults) -> None:
        """Apply ``faults`` to the next created run; queued plans are used FIFO."""
        with self._state.cond:
            self._state.fault_plans.append(faults)

    @checked(TypeError)
    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int = 500,
        *,
        times: int = 1,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        drop: bool = False,
        applied: bool = False,
    ) -> None:
        """Make the next ``times`` matching requests fail, before auth or routing.

        :param method: HTTP method, or ``"*"``.
        :param path_regex: regular expression searched in the path (no query).
        :param status: the status to answer.
        :param json: the body (default ``{"error": <code for status>, "message"}``).
        :param headers: extra response headers, e.g. ``{"Retry-After": "0"}``.
        :param drop: close the connection without any answer instead.
        :param applied: with ``drop``, first handle the request normally (a run
            is created, a tool result accepted), then drop the answer: the
            response is lost after the server applied it.
        """
        if not drop:  # a dropped request gets no status at all
            check_status("LocalMantyx.fail_next", "status", status)
        rule = RequestFault(
            method=method.upper(),
            path_pattern=re.compile(path_regex),
            status=status,
            body=json,
            headers=dict(headers or {}),
            drop=drop,
            applied=applied,
        )
        self._state.request_faults.add(rule, times)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request answered so far (a snapshot copy), secrets masked."""
        with self._state.cond:
            return list(self._state.requests)

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._state.cond:
            self._state.requests.clear()

    @property
    def runs(self) -> dict[str, EmulatedRun]:
        """Every run so far by id (a snapshot copy of the mapping)."""
        with self._state.cond:
            return dict(self._state.runs)

    @property
    def sessions(self) -> dict[str, EmulatedSession]:
        """Every session so far by id (a snapshot copy of the mapping)."""
        with self._state.cond:
            return dict(self._state.sessions)

    @property
    def feedback(self) -> dict[str, dict[str, Any]]:
        """Run feedback by run id, as stored (``POST /agent-runs/{id}/feedback``; copies)."""
        return self._state.feedback.snapshot()

    @checked(TypeError)
    def add_eval_dataset(
        self,
        name: str,
        cases: list[dict[str, Any]],
        *,
        description: str | None = None,
        tool_mocks: dict[str, Any] | None = None,
    ) -> str:
        """Store an evaluation dataset (``GET /eval-datasets``); returns its id.

        :param cases: ``{"input": {"prompt": ...}, "name"?, "scorers"?, "tags"?,
            "toolMocks"?}`` each; scorers ``{"type": "contains"|"equals", "value"}``
            or ``{"type": "tool_called", "name"}``.
        :raises ValueError: a case has no ``input`` with ``prompt`` or ``messages``.
        """
        return self._state.evals.add_dataset(name, cases, description, tool_mocks)

    @checked(TypeError)
    def inject_eval_stream_fault(
        self, *, drop_after: int, live_tail_on_reconnect: bool = True
    ) -> None:
        """Cut the next evaluation's first stream connection after ``drop_after`` frames.

        :param live_tail_on_reconnect: later connections then start at the end
            of the log, so events sent while the client was away are lost to it
            (an evaluation's stream has no resume).
        """
        if drop_after < 0:
            raise ValueError("LocalMantyx.inject_eval_stream_fault(): drop_after must be >= 0")
        self._state.evals.inject_stream_fault(
            drop_after, live_tail_on_reconnect=live_tail_on_reconnect
        )

    @property
    def evals(self) -> dict[str, EmulatedEval]:
        """Every evaluation so far by id (a snapshot copy of the mapping)."""
        return self._state.evals.snapshot()

    def wait_for_run(
        self, run_id: str | None = None, *, status: str | None = None, timeout: float = 5.0
    ) -> EmulatedRun:
        """Block until the run (default: the latest) reaches ``status`` (default: any end).

        :param status: ``"running"``, ``"succeeded"``, ``"failed"``, ``"cancelled"``…
        :raises TimeoutError: it did not within ``timeout`` seconds.
        """
        return self._state.wait_for_run(run_id, status, timeout)

    def wait_for_tool_call(self, *, timeout: float = 5.0) -> dict[str, Any]:
        """Block until the latest run logs a ``local_tool_call``; return its ``data``.

        Successive calls return successive calls of that run (answered or not).

        :raises TimeoutError: none arrived within ``timeout`` seconds.
        """
        return self._state.wait_for_tool_call(timeout)
