"""The package's connection pool against a server that keeps connections open."""

from __future__ import annotations

import logging

import pytest

import mantyx_sync
from mantyx_sync._http import pools
from mantyx_sync.testing import LocalMantyx, Turn


def test_more_runs_at_once_than_the_pool_keeps_log_no_warning(
    mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(pools, "_POOL_SIZE", 1)
    mantyx_server.set_model([Turn("hello")])
    caplog.set_level(logging.DEBUG)
    with mantyx_server.client() as client:
        agent = mantyx_sync.Agent(client, system_prompt="t")
        runs = [agent.start("go") for _ in range(3)]
        for run in runs:  # three streams open at once: three connections out
            next(iter(run))
        assert [run.wait().text for run in runs] == ["hello"] * 3
    # The two connections the pool had no room for were closed without a word
    # to the user (urllib3 itself would log a WARNING for each).
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    closed = [r for r in caplog.records if "more connections to" in r.getMessage()]
    assert len(closed) >= 2
