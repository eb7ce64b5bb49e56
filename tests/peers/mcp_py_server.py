"""A test MCP server built with the installed official ``mcp`` package (1.x or 2.x).

Usage: ``python mcp_py_server.py stdio`` or
``python mcp_py_server.py http-sse|http-json|http-stateless PORT``.

Tools: ``echo``, ``get-sum`` (a '-' in its name), ``fail`` (isError), ``shout``
(logs and reports progress first), ``meet`` (waits until ``count`` calls with
the same ``key`` are in flight at once: proves calls overlap without timing),
``roots`` (asks the client for roots/list mid-call, reports what happened),
``nap`` (waits ``seconds``; for timeouts). None changes anything, and each
says so (``readOnlyHint``), so the emulator's stand-in model calls them unscripted.
"""

from __future__ import annotations

import asyncio
import sys
from collections import defaultdict
from typing import Any

from mcp.types import ToolAnnotations

try:  # mcp 2.x
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as _Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as _Server

server: Any = _Server("mantyx-test-peer")
_arrived: dict[str, int] = defaultdict(int)
_changed: asyncio.Condition | None = None
READ_ONLY = ToolAnnotations(readOnlyHint=True)


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(name="get-sum", annotations=READ_ONLY)
def get_sum(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool(annotations=READ_ONLY)
def fail(message: str) -> str:
    """Always fails."""
    raise ValueError(message)


@server.tool(annotations=READ_ONLY)
async def shout(text: str, ctx: Context) -> str:
    """Upper-case the text; logs and reports progress first."""
    await ctx.info(f"shouting {len(text)} chars")
    await ctx.report_progress(1, 1)
    return text.upper()


@server.tool(annotations=READ_ONLY)
async def meet(key: str, count: int) -> str:
    """Return once ``count`` calls with this key are running at the same time."""
    global _changed
    if _changed is None:
        _changed = asyncio.Condition()
    async with _changed:
        _arrived[key] += 1
        _changed.notify_all()
        await asyncio.wait_for(_changed.wait_for(lambda: _arrived[key] >= count), 10)
    return f"met {key}"


@server.tool(annotations=READ_ONLY)
async def roots(ctx: Context) -> str:
    """Ask the client for its roots mid-call and report the outcome."""
    try:
        result = await asyncio.wait_for(ctx.session.list_roots(), 5)
    except Exception as exc:  # the outcome is what the test checks
        return f"roots refused: {type(exc).__name__}: {exc}"
    return "roots: " + ",".join(str(r.uri) for r in result.roots)


@server.tool(annotations=READ_ONLY)
async def nap(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "rested"


def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
        return
    import uvicorn

    port = int(sys.argv[2])
    app = server.streamable_http_app(
        json_response=mode == "http-json", stateless_http=mode == "http-stateless"
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
