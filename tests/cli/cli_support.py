"""Running the real ``mantyx-sync`` console script: in a pipe, or on a pseudo-terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import subprocess
import sys
import termios
import time
from collections.abc import Mapping
from pathlib import Path

from mantyx_sync.testing import LocalMantyx

HERE = Path(__file__).parent
_BIN = Path(sys.executable).parent


def console_script() -> str:
    """The installed ``mantyx-sync`` next to this interpreter (pip install -e .)."""
    found = shutil.which("mantyx-sync", path=str(_BIN))
    assert found, f"mantyx-sync is not installed next to {sys.executable}; pip install --group test"
    return found


def cli_env(server: LocalMantyx | None = None, **extra: str) -> dict[str, str]:
    """A clean environment pointing at ``server``; ``extra`` overrides."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_") and k != "NO_COLOR"}
    # So that --tool cli_tools:... imports (keeping any path the caller set).
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    if server is not None:
        env.update(
            MANTYX_BASE_URL=server.base_url,
            MANTYX_WORKSPACE=server.workspace,
            MANTYX_API_KEY=server.api_key,
        )
    env.update(extra)
    return env


def run_cli(
    *args: str,
    server: LocalMantyx | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    """Run ``mantyx-sync args`` to the end with pipes (not a terminal)."""
    return subprocess.run(
        [console_script(), *args],
        env=dict(env) if env is not None else cli_env(server),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=HERE,
    )


def start_emulator_command() -> tuple[subprocess.Popen[str], list[str]]:
    """Start ``mantyx-sync emulator --port 0``; return it with the lines it printed up
    to "Press Ctrl-C" (its URL and the exports to use it). The caller stops it."""
    process = subprocess.Popen(
        [console_script(), "emulator", "--port", "0"],
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=HERE,
    )
    assert process.stdout is not None
    printed = []
    for line in process.stdout:
        printed.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C"):
            break
    return process, printed


def _take_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyProcess:
    """The console script on a pseudo-terminal: what a person at a terminal sees."""

    def __init__(self, *args: str, env: Mapping[str, str], cols: int = 100) -> None:
        master, slave = pty.openpty()
        self._master = master
        self.output = b""
        self._pos = 0
        full_env = dict(env)
        full_env.setdefault("TERM", "xterm-256color")
        full_env["COLUMNS"] = str(cols)
        self.process = subprocess.Popen(
            [console_script(), *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=full_env,
            cwd=HERE,
            close_fds=True,
            # A session of its own with the terminal as its controlling tty, so
            # that ^C typed on it is a real SIGINT from the line discipline.
            start_new_session=True,
            preexec_fn=_take_terminal,
        )
        os.close(slave)

    @property
    def text(self) -> str:
        """Everything the terminal received so far, decoded."""
        return self.output.decode("utf-8", "replace")

    def _read_some(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self._master, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        self.output += chunk
        return True

    def expect(self, needle: str, timeout: float = 15) -> str:
        """Read until ``needle`` appears after the previous match; the text up to it."""
        deadline = time.monotonic() + timeout
        while (found := self.text.find(needle, self._pos)) < 0:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{needle!r} did not appear; got {self.text[self._pos :]!r}"
            if not self._read_some(min(remaining, 0.5)) and needle not in self.text[self._pos :]:
                raise AssertionError(f"terminal closed before {needle!r}; got {self.text!r}")
        seen = self.text[self._pos : found]
        self._pos = found + len(needle)
        return seen

    def send(self, line: str) -> None:
        """Type ``line`` and Enter."""
        os.write(self._master, line.encode() + b"\r")

    def write(self, keys: str) -> None:
        """Type ``keys`` as they are (control characters included)."""
        os.write(self._master, keys.encode())

    def wait(self, timeout: float = 20) -> int:
        """Read everything until the process exits; its exit status."""
        deadline = time.monotonic() + timeout
        while self._read_some(0.2):
            assert time.monotonic() < deadline, f"still running; output {self.text!r}"
        return self.process.wait(timeout=max(1.0, deadline - time.monotonic()))

    def close(self) -> None:
        """Kill the child if it still runs; close the terminal."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=5)
        os.close(self._master)
