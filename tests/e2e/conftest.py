"""Fixtures shared by the end-to-end tests against the local emulator."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn


@pytest.fixture
def held_agent(mantyx_server: LocalMantyx) -> Iterator[mantyx_sync.Agent]:
    """An agent whose run streams ``a b``, then waits in its tool ``hold`` until the test ends.

    The run never ends on its own while the test runs: only a cancel ends it.
    """
    release = threading.Event()

    @mantyx_sync.local_tool
    def hold() -> str:
        """Keeps the run open until released."""
        release.wait(10)
        return "x"

    mantyx_server.set_model(
        [Turn("a b", chunks=["a ", "b"], tool_calls=[ToolCall("hold", {})]), Turn("end")]
    )
    yield mantyx_sync.Agent(mantyx_server.client(), system_prompt="s", tools=[hold])
    release.set()
