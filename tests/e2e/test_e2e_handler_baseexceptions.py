"""Every local tool call gets its one answer whatever the handler raises (issue 15, fix 1)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from tool_support import final_with_results, posted_results

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."


class _Custom(BaseException):
    """A BaseException that is neither an Exception nor one of Python's own."""


@pytest.fixture
def server() -> Iterator[LocalMantyx]:
    # A short server-side tool timeout: an unanswered call ends the run with
    # error_local_tool_timeout within seconds instead of the model's final turn.
    with LocalMantyx(tool_timeout=3.0) as srv:
        yield srv


@pytest.mark.parametrize(
    ("raised", "named"),
    [
        (SystemExit(3), "SystemExit: 3"),
        (KeyboardInterrupt(), "KeyboardInterrupt"),
        (GeneratorExit("closed"), "GeneratorExit: closed"),
        (_Custom("odd"), "_Custom: odd"),
    ],
)
def test_a_handler_raising_a_base_exception_is_answered_once(
    server: LocalMantyx, raised: BaseException, named: str
) -> None:
    @mantyx_sync.local_tool
    def explode() -> str:
        """Raise something that is not an Exception."""
        raise raised

    # A short server-side tool timeout: an unanswered call would end the run
    # with error_local_tool_timeout instead of the model's final turn.
    server.set_model([Turn(tool_calls=[ToolCall("explode", {})]), Turn(final_with_results)])
    client = server.client()
    result = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[explode]).run("x")
    assert result.text == f"explode=ERR:{named}"
    posted = posted_results(server, result.run_id)
    assert len(posted) == 1 and posted[0]["error"] == named
    client.close()


def test_keyboard_interrupt_in_a_worker_leaves_the_pool_serving(server: LocalMantyx) -> None:
    interrupted = threading.Event()

    @mantyx_sync.local_tool
    def first() -> str:
        """Raise KeyboardInterrupt on the worker thread."""
        interrupted.set()
        raise KeyboardInterrupt

    @mantyx_sync.local_tool
    def second() -> str:
        """Run after the interrupt, on the same single worker."""
        assert interrupted.wait(10)
        return "still serving"

    server.set_model(
        [
            Turn(tool_calls=[ToolCall("first", {}), ToolCall("second", {})]),
            Turn(final_with_results),
        ]
    )
    client = server.client()
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[first, second])
    with client.runs.start(agent.spec, "x", max_workers=1) as run:
        result = run.wait()
    assert sorted(result.text.split(" | ")) == [
        "first=ERR:KeyboardInterrupt",
        "second=still serving",
    ]
    assert len(posted_results(server, result.run_id)) == 2
    client.close()
