"""An MCP stdio server shaped like ``@modelcontextprotocol/server-filesystem``, on a real folder.

Usage: ``python fs_mcp_server.py ROOT``. ``read_text_file`` and
``list_directory`` carry ``readOnlyHint``; ``write_file`` says it is not
read-only (and destructive); ``create_directory`` has no annotations at all.
The writing tools really write under ROOT, so a test can see whether they ran.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.types import ToolAnnotations

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as _Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as _Server

ROOT = Path(sys.argv[1])
server: Any = _Server("fs-like")
READ_ONLY = ToolAnnotations(readOnlyHint=True)


@server.tool(annotations=READ_ONLY)
def read_text_file(path: str) -> str:
    """Read a file under the root."""
    return (ROOT / path).read_text()


@server.tool(annotations=READ_ONLY)
def list_directory(path: str) -> str:
    """List a folder under the root."""
    return "\n".join(sorted(p.name for p in (ROOT / path).iterdir()))


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def write_file(path: str, content: str) -> str:
    """Create or overwrite a file under the root."""
    (ROOT / path).write_text(content)
    return "written"


@server.tool()
def create_directory(path: str) -> str:
    """Create a folder under the root."""
    (ROOT / path).mkdir(parents=True)
    return "created"


if __name__ == "__main__":
    server.run("stdio")
