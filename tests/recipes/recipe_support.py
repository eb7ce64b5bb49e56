"""Helpers for the recipe tests: a model the test paces, and recipe servers as subprocesses."""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mantyx_sync.testing import Emit, Fail, LocalMantyx, ModelContext, Step, Turn

__all__ = [
    "CHROMIUM",
    "RECIPES",
    "REDIS_SERVER",
    "GatedModel",
    "cancel_requests",
    "import_recipe",
    "install_chromium",
    "install_package",
    "install_redis_server",
    "recipe_env",
    "serve",
]

RECIPES = Path(__file__).resolve().parents[2] / "examples" / "recipes"
GATE_TIMEOUT_S = 20.0
CHROMIUM = "/usr/bin/chromium"
REDIS_SERVER = "/usr/bin/redis-server"
INSTALL_TIMEOUT_S = 900
# One install at a time across test sessions on this machine.
INSTALL_LOCK = "/tmp/mantyx-sync-tests-apt-install.lock"
APT_LISTS_LOCK = "/var/lib/apt/lists/lock"
APT_LOCK_TIMEOUT_S = 300
APT_ATTEMPTS = 3
LOCK_POLL_S = 1.0
APT_RETRY_WAIT_S = 30.0


def install_chromium() -> str | None:
    """Install Debian's chromium; ``None`` on success, else why it could not be."""
    return install_package("chromium", CHROMIUM)


def install_redis_server() -> str | None:
    """Install Debian's redis-server; ``None`` on success, else why it could not be."""
    return install_package("redis-server", REDIS_SERVER)


def install_package(package: str, path: str) -> str | None:
    """Install the Debian ``package`` that provides ``path``; ``None`` on success,
    else why it could not be.

    Several test sessions may start on the same fresh machine at once: they
    take turns (an exclusive lock on :data:`INSTALL_LOCK`), and a session that
    finds ``path`` installed by another one while it waited installs nothing.
    """
    apt = shutil.which("apt-get")
    if apt is None:
        return "apt-get is not available to install it"
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    sudo = None if root else shutil.which("sudo")
    if not root and sudo is None:
        return "not running as root (and no sudo), so apt-get cannot install it"
    # sudo -n: fail at once, saying so, where sudo would ask for a password.
    command = [apt] if sudo is None else [sudo, "-n", "env", "DEBIAN_FRONTEND=noninteractive", apt]
    with _exclusive(INSTALL_LOCK, INSTALL_TIMEOUT_S) as locked:
        if not locked:
            return f"another session held {INSTALL_LOCK} for {INSTALL_TIMEOUT_S} s"
        if os.path.exists(path):
            return None
        return _apt_install(command, package)


def _apt_install(apt: list[str], package: str) -> str | None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # apt-get install waits for the dpkg lock with this option; apt-get update
    # ignores it and fails at once on the package lists' lock (held by
    # apt-daily, or any other apt-get update), so that one is waited for here.
    lock = ["-o", f"DPkg::Lock::Timeout={APT_LOCK_TIMEOUT_S}"]
    for args in ([*apt, *lock, "update"], [*apt, *lock, "install", "-y", package]):
        for attempt in range(APT_ATTEMPTS):
            try:
                proc = subprocess.run(
                    args, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
                )
            except subprocess.TimeoutExpired:
                return f"`apt-get {args[-1]}` timed out"
            output = proc.stderr or proc.stdout
            if proc.returncode == 0:
                break
            if "Could not get lock" not in output or attempt == APT_ATTEMPTS - 1:
                tail = output.strip().splitlines()[-3:]
                what = " ".join(args[len(apt) + 2 :])
                return f"`apt-get {what}` failed: {' / '.join(tail)}"
            _wait_for_apt_lists()  # the other apt-get is done with them: try again
    return None


def _wait_for_apt_lists() -> None:
    try:
        with _exclusive(APT_LISTS_LOCK, APT_LOCK_TIMEOUT_S, flock=False):
            pass
    except PermissionError:
        # Not root (apt-get runs under sudo): the lock cannot be tried from
        # here, so give the other apt-get a while.
        time.sleep(APT_RETRY_WAIT_S)


