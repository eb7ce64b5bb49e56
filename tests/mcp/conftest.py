"""Fixtures for the mcp_local tests: real MCP servers in subprocesses, always reaped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

import peerkit


@pytest.fixture(scope="module", params=["http-sse", "http-json", "http-stateless"])
def py_http_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The official Python MCP server over Streamable HTTP, in each reply mode."""
    port = peerkit.free_port()
    script = str(peerkit.PEERS / "mcp_py_server.py")
    with peerkit.http_peer([script, request.param, str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"
