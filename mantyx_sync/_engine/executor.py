"""Running local tool calls on a thread pool, answering each ``toolUseId`` once.

The caller's thread reads the event stream and only *submits* calls here. For
every call exactly one answer is handed to ``deliver``: a ``toolUseId`` seen
before (a replay after reconnect) never runs again; invalid arguments are
answered with an error the model can act on; any ``BaseException`` a handler
raises becomes ``"<Type>: <message>"`` (:class:`~mantyx_sync.ToolError`: its
message) and the worker lives on; a handler that outlives its timeout is
answered with an error and its late answer dropped.

:meth:`ToolExecutor.shutdown` returns at once; a handler still running finishes
in the background. Python cannot stop a running thread, so the pool's threads
are daemon threads, which interpreter exit does not wait for (unlike
``concurrent.futures`` workers): a handler that never returns does not keep the
process alive.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .._base.limits import TOOL_ERROR_MAX_BYTES, TOOL_RESULT_MAX_BYTES
from .._base.redact import LastResort
from .._tools.validator import compile_validator
from ..errors import ToolError
from ..events import LocalToolCall
from ..local_tools import LocalTool
from ..tools import ToolActivity, ToolConnection
from .outputs import split_output
from .tracing import NO_TRACE, RunTrace

__all__ = ["ToolExecutor", "ToolRegistry"]

log = logging.getLogger(__name__)

Deliver = Callable[..., object]
"""``deliver(tool_use_id, result=, error=, files=)``."""


def fit_bytes(text: str, limit: int, what: str) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, with a note saying what was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    note = f"\n[mantyx_sync: {what} cut from {len(data)} to {limit} bytes]"
    keep = max(0, limit - len(note.encode("utf-8")))
    return data[:keep].decode("utf-8", errors="ignore") + note


# A tool that fails is the user's bug, and the run still succeeds: its first
# failure is shown (at WARNING, with the traceback) even with logging left
# unconfigured, through the handler below; later ones of the same tool at INFO.
tool_log = logging.getLogger("mantyx_sync.tools")
tool_log.addHandler(LastResort())
_failed_tools: set[tuple[str, str]] = set()


def _tool_failed(label: str, call: LocalToolCall, what: str) -> None:
    key = (call.kind, call.name)
    first = key not in _failed_tools  # a race only logs one more at WARNING
    _failed_tools.add(key)
    tool_log.log(
        logging.WARNING if first else logging.INFO,
        "%s: tool %r (%s) %s; the model got the error and the run goes on%s",
        label,
        call.name,
        call.tool_use_id,
        what,
        " (later failures of this tool are logged at INFO)" if first else "",
        exc_info=True,
    )


def _describe_exception(exc: BaseException) -> str:
    text = str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


@attrs.frozen
class _Target:
    name: str
    kind: str
    validate: Callable[[Any], str | None]
    run: Callable[[LocalToolCall, float | None], Any]
    timeout: float | None


def _accept_all(args: Any) -> str | None:
    return None


def _local_target(tool: LocalTool) -> _Target:
    return _Target(
        name=tool.name,
        kind="local",
        validate=tool.validate_args,
        # A handler cannot be interrupted: the executor enforces its timeout.
        run=lambda call, timeout: tool.invoke(call.args),
        timeout=tool.timeout,
    )


class ToolRegistry:
    """Finds the handler for a ``local_tool_call``: by ``name``, an
    ``mcp_local`` call first by its ``mcpServer`` label. Immutable."""

    def __init__(
        self, local_tools: Sequence[LocalTool] = (), connections: Sequence[ToolConnection] = ()
    ) -> None:
        # Built once per tool, not per call: looked up on every call's path.
        self._local_targets = {tool.name: _local_target(tool) for tool in local_tools}
        self._by_label = {(conn.kind, conn.name): conn for conn in connections}
        self._by_tool: dict[str, ToolConnection] = {}
        for conn in connections:
            for name in conn.tool_names():
                self._by_tool[name] = conn

    def names(self) -> list[str]:
        return [*self._local_targets, *self._by_tool]

    def find(self, call: LocalToolCall) -> _Target | None:
        if call.kind not in ("a2a_local", "mcp_local"):
            target = self._local_targets.get(call.name)
            if target is not None:
                return target
        conn: ToolConnection | None = None
        if call.kind == "mcp_local" and call.mcp_server:
            conn = self._by_label.get(("mcp_local", call.mcp_server))
        if conn is None:
            conn = self._by_tool.get(call.name)
        if conn is None:
            return None
        schema = conn.input_schema(call.name)
        return _Target(
            name=call.name,
            kind=conn.kind,
            validate=compile_validator(schema) if schema else _accept_all,
            run=lambda call, timeout: conn.call(call, timeout=timeout),
            timeout=None,
        )


@attrs.frozen
class _Job:
    """One submitted call. Whichever of its handler and its timeout acquires
    ``answer`` first answers it; the other finds it taken."""

    call: LocalToolCall
    kind: str
    started: float
    answer: threading.Lock = attrs.field(factory=threading.Lock)


class _DaemonPool:
    """Up to ``max_workers`` daemon threads, started as work arrives. Thread-safe."""

    def __init__(self, max_workers: int, name: str) -> None:
        self._max_workers = max_workers
        self._name = name
        self._work: queue.SimpleQueue[tuple[Callable[..., object], tuple[Any, ...]] | None]
        self._work = queue.SimpleQueue()
        # Released by a worker each time it finishes a call and waits for the next one.
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._started = 0

    def submit(self, fn: Callable[..., object], *args: Any) -> None:
        self._work.put((fn, args))
        if self._idle.acquire(blocking=False):
            return
        with self._lock:
            if self._started >= self._max_workers:
                return
            name = f"{self._name}_{self._started}"
            self._started += 1
        threading.Thread(target=self._work_loop, name=name, daemon=True).start()

    def _work_loop(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                self._work.put(None)  # so the next worker stops too
                return
            fn, args = item
            del item  # hold no reference to the call while idle
            try:
                fn(*args)
            except BaseException:
                # ToolExecutor._execute answers every call itself: this is a bug of ours.
                log.exception("%s: a tool worker's call raised", self._name)
            del fn, args
            self._idle.release()

    def shutdown(self) -> None:
        """Drop the calls not started yet and stop each worker once its call returns."""
        while True:
            try:
                self._work.get_nowait()
            except queue.Empty:
                break
        self._work.put(None)


class ToolExecutor:
    """Thread-safety: :meth:`submit` is called from the stream-reading thread;
    answers are delivered from pool and timer threads; :meth:`shutdown` from any.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        deliver: Deliver,
        *,
        max_workers: int = 32,
        default_timeout: float | None = None,
        on_tool: Callable[[ToolActivity], None] | None = None,
        run_label: str = "run",
        trace: RunTrace = NO_TRACE,
    ) -> None:
        self._registry = registry
        self._trace = trace
        self._deliver = deliver
        self._max_workers = max_workers
        self._default_timeout = default_timeout
        self._on_tool = on_tool
        self._label = run_label
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._pool: _DaemonPool | None = None
        self._timers: dict[str, threading.Timer] = {}
        self._unanswered = 0  # calls submitted whose answer is not posted yet
        # Answers being handed over: posted, then told to on_tool. settle() waits for them.
        self._handing = 0
        self._handed = threading.Condition(self._lock)
        self._closed = False

    def busy(self) -> bool:
        """Whether a call is still being answered (queued, running, or its answer
        being posted): the run is then waiting on us, not on the server."""
        return self._unanswered > 0

    def mark_answered(self, tool_use_id: str) -> None:
        with self._lock:
            self._seen.add(tool_use_id)

    def submit(self, call: LocalToolCall, *, problem: str | None = None) -> bool:
        """Hand ``call`` to the pool; ``False`` when its ``toolUseId`` was seen before.

        Returns at once: even the answers that need no handler (unknown tool, a
        ``problem``) are posted from the pool, never from the caller's thread.

        :param problem: answer the call with this error instead of running it, so
            a call the SDK could not make sense of still gets its one answer.
        """
        target = None if problem is not None else self._registry.find(call)
        if problem is None and target is None:
            known = ", ".join(sorted(self._registry.names())) or "none"
            problem = (
                f"unknown tool {call.name!r} (kind {call.kind}): this client has no handler "
                f"for it; available tools: {known}"
            )
        timeout = None
        if target is not None:
            timeout = target.timeout if target.timeout is not None else self._default_timeout
        with self._lock:
            if self._closed or call.tool_use_id in self._seen:
                if not self._closed:
                    log.debug("%s: ignoring repeated tool call %s", self._label, call.tool_use_id)
                return False
            self._seen.add(call.tool_use_id)
            self._unanswered += 1
            if self._pool is None:
                self._pool = _DaemonPool(self._max_workers, "mantyx-tool")
            job = _Job(call, target.kind if target else call.kind, time.monotonic())
            if timeout is not None:
                # Time spent queued behind busy workers counts: a call must be
                # answered in time even when every worker is held by a hung handler.
                error = f"tool {call.name!r} timed out after {timeout:g}s"
                timer = threading.Timer(timeout, self._finish, args=(job, None, error))
                timer.daemon = True
                timer.name = f"mantyx-tool-timeout-{call.tool_use_id}"
                self._timers[call.tool_use_id] = timer
                timer.start()
            # Under the lock, so a concurrent shutdown() cannot slip in between.
            self._pool.submit(self._execute, job, target, problem, timeout)
        return True

    def _execute(
        self, job: _Job, target: _Target | None, problem: str | None, timeout: float | None
    ) -> None:
        if self._closed or job.answer.locked():
            return  # the run ended, or the call timed out while queued
        call = job.call
        error = problem if target is None else target.validate(call.args)
        text = files = None
        if target is not None and error is None:
            if self._on_tool is not None:
                # Built only when someone listens: on the round trip's path otherwise.
                self._notify(
                    ToolActivity(
                        phase="start", tool_use_id=call.tool_use_id, name=call.name, kind=job.kind
                    )
                )
            try:
                value = self._trace.run_tool(call, job.kind, target.run, timeout)
            except ToolError as exc:
                error = str(exc)  # the handler's own message for the model
            except BaseException as exc:
                # Whatever the handler raises (SystemExit, KeyboardInterrupt,
                # GeneratorExit, a custom BaseException) the call gets its one answer.
                # It is not re-raised: on a pool worker it would only end up in a
                # future nobody reads, and the worker must stay alive for later calls.
                error = _describe_exception(exc)
                _tool_failed(self._label, call, "raised")
            else:
                try:
                    text, files = split_output(value)
                except BaseException as exc:
                    error = str(exc) if isinstance(exc, ToolError) else _describe_exception(exc)
                    _tool_failed(self._label, call, "returned a value that cannot be sent")
        self._finish(job, text, error, files)

    def _finish(
        self,
        job: _Job,
        result: str | None,
        error: str | None,
        files: list[dict[str, Any]] | None = None,
    ) -> None:
        call = job.call
        if not job.answer.acquire(blocking=False):
            log.debug("%s: dropping late answer for %s", self._label, call.tool_use_id)
            return
        with self._lock:
            timer = self._timers.pop(call.tool_use_id, None)
            closed = self._closed
            self._handing += 1
        if timer is not None:
            timer.cancel()
        try:
            self._hand_over(job, result, error, files, closed)
        finally:
            with self._lock:
                self._handing -= 1
                self._handed.notify_all()

    def _hand_over(
        self,
        job: _Job,
        result: str | None,
        error: str | None,
        files: list[dict[str, Any]] | None,
        closed: bool,
    ) -> None:
        call = job.call
        duration = time.monotonic() - job.started
        if closed:
            log.debug("%s: run ended; dropping the answer for %s", self._label, call.tool_use_id)
            outcome: object = "run_terminal"
        else:
            # A call answered with an error has no files: split_output either
            # returned them with the text or raised, and a timeout has none.
            if error is not None:
                result, error = None, fit_bytes(error, TOOL_ERROR_MAX_BYTES, "error")
            else:
                assert result is not None
                result = fit_bytes(result, TOOL_RESULT_MAX_BYTES, "result")
            try:
                outcome = self._deliver(call.tool_use_id, result=result, error=error, files=files)
            except Exception:
                # deliver() classifies every answer it gets; this is a bug, not an outcome.
                log.exception(
                    "%s: delivering the answer for %s failed", self._label, call.tool_use_id
                )
                outcome = "failed"
        with self._lock:
            self._unanswered -= 1
        if self._on_tool is None:
            return
        self._notify(
            ToolActivity(
                phase="end",
                tool_use_id=call.tool_use_id,
                name=call.name,
                kind=job.kind,
                duration=duration,
                ok=error is None,
                error=error,
                delivery=str(getattr(outcome, "value", outcome)),
            )
        )

    def _notify(self, activity: ToolActivity) -> None:
        assert self._on_tool is not None
        try:
            self._on_tool(activity)
        except Exception:
            log.warning("%s: on_tool callback raised", self._label, exc_info=True)

    def settle(self) -> None:
        """Wait until each answer already being handed over has been posted and
        its ``"end"`` told to ``on_tool``: once a run has ended, every callback
        of a call it was answered for has been made when ``run()`` returns.
        A handler still running is not waited for (:meth:`shutdown`)."""
        with self._handed:
            self._handed.wait_for(lambda: self._handing == 0)

    def shutdown(self) -> None:
        """Stop without waiting: cancel queued calls, drop late answers. Idempotent."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
            timers = list(self._timers.values())
            self._timers.clear()
        for timer in timers:
            timer.cancel()
        if pool is not None:
            pool.shutdown()
