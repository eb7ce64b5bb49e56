"""MCP over stdio: newline-delimited JSON-RPC with a subprocess, using plain threads.

One reader thread decodes the server's stdout and hands each message to the
:class:`~mantyx_sync._jsonrpc.Endpoint`; another drains stderr into the debug
log so the pipe can never fill and block the server. Writes to stdin are
serialised by a lock. When stdout ends (the process died or closed it), the
endpoint is closed so waiting and later calls fail fast instead of hanging.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any, Final

from ._jsonrpc import Endpoint, PeerGoneError
from ._redact import redact_text

__all__ = ["StdioTransport"]

logger = logging.getLogger(__name__)

_CLOSE_GRACE_S: Final = 2.0
_TERM_WAIT_S: Final = 2.0
_KILL_WAIT_S: Final = 5.0
_JOIN_S: Final = 5.0


class StdioTransport:
    """A subprocess speaking MCP on its stdin/stdout.

    Thread-safe: :meth:`send` may be called from several threads at once.

    :param command: the executable.
    :param args: extra argv.
    :param env: added to (overriding) ``os.environ`` for the child; never logged.
    :param cwd: the child's working directory.
    :param label: a name for threads and log lines.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None,
        cwd: str | None,
        label: str,
    ) -> None:
        self._argv = [command, *args]
        self._env = env
        self._cwd = cwd
        self._label = label
        self._write_lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []
        self._endpoint: Endpoint | None = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The child's process id, once started."""
        return self._proc.pid if self._proc is not None else None

    def start(self, endpoint: Endpoint) -> None:
        """Spawn the process and its reader threads.

        :raises OSError: the command could not be started.
        """
        self._endpoint = endpoint
        child_env = dict(os.environ)
        if self._env:
            child_env.update(self._env)
        self._proc = subprocess.Popen(
            self._argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            cwd=self._cwd,
            close_fds=True,
        )
        logger.debug("%s: started %s (pid %s)", self._label, self._argv[0], self._proc.pid)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        for target, stream, role in (
            (self._read_stdout, self._proc.stdout, "stdout"),
            (self._drain_stderr, self._proc.stderr, "stderr"),
        ):
            thread = threading.Thread(
                target=target,
                args=(stream,),
                name=f"mantyx-mcp-{self._label}-{role}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)

    def send(self, message: dict[str, Any]) -> None:
        """Write one message as a JSON line.

        :raises PeerGoneError: the process is gone or its stdin is closed.
        """
        proc = self._proc
        if proc is None or proc.stdin is None or self._closed:
            raise PeerGoneError(f"MCP server {self._label!r} is not running")
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        with self._write_lock:
            try:
                proc.stdin.write(line.encode("utf-8"))
                proc.stdin.flush()
            except (OSError, ValueError) as exc:
                raise PeerGoneError(self._exit_reason()) from exc

    def close(self) -> None:
        """Close stdin, wait a grace period, then terminate and kill; join the threads.

        Idempotent; never leaves a zombie.
        """
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        if proc is not None:
            with self._write_lock:
                try:
                    if proc.stdin is not None:
                        proc.stdin.close()
                except OSError:
                    pass
            try:
                proc.wait(_CLOSE_GRACE_S)
            except subprocess.TimeoutExpired:
                logger.debug("%s: did not exit after stdin closed; terminating", self._label)
                proc.terminate()
                try:
                    proc.wait(_TERM_WAIT_S)
                except subprocess.TimeoutExpired:
                    logger.warning("%s: did not terminate; killing", self._label)
                    proc.kill()
                    proc.wait(_KILL_WAIT_S)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(_JOIN_S)
        if proc is not None:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        if self._endpoint is not None:
            self._endpoint.close(f"MCP server {self._label!r} connection closed")

    def _exit_reason(self) -> str:
        proc = self._proc
        code = proc.poll() if proc is not None else None
        if code is None:
            return f"MCP server {self._label!r} closed its output"
        return f"MCP server {self._label!r} exited with code {code}"

    def _read_stdout(self, stream: IO[bytes]) -> None:
        endpoint = self._endpoint
        assert endpoint is not None
        try:
            for raw in stream:
                line = raw.strip()
                if not line:
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    # Some servers print banners on stdout; skip rather than die.
                    logger.debug("%s: non-JSON line on stdout skipped", self._label)
                    continue
                endpoint.deliver(message)
        except (OSError, ValueError):
            pass
        finally:
            if self._proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(0.5)
            endpoint.close(self._exit_reason())

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        try:
            for raw in stream:
                text = raw.decode("utf-8", "replace").rstrip()
                logger.debug("%s stderr: %s", self._label, redact_text(text))
        except (OSError, ValueError):
            pass
