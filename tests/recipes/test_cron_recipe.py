"""examples/recipes/cron_job.py: the answer on stdout and an exit status cron can act on."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from recipe_support import cancel_requests

from mantyx_sync.testing import Fail, LocalMantyx, ModelContext, ToolCall, Turn

SCRIPT = Path(__file__).parents[2] / "examples" / "recipes" / "cron_job.py"


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    env.update(values)
    return env


def _server_env(server: LocalMantyx, **overrides: str) -> dict[str, str]:
    values = {
        "MANTYX_API_KEY": server.api_key,
        "MANTYX_WORKSPACE": server.workspace,
        "MANTYX_BASE_URL": server.base_url,
    }
    values.update(overrides)
    return _env(**values)


def _cron(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_success_prints_the_answer_and_exits_0(mantyx_server: LocalMantyx) -> None:
    done = _cron("Report on today", env=_server_env(mantyx_server))
    assert done.returncode == 0, done.stderr
    (run,) = mantyx_server.runs.values()
    # The default model calls the local tool once; its answer comes back.
    assert done.stdout.startswith("You said: Report on today\ntoday → 20")
    assert run.spec["tools"][0]["name"] == "today"
    assert done.stderr.startswith(f"cron_job: run {run.id} done, ")


def test_without_a_key_it_uses_its_own_emulator() -> None:
    done = _cron("offline", env=_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("You said: offline\n")
    assert "MANTYX_API_KEY is not set: using a local MANTYX emulator" in done.stderr


def test_a_failed_run_exits_1(mantyx_server: LocalMantyx) -> None:
    mantyx_server.queue_script([Fail("upstream model overloaded", code="overloaded")])
    done = _cron("x", env=_server_env(mantyx_server))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("cron_job: error: run ")
    assert "(overloaded): upstream model overloaded" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_key_exits_3(mantyx_server: LocalMantyx) -> None:
    done = _cron("x", env=_server_env(mantyx_server, MANTYX_API_KEY="mantyx_not_the_key"))
    assert done.returncode == 3
    assert done.stderr == "cron_job: error: HTTP 401 unauthorized: invalid API key\n"
    assert mantyx_server.runs == {}


def test_an_unreachable_server_exits_4() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = _env(
        MANTYX_API_KEY="mantyx_k",
        MANTYX_WORKSPACE="ws",
        MANTYX_BASE_URL=f"http://127.0.0.1:{port}",
    )
    done = _cron("x", env=env)
    assert done.returncode == 4
    assert done.stderr.startswith("cron_job: error: ")
    assert done.stderr.count("\n") == 1


def test_usage_and_configuration_errors_exit_2(mantyx_server: LocalMantyx) -> None:
    assert _cron(env=_server_env(mantyx_server)).returncode == 2
    no_workspace = _server_env(mantyx_server)
    del no_workspace["MANTYX_WORKSPACE"]
    done = _cron("x", env=no_workspace)
    assert done.returncode == 2
    assert "MANTYX_WORKSPACE" in done.stderr


def test_sigterm_from_timeout_cancels_the_run_and_exits_130(
    signalled_server: LocalMantyx,
) -> None:
    answering = threading.Event()  # the script answered its tool call: it follows the run
    release = threading.Event()

    def model(ctx: ModelContext) -> ToolCall | Turn:
        if ctx.turn == 0:
            return ToolCall("today")
        answering.set()
        release.wait(20)  # the answer never comes while the test runs
        return Turn("too late")

    signalled_server.set_model(model)
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "x"],
        env=_server_env(signalled_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert answering.wait(20), "the model never got the tool's answer"
        process.send_signal(signal.SIGTERM)  # what `timeout` sends
        out, err = process.communicate(timeout=20)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
    assert process.returncode == 130
    assert (out, err) == ("", "cron_job: error: interrupted; the run was cancelled\n")
    (run,) = signalled_server.runs.values()
    assert (
        signalled_server.wait_for_run(run.id, status="cancelled", timeout=5).status == "cancelled"
    )
    assert len(cancel_requests(signalled_server, run.id)) >= 1
