"""MCP over stdio: newline-delimited JSON-RPC with a subprocess, using plain threads.

One thread reads stdout into the :class:`~mantyx_sync._peers.jsonrpc.Endpoint`,
one line (message) of at most :data:`MAX_LINE_BYTES`; another drains stderr so
the pipe never fills, keeping its last :data:`STDERR_TAIL_BYTES` to say why a
server exited. A writer thread owns stdin: :meth:`StdioTransport.send` only
queues, so a server that stops reading blocks no caller, cancellation or close.
When stdout ends or stdin breaks the endpoint is closed, so calls fail fast.

The server runs in its own process group (POSIX) and close() signals the whole
group, so wrapper commands (``sh -c``, ``npx``) cannot leave a grandchild
running, or holding stdout open, behind.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, Final

from ..._base.bounded import TooDeep, decode_json
from ..._base.redact import redact_text
from ..jsonrpc import Endpoint, PeerGoneError

__all__ = ["StdioTransport"]

logger = logging.getLogger(__name__)

_CLOSE_GRACE_S: Final = 2.0
_TERM_WAIT_S: Final = 2.0
_KILL_WAIT_S: Final = 5.0
_STRAGGLER_WAIT_S: Final = 0.5
_JOIN_S: Final = 5.0
_POSIX: Final = os.name == "posix"
_STOP: Final = b""
"""The writer's stop marker (a real message is never empty)."""
_CHUNK: Final = 65536

MAX_LINE_BYTES = 32 * 1024 * 1024
"""The longest line read from a server's stdout: one JSON-RPC message."""
STDERR_TAIL_BYTES = 4096
"""How much of a server's stderr is kept (its end) for error messages."""


