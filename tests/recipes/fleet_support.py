"""The Celery recipe's fleet in tests: redis-server and ``celery worker`` process groups,
killed the way a machine dies and reaped, and the model their runs follow."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import logging
import os
import re
import select
import signal
import subprocess
import sys
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from recipe_support import RECIPES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

import peerkit
from peerkit import free_port

from mantyx_sync.testing import LocalMantyx, ModelContext, Step, ToolCall, Turn

__all__ = [
    "ROOT",
    "JobThread",
    "LogSeen",
    "LoggedProcess",
    "SalesModel",
    "expected_answer",
    "free_port",
    "fresh_recipe",
    "live_members",
    "orphans_reaped",
    "poll_until",
    "runs_of",
    "sleeping_threads",
    "start_worker",
    "tool_posts",
]

ROOT = RECIPES.parents[1]
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
_PR_SET_CHILD_SUBREAPER = 36


def live_members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that have not exited (zombies are not counted)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        state, _ppid, group = stat.rpartition(")")[2].split()[:3]
        if int(group) == pgid and state != "Z":
            found.append(int(entry.name))
    return found


def sleeping_threads(pgid: int) -> int:
    """How many threads of group ``pgid`` are in ``time.sleep`` now (the recipe's
    tool sleeps while it works; nothing else in a worker that runs jobs does)."""
    count = 0
    for pid in live_members(pgid):
        with contextlib.suppress(OSError):  # a thread or process gone meanwhile
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    count += (task / "wchan").read_text() == "hrtimer_nanosleep"
    return count


def poll_until(condition: Callable[[], Any], timeout: float, what: str) -> None:
    """Poll ``condition`` until true, for state nothing signals (``/proc``)."""
    assert peerkit.wait_until(condition, timeout), f"{what}: not within {timeout} s"


def _reap(pids: Sequence[int], timeout: float) -> None:
    """Wait for each of ``pids`` to exit, and reap those that are this process's children."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
            assert ready, f"process {pid} did not exit within {timeout} s"
        finally:
            os.close(fd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@contextlib.contextmanager
def orphans_reaped() -> Iterator[None]:
    """Make this process the reaper of its orphaned descendants while the block runs.

    A worker's pool processes, orphaned when the worker's main process is
    killed with them, are then reaped here (:meth:`LoggedProcess.kill`)
    rather than left to PID 1.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        pytest.skip("this kernel cannot make the test process a child subreaper")
    try:
        yield
    finally:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


class LoggedProcess:
    """A command in a process group of its own, its output gathered line by line."""

    def __init__(self, args: Sequence[str], env: Mapping[str, str], *, ready: str) -> None:
        self.args = list(args)
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            self.args,
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own group: killed together, like a machine
        )
        self.pgid = self.proc.pid
        self._reader = threading.Thread(target=self._drain, name=f"output of {args[0]}")
        self._reader.start()
        self.wait_for(ready, READY_TIMEOUT_S)

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.lines.append("")  # end of output
            self._changed.notify_all()

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, pattern: str, timeout: float) -> str:
        """The first output line matching ``pattern``, waiting up to ``timeout`` seconds."""
        regex = re.compile(pattern)

        def found() -> str | None:
            return next((line for line in self.lines if regex.search(line)), None)

        with self._changed:
            line = self._changed.wait_for(lambda: found() or self.lines[-1:] == [""], timeout)
        if not found():
            why = "exited" if line else f"not within {timeout} s"
            what = f"{self.args[:3]}: no line matching {pattern!r} ({why})"
            raise AssertionError(f"{what}:\n{self.output}")
        return str(found())

    def kill(self) -> None:
        """SIGKILL to the whole group at once (a machine dying), every process reaped."""
        members = live_members(self.pgid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, signal.SIGKILL)
        self.proc.wait(timeout=STOP_TIMEOUT_S)
        _reap([pid for pid in members if pid != self.proc.pid], STOP_TIMEOUT_S)
        self._reader.join(STOP_TIMEOUT_S)

    def stop(self) -> None:
        """SIGTERM (a worker's warm shutdown), then :meth:`kill` if it is not gone in time."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=STOP_TIMEOUT_S)
        self.kill()  # whatever is left of the group, and the output reader


def start_worker(name: str, env: Mapping[str, str], *, concurrency: int) -> LoggedProcess:
    """``celery -A examples.recipes.celery_app worker`` (the README's command), prefork pool."""
    args = [
        "celery",
        "-A",
        "examples.recipes.celery_app",
        "worker",
        "--pool=prefork",
        f"--concurrency={concurrency}",
        f"--hostname={name}@%h",
        "--loglevel=INFO",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    return LoggedProcess(args, env, ready=r" ready\.")


def fresh_recipe(server: LocalMantyx, redis_url: str, **extra: str) -> ModuleType:
    """The recipe imported anew in this process (a producer), pointed at ``server`` and Redis."""
    sys.modules.pop("celery_app", None)
    variables = {
        "MANTYX_API_KEY": server.api_key,
        "MANTYX_WORKSPACE": server.workspace,
        "MANTYX_BASE_URL": server.base_url,
        "REDIS_URL": redis_url,
        **extra,
    }
    with pytest.MonkeyPatch.context() as patch:
        for key, value in variables.items():
            patch.setenv(key, value)
        return importlib.import_module("celery_app")


def expected_answer(prompt: str) -> str:
    """What a job's run answers when every call of :class:`SalesModel` was made and answered."""
    totals = sorted(
        (region, (zlib.crc32(region.encode()) % 90 + 10) * days) for region, days in _asks(prompt)
    )
    return "; ".join(f"{region}: {units} units" for region, units in totals)


def _asks(prompt: str) -> list[tuple[str, int]]:
    return [(m[1], int(m[2])) for m in re.finditer(r"([a-z]+) (\d+)", prompt.partition(":")[2])]


class SalesModel:
    """The emulator's model for the recipe's jobs.

    A prompt ``"job 7: north 5, south 12"`` makes turn 0 call ``sales_total``
    for each region at once (``days`` × 0.1 s each); turn 1 answers with the
    totals the tools returned. :attr:`in_flight` holds the runs whose calls are
    out, with their job key (from the run's metadata), :attr:`answered` counts
    the runs answered; every step wakes :meth:`wait_until`.
    """

    def __init__(self) -> None:
        self.in_flight: dict[str, str] = {}  # run id -> job key
        self.answered = 0
        self._changed = threading.Condition()

    def __call__(self, ctx: ModelContext) -> Step:
        with self._changed:
            if ctx.turn == 0:
                self.in_flight[ctx.run_id] = (ctx.spec.get("metadata") or {}).get("job", "")
            else:
                self.in_flight.pop(ctx.run_id, None)
                self.answered += 1
            self._changed.notify_all()
        if ctx.turn == 0:
            return Turn(
                tool_calls=[
                    ToolCall("sales_total", {"region": region, "days": days})
                    for region, days in _asks(ctx.prompt)
                ]
            )
        totals = []
        for answer in ctx.tool_results:
            if "result" not in answer:
                return Turn(f"ERROR from {answer['name']}: {answer.get('error')}")
            data = json.loads(answer["result"])
            totals.append((data["region"], data["units"]))
        return Turn("; ".join(f"{region}: {units} units" for region, units in sorted(totals)))

    def wait_until(self, condition: Callable[[], Any], timeout: float) -> Any:
        """Wait (woken by every model step) until ``condition()`` is true; return it."""
        with self._changed:
            value = self._changed.wait_for(condition, timeout)
        assert value, f"not within {timeout} s"
        return value


def tool_posts(server: LocalMantyx) -> dict[tuple[str, str], int]:
    """How many tool-result POSTs the emulator received, by (run id, toolUseId)."""
    counts: dict[tuple[str, str], int] = {}
    for request in server.requests:
        if request.method == "POST" and request.path.endswith("/tool-results"):
            key = (request.path.split("/")[-2], (request.json or {}).get("toolUseId", ""))
            counts[key] = counts.get(key, 0) + 1
    return counts


class LogSeen(logging.Handler):
    """Log records (their messages), and a wait for the first with a fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []
        self.created: list[float] = []  # time.time() of each
        self._changed = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self._changed:
            self.messages.append(record.getMessage())
            self.created.append(record.created)
            self._changed.notify_all()

    def wait_for(self, *fragments: str, timeout: float = 10) -> int:
        """The index of the first message holding any of ``fragments``, waiting for one."""

        def first() -> int | None:
            hits = (i for i, m in enumerate(self.messages) if any(f in m for f in fragments))
            return next(hits, None)

        with self._changed:
            assert self._changed.wait_for(lambda: first() is not None, timeout), self.messages
            found = first()
        assert found is not None
        return found


class JobThread(threading.Thread):
    """The recipe's ``run_job`` on a thread of its own, as one worker's task, tried
    again on the errors its Celery task is retried on (as ``autoretry_for`` does)."""

    def __init__(self, recipe: ModuleType, key: str, prompt: str, owner: str) -> None:
        super().__init__(name=f"job {key} at {owner}")
        self.outcome: dict[str, Any] | None = None
        self.retried: list[BaseException] = []
        self._call = lambda: recipe.run_job(key, prompt, owner=owner)
        self._retry_on = tuple(recipe.run_agent.autoretry_for)
        self.start()

    def run(self) -> None:
        while self.outcome is None and len(self.retried) < 5:
            try:
                self.outcome = self._call()
            except self._retry_on as exc:
                self.retried.append(exc)

    def result(self, timeout: float = 30) -> dict[str, Any]:
        self.join(timeout)
        assert not self.is_alive() and self.outcome is not None
        return self.outcome


def runs_of(server: LocalMantyx, before: set[str]) -> list[str]:
    """The ids of the runs ``server`` holds that are not in ``before``, sorted."""
    return sorted(set(server.runs) - before)
