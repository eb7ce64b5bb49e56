"""The emulator's stand-in model, unscripted, never calls a tool that may change something."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# mcp.types, not mcp: tests/mcp is importable as a namespace package named mcp.
pytest.importorskip("mcp.types", reason="the MCP test server needs the mcp package")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

import peerkit

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

FS_SERVER = str(peerkit.PEERS / "fs_mcp_server.py")


def _fs(root: Path) -> mantyx_sync.LocalMcp:
    # The README's example, with a stand-in for the npm filesystem server.
    return mantyx_sync.define_local_mcp("fs", command=[peerkit.PYTHON, FS_SERVER, str(root)])


def test_unscripted_run_leaves_a_writable_mcp_server_alone(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    (tmp_path / "example").mkdir()
    (tmp_path / "example" / "notes.txt").write_text("hello")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    seen: list[str] = []

    def record(activity: mantyx_sync.ToolActivity) -> None:
        if activity.phase == "end":
            seen.append(activity.name)

    @mantyx_sync.local_tool
    def delete_everything() -> str:
        """Not marked read-only: the stand-in model must not call it."""
        raise AssertionError("called without a script")

    agent = mantyx_sync.Agent(
        mantyx_server.client(),
        system_prompt="s",
        tools=[_fs(tmp_path), delete_everything],
        on_tool=record,
    )
    result = agent.run("List /srv")
    calls = [e.local_tool_call.name for e in result.events if e.local_tool_call is not None]
    assert sorted(calls) == ["fs_list_directory", "fs_read_text_file"]
    assert sorted(seen) == sorted(calls)
    assert "fs_list_directory → notes.txt" in result.text
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_a_script_naming_a_writing_tool_runs_it(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("fs_write_file", {"path": "a.txt", "content": "x"})]),
            Turn(lambda ctx: str(ctx.tool_results[0].get("result"))),
        ]
    )
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="s", tools=[_fs(tmp_path)])
    assert agent.run("write").text == "written"
    assert (tmp_path / "a.txt").read_text() == "x"
