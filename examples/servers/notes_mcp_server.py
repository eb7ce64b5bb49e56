"""A small MCP server over stdio: an in-memory notebook (used by examples/mcp_local.py).

Built with the official MCP Python SDK (``pip install mcp``; works with the
1.x and 2.x lines). Run it by hand to see it speak MCP on stdin/stdout:

    python examples/servers/notes_mcp_server.py

Tools: ``add_note``, ``list_notes``, ``read_note`` and ``search-notes`` (a '-'
in the name on purpose: mantyx_sync exposes it to the model as
``<label>_search_notes`` and maps calls back to the real name).
"""

from __future__ import annotations

import sys
from typing import Any

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as _Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:
    try:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef]
        from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]
    except ImportError:
        sys.stderr.write("notes_mcp_server.py needs the official MCP Python SDK: pip install mcp\n")
        sys.exit(2)

server: Any = _Server("example-notes")

_notes: dict[str, str] = {
    "shopping": "milk, eggs, coffee beans",
    "ideas": "write a cron job that summarises the day's tickets",
}


@server.tool()
def add_note(title: str, text: str) -> str:
    """Save a note under a title (replacing any note with that title)."""
    replaced = title in _notes
    _notes[title] = text
    return f"{'Replaced' if replaced else 'Saved'} note {title!r} ({len(_notes)} notes in total)."


@server.tool()
def list_notes() -> str:
    """List the titles of all notes."""
    return ", ".join(sorted(_notes)) or "(no notes)"


@server.tool()
def read_note(title: str) -> str:
    """Read the note with this title."""
    if title not in _notes:
        # A ToolError becomes an isError result whose text the model sees; any other
        # exception would reach it only as "Error executing tool read_note".
        raise ToolError(f"no note titled {title!r}; try list_notes")
    return _notes[title]


@server.tool(name="search-notes")
def search_notes(query: str) -> str:
    """Find the notes whose title or text contains the query (case-insensitive)."""
    needle = query.lower()
    hits = [f"{t}: {x}" for t, x in sorted(_notes.items()) if needle in f"{t} {x}".lower()]
    return "\n".join(hits) or f"no note mentions {query!r}"


if __name__ == "__main__":
    server.run("stdio")
