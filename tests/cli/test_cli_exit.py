"""``mantyx-sync run`` exits at once on SIGTERM even while a local tool never returns."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess

import pytest
from cli_support import HERE, cli_env, console_script

from mantyx_sync.testing import LocalMantyx, ToolCall, Turn


def test_sigterm_exits_at_once_while_a_tool_hangs(
    signalled_server: LocalMantyx, tmp_path: pathlib.Path
) -> None:
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)  # the tool blocks opening it: nothing ever writes to it
    signalled_server.set_model(
        [Turn(tool_calls=[ToolCall("wait_for", {"path": str(fifo)})]), Turn("Finished.")]
    )
    process = subprocess.Popen(
        [console_script(), "run", "go", "--json", "--tool", "cli_tools:wait_for"],
        env=cli_env(signalled_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=HERE,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if json.loads(line)["type"] == "local_tool_call":
                break
        process.send_signal(signal.SIGTERM)  # what `timeout` and systemd send
        _, stderr = process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail("mantyx-sync was still running 5 s after SIGTERM: the tool thread held it")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
    assert process.returncode == 130
    assert "Traceback" not in stderr
    assert signalled_server.wait_for_run(status="cancelled", timeout=5).status == "cancelled"