@contextlib.contextmanager
def _exclusive(path: str, timeout: float, *, flock: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on ``path`` (``flock``, or ``fcntl`` record locks
    as apt takes them); yields whether it was had within ``timeout`` seconds."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o640)
    take = fcntl.flock if flock else fcntl.lockf
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                take(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                # Another process (another session's or the system's apt-get)
                # holds it; neither offers a way to be told when it lets go.
                time.sleep(LOCK_POLL_S)
        yield True
    finally:
        os.close(fd)  # releases the lock


class GatedModel:
    """An emulator model whose answers stream one delta each time the test releases it.

    ``answers`` maps a prompt to its deltas; the run for that prompt emits one
    ``assistant_delta`` per :meth:`release`, then its final answer (no deltas
    repeated). A prompt in ``failures`` ends its run with that error instead.
    Runs are told apart by id, so any number may run at once.
    """

    def __init__(
        self, answers: Mapping[str, Sequence[str]], failures: Mapping[str, str] | None = None
    ) -> None:
        self._answers = {prompt: list(chunks) for prompt, chunks in answers.items()}
        self._failures = dict(failures or {})
        self._gates = {prompt: threading.Semaphore(0) for prompt in self._answers}
        self._sent: dict[str, int] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()

    def release(self, prompt: str, deltas: int = 1) -> None:
        """Let ``deltas`` more chunks of ``prompt``'s answer out."""
        self._gates[prompt].release(deltas)

    def close(self) -> None:
        """Unblock every waiting run (it then fails); call at teardown."""
        self._closed.set()
        for gate in self._gates.values():
            gate.release(1000)

    def __call__(self, ctx: ModelContext) -> Step:
        if ctx.prompt in self._failures:
            return Fail(self._failures[ctx.prompt], code="model_error")
        chunks = self._answers[ctx.prompt]
        with self._lock:
            sent = self._sent.get(ctx.run_id, 0)
            self._sent[ctx.run_id] = sent + 1
        if sent >= len(chunks):
            return Turn("".join(chunks), chunks=())
        if not self._gates[ctx.prompt].acquire(timeout=GATE_TIMEOUT_S) or self._closed.is_set():
            return Fail("the test never released this delta", code="test_gate")
        return Emit("assistant_delta", {"text": chunks[sent]})


def recipe_env(server: LocalMantyx, **extra: str) -> dict[str, str]:
    """The environment for a recipe process pointed at ``server`` as if it were MANTYX."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    env.update(
        MANTYX_API_KEY=server.api_key,
        MANTYX_WORKSPACE=server.workspace,
        MANTYX_BASE_URL=server.base_url,
        PYTHONUNBUFFERED="1",
        NO_COLOR="1",
    )
    env.update(extra)
    return env


def import_recipe(name: str, server: LocalMantyx, **extra: str) -> ModuleType:
    """Import the recipe module ``name`` in this process, its environment pointed at ``server``.

    The variables are set only while it is imported (a recipe builds its Client then).
    """
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MANTYX_API_KEY", server.api_key)
        env.setenv("MANTYX_WORKSPACE", server.workspace)
        env.setenv("MANTYX_BASE_URL", server.base_url)
        for key, value in extra.items():
            env.setenv(key, value)
        return importlib.import_module(name)


@contextlib.contextmanager
def serve(
    args: Sequence[str], env: Mapping[str, str], ready: str, *, cwd: Path | None = None
) -> Iterator[str]:
    """Run a server command; yield its base URL once a line matches ``ready``.

    ``ready`` is a regular expression whose group 1 is the base URL. The output
    is drained all along (so the server never blocks on a full pipe) and shown
    if it does not come up in time.
    """
    proc = subprocess.Popen(
        list(args),
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    seen: list[str] = []

    def drain() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=drain, name="recipe-server-output", daemon=True)
    reader.start()
    try:
        pattern = re.compile(ready)
        while True:
            try:
                line = lines.get(timeout=30)
            except queue.Empty:
                raise AssertionError("server did not start:\n" + "".join(seen)) from None
            if line is None:
                raise AssertionError("server exited:\n" + "".join(seen))
            seen.append(line)
            match = pattern.search(line)
            if match:
                break
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        reader.join(timeout=5)


def cancel_requests(server: LocalMantyx, run_id: str) -> list[Any]:
    """The cancel requests the emulator answered for ``run_id``."""
    return [
        r
        for r in server.requests
        if r.method == "POST" and r.path.endswith(f"/agent-runs/{run_id}/cancel")
    ]
