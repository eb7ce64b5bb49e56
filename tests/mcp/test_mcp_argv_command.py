"""``define_local_mcp(command=[...argv...])``, the way MCP client configurations
write a server (issue 15, fix 2): the list is the whole argv; anything else of
the wrong shape is a SpecError where it was written, never an error mid-run."""

from __future__ import annotations

from pathlib import Path

import peerkit
import pytest
from peerkit import tool_call

import mantyx_sync
from mantyx_sync.errors import SpecError
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

PY_SERVER = str(peerkit.PEERS / "mcp_py_server.py")


@pytest.mark.parametrize("argv", [list, tuple])
def test_an_argv_list_starts_the_server(argv: type, tmp_path: Path) -> None:
    fs = mantyx_sync.define_local_mcp(
        "py", command=argv([peerkit.PYTHON, PY_SERVER, "stdio"]), cwd=tmp_path, timeout=15
    )
    assert fs.command == peerkit.PYTHON
    assert fs.args == (PY_SERVER, "stdio")
    assert fs.cwd == str(tmp_path)
    conn = fs.connect()
    try:
        assert conn.call(tool_call("py_echo", {"text": "hi"}), timeout=10) == "hi"
    finally:
        conn.close()


def test_an_argv_list_in_a_whole_run() -> None:
    fs = mantyx_sync.define_local_mcp(
        "py", command=[peerkit.PYTHON, PY_SERVER, "stdio"], timeout=15
    )
    model = [
        Turn(tool_calls=[ToolCall("py_echo", {"text": "from argv"})]),
        Turn(lambda ctx: ctx.tool_results[0].get("result", "ERR")),
    ]
    with LocalMantyx(model=model) as server:
        client = server.client()
        result = mantyx_sync.Agent(client, system_prompt="s", tools=[fs]).run("x")
        client.close()
    assert result.text == "from argv"


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"command": ["npx", "-y", "pkg"], "args": ["/srv"]}, "already the whole argv"),
        ({"command": []}, "non-empty list of strings"),
        ({"command": ["npx", 3]}, r"command must be .*, got list of int \| str"),
        ({"command": ["", "x"]}, "non-empty list of strings"),
        ({"command": 42}, "command must be"),
        ({"command": "npx", "args": "-y"}, "args must be"),
        ({"command": "npx", "args": ["-y", 3]}, "args must be"),
        ({"command": "npx", "env": {"A": 1}}, "env must be"),
        ({"command": "npx", "cwd": 5}, "cwd must be"),
        ({"command": "npx", "timeout": "30"}, "timeout must be"),
    ],
)
def test_a_wrong_shape_is_a_spec_error_at_definition(kwargs: dict[str, object], says: str) -> None:
    with pytest.raises(SpecError, match=says) as info:
        mantyx_sync.define_local_mcp("fs", **kwargs)  # type: ignore[arg-type]
    assert "command" in str(info.value) or next(iter(kwargs.keys() - {"command"})) in str(
        info.value
    )
