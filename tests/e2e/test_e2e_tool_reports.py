"""What a run tells about its tools: a broken tool is shown, not only told to the
model, and every ``on_tool`` callback has been made when ``run()`` returns."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from tool_support import final_with_results

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."
ROOT = Path(__file__).resolve().parents[2]


def _two_turns_calling(server: LocalMantyx, name: str) -> None:
    server.set_model([Turn(tool_calls=[ToolCall(name, {})]), Turn(final_with_results)])


def test_first_failure_of_a_tool_is_a_warning_with_its_traceback(
    mantyx_server: LocalMantyx, caplog: pytest.LogCaptureFixture
) -> None:
    @mantyx_sync.local_tool
    def shaky_lookup() -> str:
        """Fails every time."""
        raise KeyError("no such order")

    @mantyx_sync.local_tool
    def odd_value() -> object:
        """Returns a value JSON cannot hold."""
        return object()

    caplog.set_level(logging.INFO, logger="mantyx_sync")
    for tool in (shaky_lookup, odd_value, shaky_lookup):
        _two_turns_calling(mantyx_server, tool.name)
        agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[tool])
        assert "ERR:" in agent.run("x").text  # the model got the error; the run succeeded
    records = [r for r in caplog.records if r.name == "mantyx_sync.tools"]
    assert [(r.levelname, r.exc_info is not None) for r in records] == [
        ("WARNING", True),
        ("WARNING", True),
        ("INFO", True),
    ]
    assert "'shaky_lookup'" in records[0].getMessage() and "raised" in records[0].getMessage()
    assert "KeyError" in caplog.text
    assert "'odd_value'" in records[1].getMessage()
    assert "cannot be sent" in records[1].getMessage()


def test_a_tool_error_is_the_handlers_own_message_and_not_a_failure(
    mantyx_server: LocalMantyx, caplog: pytest.LogCaptureFixture
) -> None:
    @mantyx_sync.local_tool
    def refuse() -> str:
        """Refuses on purpose."""
        raise mantyx_sync.ToolError("order not found")

    _two_turns_calling(mantyx_server, "refuse")
    caplog.set_level(logging.INFO, logger="mantyx_sync")
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[refuse])
    assert agent.run("x").text == "refuse=ERR:order not found"
    assert not [r for r in caplog.records if r.name == "mantyx_sync.tools"]


SCRIPT = """
import logging, sys
import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

@mantyx_sync.local_tool
def shaky_lookup() -> str:
    \"\"\"Fails every time.\"\"\"
    raise KeyError("no such order")

with LocalMantyx() as server:
    for _ in range(2):
        server.set_model([Turn(tool_calls=[ToolCall("shaky_lookup", {})]), Turn("done")])
        agent = mantyx_sync.Agent(server.client(), system_prompt="x", tools=[shaky_lookup])
        print(agent.run("x").text)
    if sys.argv[1:] == ["configured"]:
        logging.basicConfig(format="app: %(message)s")
        server.set_model([Turn(tool_calls=[ToolCall("shaky_lookup", {})]), Turn("done")])
        mantyx_sync.Agent(server.client(), system_prompt="x", tools=[shaky_lookup]).run("x")
"""


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )


def test_with_logging_unconfigured_the_first_failure_reaches_stderr_once() -> None:
    done = _script()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["done", "done"]
    assert done.stderr.count("mantyx_sync.tools: WARNING: run ") == 1, done.stderr
    assert done.stderr.count("Traceback (most recent call last)") == 1, done.stderr
    assert "KeyError: 'no such order'" in done.stderr


def test_an_application_that_configures_logging_sees_it_once_its_way() -> None:
    done = _script("configured")
    assert done.returncode == 0, done.stderr
    # The third failure is at INFO: basicConfig's WARNING level hides it, and the
    # package's own fallback stays quiet once the application has a handler.
    assert done.stderr.count("mantyx_sync.tools: WARNING") == 1, done.stderr
    assert "app: " not in done.stderr


def test_every_on_tool_callback_is_made_before_run_returns(mantyx_server: LocalMantyx) -> None:
    order: list[str] = []
    in_end = threading.Event()
    release = threading.Event()

    def on_tool(activity: mantyx_sync.ToolActivity) -> None:
        if activity.phase == "end":
            in_end.set()
            release.wait(10)
        order.append(activity.phase)

    @mantyx_sync.local_tool
    def echo() -> str:
        """Echo."""
        return "ok"

    _two_turns_calling(mantyx_server, "echo")
    agent = mantyx_sync.Agent(
        mantyx_server.client(), system_prompt=SYSTEM, tools=[echo], on_tool=on_tool
    )
    runner = threading.Thread(target=lambda: order.append(agent.run("x").text))
    runner.start()
    try:
        assert in_end.wait(10)
        # The answer is posted and the run ends meanwhile; run() must still wait for
        # the callback (without the fix it returns here, before "end" is recorded).
        mantyx_server.wait_for_run(timeout=10)
        runner.join(timeout=2)
    finally:
        release.set()
    runner.join(timeout=10)
    assert not runner.is_alive()
    assert order == ["start", "end", "echo=ok"]
