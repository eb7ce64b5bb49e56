"""mcp_local against the npm reference servers (skipped when node or the install is missing).

Install them with ``npm install --prefix tests/peers --no-audit --no-fund``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import peerkit
import pytest
from peerkit import tool_call

from mantyx_sync.errors import ToolError
from mantyx_sync.mcp import define_local_mcp

EVERYTHING = peerkit.npm_bin("mcp-server-everything")
FILESYSTEM = peerkit.npm_bin("mcp-server-filesystem")
_REASON = "node or tests/peers/node_modules missing (npm install --prefix tests/peers)"


@pytest.mark.skipif(EVERYTHING is None, reason=_REASON)
def test_server_everything() -> None:
    assert EVERYTHING is not None
    conn = define_local_mcp("ev", command=EVERYTHING, timeout=20).connect()
    try:
        assert conn.upstream_name("ev_get_sum") == "get-sum"
        assert conn.upstream_name("ev_get_tiny_image") == "get-tiny-image"
        assert conn.call(tool_call("ev_get_sum", {"a": 2, "b": 3}), timeout=10) == (
            "The sum of 2 and 3 is 5."
        )
        image = conn.call(tool_call("ev_get_tiny_image"), timeout=10)
        assert "[image: image/png, " in image and "bytes base64]" in image
        links = conn.call(tool_call("ev_get_resource_links", {"count": 1}), timeout=10)
        assert "[resource link: " in links and "demo://resource/" in links
        ref = conn.call(tool_call("ev_get_resource_reference"), timeout=10)
        assert "Resource 1: This is a plaintext resource" in ref
        # Progress notifications on the way are ignored.
        done = conn.call(
            tool_call("ev_trigger_long_running_operation", {"duration": 0.2, "steps": 2}),
            timeout=10,
        )
        assert done.startswith("Long running operation completed.")
        with pytest.raises(ToolError, match="Invalid arguments"):
            conn.call(tool_call("ev_get_sum", {"a": "x", "b": 1}), timeout=10)
    finally:
        conn.close()


@pytest.mark.skipif(FILESYSTEM is None, reason=_REASON)
def test_server_filesystem_without_roots(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert FILESYSTEM is not None
    caplog.set_level(logging.DEBUG, logger="mantyx_sync._peers.mcp.stdio")
    (tmp_path / "hello.txt").write_text("hello from fs\n")
    conn = define_local_mcp(
        "fs",
        command=FILESYSTEM,
        args=[str(tmp_path)],
        tool_filter=["read_text_file", "list_directory"],
        timeout=20,
    ).connect()
    try:
        assert conn.tool_names() == ["fs_read_text_file", "fs_list_directory"]
        path = str(tmp_path / "hello.txt")
        assert conn.call(tool_call("fs_read_text_file", {"path": path}), timeout=10) == (
            "hello from fs\n"
        )
        with pytest.raises(ToolError, match="Access denied"):
            conn.call(tool_call("fs_read_text_file", {"path": "/etc/hosts"}), timeout=10)
    finally:
        conn.close()
    # We declare no roots capability, so the server keeps its argv directories
    # rather than asking roots/list (its stderr, drained to our debug log, says so).
    assert "Client does not support MCP Roots" in caplog.text
