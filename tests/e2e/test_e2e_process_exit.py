"""A tool that never returns does not keep the process alive once its main thread is done.

Each test runs a real child process (``stuck_tool_child.py``) whose tool waits
on an event nothing sets, ends its main thread one way or another, and expects
the process gone within seconds (bounded by the subprocess timeout).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CHILD = str(Path(__file__).with_name("stuck_tool_child.py"))
EXIT_WITHIN = 5.0  # seconds; the tool itself would wait for ever


@pytest.fixture
def stuck_model(signalled_server: LocalMantyx) -> LocalMantyx:
    signalled_server.set_model([Turn(tool_calls=[ToolCall("stuck", {})]), Turn("the end")])
    return signalled_server


def _env(base_url: str, server: LocalMantyx) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    env.update(
        MANTYX_BASE_URL=base_url, MANTYX_WORKSPACE=server.workspace, MANTYX_API_KEY=server.api_key
    )
    return env


def _start(mode: str, server: LocalMantyx, base_url: str | None = None) -> subprocess.Popen[bytes]:
    """The child, once its tool has started. Unbuffered, so reading the first line
    leaves the rest of the output to :func:`_finish`."""
    process = subprocess.Popen(
        [sys.executable, CHILD, mode],
        env=_env(base_url or server.base_url, server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"tool started\n"
    return process


def _finish(process: subprocess.Popen[bytes]) -> tuple[str, str]:
    """The rest of stdout and stderr, once the process has exited by itself in time."""
    try:
        out, err = process.communicate(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the process was still alive {EXIT_WITHIN}s later:\n{_stacks(process)}")
    return out.decode(), err.decode()


def _stacks(process: subprocess.Popen[bytes]) -> str:
    """What a hung child printed, ending with every thread's stack; the child is killed."""
    process.send_signal(signal.SIGUSR1)  # its faulthandler dumps every thread
    try:
        return process.communicate(timeout=2)[1].decode()  # it ended on its own after all
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate()[1].decode()


def test_the_process_exits_after_the_run_while_its_tool_still_runs(
    stuck_model: LocalMantyx,
) -> None:
    process = _start("timeout", stuck_model)
    out, err = _finish(process)
    assert process.returncode == 0, err
    assert out.endswith("the end\nmain thread done\n")


def test_leaving_a_stream_block_lets_the_process_exit(stuck_model: LocalMantyx) -> None:
    process = _start("leave", stuck_model)
    out, err = _finish(process)
    assert process.returncode == 0, err
    assert out == "main thread done\n"
    assert stuck_model.wait_for_run(status="cancelled").status == "cancelled"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_or_sigterm_ends_the_process_at_once(stuck_model: LocalMantyx, signum: int) -> None:
    process = _start("wait", stuck_model)
    process.send_signal(signum)
    _, err = _finish(process)
    assert process.returncode == -signal.SIGINT  # an uncaught KeyboardInterrupt
    assert err.count("Traceback") == 1 and err.rstrip().endswith("KeyboardInterrupt")
    assert stuck_model.wait_for_run(status="cancelled").status == "cancelled"


class _HoldCancels:
    """WSGI middleware: a run's cancel request waits (bounded) until released."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ["REQUEST_METHOD"] == "POST" and environ["PATH_INFO"].endswith("/cancel"):
            self.arrived.set()
            self.release.wait(10)
        return self.app(environ, start_response)


@pytest.fixture
def slow_cancels(stuck_model: LocalMantyx) -> Iterator[tuple[str, _HoldCancels]]:
    """The emulator behind a front whose cancel requests hang: ``(base URL, middleware)``."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log(self, *args: Any) -> None:
            pass

    hold = _HoldCancels(stuck_model.app)
    front = make_server("127.0.0.1", 0, hold, threaded=True, request_handler=Quiet)
    thread = threading.Thread(target=front.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{front.server_port}", hold
    finally:
        hold.release.set()
        front.shutdown()
        thread.join(10)


def test_a_second_ctrl_c_during_the_cancel_prints_one_traceback(
    stuck_model: LocalMantyx, slow_cancels: tuple[str, _HoldCancels]
) -> None:
    base_url, hold = slow_cancels
    process = _start("wait", stuck_model, base_url)
    process.send_signal(signal.SIGINT)
    if not hold.arrived.wait(10):
        pytest.fail(f"the first Ctrl-C sent no cancel; the child said:\n{_stacks(process)}")
    process.send_signal(signal.SIGINT)  # impatient: while the cancel hangs
    _, err = _finish(process)
    assert process.returncode == -signal.SIGINT
    assert err.count("Traceback") == 1, err
    assert "During handling" not in err and "Exception ignored" not in err, err