class StdioTransport:
    """A subprocess (``command`` with ``args``, in ``cwd``) speaking MCP on its stdin and
    stdout. Thread-safe: :meth:`send` may be called from several threads at once.

    :param env: added to (overriding) ``os.environ`` for the child; never logged.
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
        self._outbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._proc: subprocess.Popen[bytes] | None = None
        self._readers: list[threading.Thread] = []
        self._writer: threading.Thread | None = None
        self._endpoint: Endpoint | None = None
        self._closed = False
        self._broken: str | None = None
        self._stderr = bytearray()  # the last STDERR_TAIL_BYTES the server wrote there
        self._stderr_reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id, once started."""
        return self._proc.pid if self._proc is not None else None

    def start(self, endpoint: Endpoint) -> None:
        """Spawn the process and its reader and writer threads.

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
            start_new_session=_POSIX,
        )
        logger.debug("%s: started %s (pid %s)", self._label, self._argv[0], self._proc.pid)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        assert self._proc.stdin is not None
        # stderr first: the stdout reader waits for its last words when the server exits.
        self._stderr_reader = self._thread(self._drain_stderr, self._proc.stderr, "stderr")
        stdout_reader = self._thread(self._read_stdout, self._proc.stdout, "stdout")
        self._readers = [self._stderr_reader, stdout_reader]
        self._writer = self._thread(self._write_stdin, self._proc.stdin, "stdin")

    def send(self, message: dict[str, Any]) -> None:
        """Queue one message as a JSON line; never blocks on the pipe.

        :raises PeerGoneError: the process is gone or its stdin is broken.
        """
        if self._proc is None or self._closed:
            raise PeerGoneError(f"MCP server {self._label!r} is not running")
        if self._broken is not None:
            raise PeerGoneError(self._broken)
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        self._outbox.put(line.encode("utf-8"))

    def close(self) -> None:
        """Close stdin, wait a grace period, then terminate and kill; join the threads.

        Signals go to the server's whole process group, and stragglers that
        still hold stdout or stderr open after the server exited are killed too.
        Idempotent; bounded in time; never leaves a zombie.
        """
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        self._outbox.put(_STOP)
        if proc is not None:
            signalled = False
            if not self._wait(proc, _CLOSE_GRACE_S):
                logger.debug("%s: did not exit after stdin closed; terminating", self._label)
                signalled = True
                self._signal(proc, kill=False)
                if not self._wait(proc, _TERM_WAIT_S):
                    logger.warning("%s: did not terminate; killing", self._label)
                    self._signal(proc, kill=True)
                    self._wait(proc, _KILL_WAIT_S)
            if not self._join(self._readers, _STRAGGLER_WAIT_S):
                # The server is gone but something it started still holds its
                # stdout/stderr (a wrapper shell's child, say).
                logger.debug("%s: its child processes outlived it; stopping them", self._label)
                if not signalled:
                    self._signal(proc, kill=False)
                    self._join(self._readers, _TERM_WAIT_S)
                self._signal(proc, kill=True)
        current = threading.current_thread()
        others = [t for t in [*self._readers, self._writer] if t is not None and t is not current]
        if self._join(others, _JOIN_S) and proc is not None:
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError, ValueError):
                        stream.close()
        elif proc is not None:
            # Closing a stream another thread is blocked on would block us too.
            logger.warning("%s: I/O threads still busy after close; leaving them", self._label)
        if self._endpoint is not None:
            self._endpoint.close(f"MCP server {self._label!r} connection closed")

    def _thread(
        self, target: Callable[[IO[bytes]], None], stream: IO[bytes], role: str
    ) -> threading.Thread:
        thread = threading.Thread(
            target=target,
            args=(stream,),
            name=f"mantyx-mcp-{self._label}-{role}",
            daemon=True,
        )
        thread.start()
        return thread

    def _signal(self, proc: subprocess.Popen[bytes], *, kill: bool) -> None:
        """Terminate (or kill) the server's process group (just the server off POSIX)."""
        if _POSIX:
            sig = signal.SIGKILL if kill else signal.SIGTERM
            # The group outlives its leader while any member lives; the pid is
            # not reused while the group exists.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
        elif proc.poll() is None:
            with contextlib.suppress(OSError):
                if kill:
                    proc.kill()
                else:
                    proc.terminate()

    @staticmethod
    def _wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    @staticmethod
    def _join(threads: Sequence[threading.Thread], timeout: float) -> bool:
        """Join all ``threads`` within one shared ``timeout``; true when all ended."""
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in threads)

    def _exit_reason(self) -> str:
        proc = self._proc
        code = proc.poll() if proc is not None else None
        if code is None:
            reason = f"MCP server {self._label!r} closed its output"
        else:
            reason = f"MCP server {self._label!r} exited with code {code}"
        said = redact_text(bytes(self._stderr).decode("utf-8", "replace").strip())
        return f"{reason}; the end of its error output: {said}" if said else reason

    def _write_stdin(self, stream: IO[bytes]) -> None:
        while True:
            data = self._outbox.get()
            if data == _STOP:
                break
            if self._broken is not None:
                continue  # drain: nothing more can reach the server
            try:
                stream.write(data)
                stream.flush()
            except (OSError, ValueError):
                self._broken = f"MCP server {self._label!r} stopped reading its input"
                logger.debug("%s: stdin broken", self._label)
                if self._endpoint is not None:
                    self._endpoint.close(self._broken)
        with contextlib.suppress(OSError, ValueError):
            stream.close()

    def _read_stdout(self, stream: IO[bytes]) -> None:
        endpoint = self._endpoint
        assert endpoint is not None
        limit = MAX_LINE_BYTES
        try:
            while raw := stream.readline(limit + 1):
                refused = None
                if len(raw) > limit and not raw.endswith(b"\n"):
                    refused = f"a line of more than {limit} bytes (the most one message may take)"
                line = raw.strip()
                if refused is None and not line:
                    continue
                try:
                    message = None if refused else decode_json(line)
                except TooDeep:
                    # Most likely the answer to a pending call, which would never come.
                    refused = "a message nested too deeply to read"
                except ValueError:
                    # Some servers print banners on stdout; skip rather than die.
                    logger.debug("%s: non-JSON line on stdout skipped", self._label)
                    continue
                if refused is not None:  # pending calls fail now, saying why
                    self._broken = (
                        f"MCP server {self._label!r} wrote {refused} on its output; "
                        "the connection was closed"
                    )
                    logger.warning("%s", self._broken)
                    endpoint.close(self._broken)
                    return
                try:
                    endpoint.deliver(message)
                except Exception:
                    # One malformed message must not end the session.
                    logger.debug("%s: undeliverable message skipped", self._label, exc_info=True)
        except (OSError, ValueError):
            pass
        finally:
            if self._proc is not None and endpoint.closed_reason is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(0.5)
                if self._stderr_reader is not None:
                    self._stderr_reader.join(0.5)  # its last words, for the reason
            endpoint.close(self._exit_reason())

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        tail = self._stderr
        partial = b""  # the line being written, its end only
        try:
            while chunk := os.read(stream.fileno(), _CHUNK):
                tail += chunk
                del tail[:-STDERR_TAIL_BYTES]
                *lines, partial = (partial + chunk).split(b"\n")
                partial = partial[-STDERR_TAIL_BYTES:]
                for line in lines:
                    text = line[-STDERR_TAIL_BYTES:].decode("utf-8", "replace").rstrip()
                    logger.debug("%s stderr: %s", self._label, redact_text(text))
        except (OSError, ValueError):
            pass
