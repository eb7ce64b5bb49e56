"""Tool resolution: a spec's tools turned into wire refs and the handlers behind them.

Client-resolved connections (MCP servers, A2A peers) open first, so any
failure is raised before MANTYX is asked for anything.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import attrs

from .._models.checks import validate_tool_refs
from ..errors import SpecError
from ..local_tools import LocalTool, as_local_tool
from ..tools import ClientResolvedTool, ToolConnection
from .executor import ToolRegistry

__all__ = ["ResolvedTools", "resolve_tools"]

log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class ResolvedTools:
    """A spec's tools, ready to send: wire refs plus the handlers behind them."""

    refs: tuple[dict[str, Any], ...] = ()
    local: tuple[LocalTool, ...] = ()
    connections: tuple[ToolConnection, ...] = ()

    def registry(self) -> ToolRegistry:
        return ToolRegistry(self.local, self.connections)

    def close(self) -> None:
        """Close every connection; errors are logged, never raised."""
        for conn in self.connections:
            try:
                conn.close()
            except Exception:
                log.warning("closing %s tool %r failed", conn.kind, conn.name, exc_info=True)


def resolve_tools(tools: Sequence[Any]) -> ResolvedTools:
    """Connect client-resolved tools and build the ``tools[]`` refs.

    :raises SpecError: a tool is of an unknown type, or names clash / break limits.
    :raises ToolResolutionError: an MCP server or A2A peer could not be reached;
        every connection opened so far is closed again.
    """
    refs: list[dict[str, Any]] = []
    local: list[LocalTool] = []
    connections: list[ToolConnection] = []
    try:
        for index, tool in enumerate(tools):
            if isinstance(tool, ClientResolvedTool):
                conn = tool.connect()
                connections.append(conn)
                refs.append(conn.wire_ref())
            elif isinstance(tool, LocalTool) or (callable(tool) and not hasattr(tool, "to_wire")):
                local_tool = as_local_tool(tool)
                local.append(local_tool)
                refs.append(local_tool.to_wire())
            elif hasattr(tool, "to_wire"):
                refs.append(tool.to_wire())
            else:
                raise SpecError(
                    f"unsupported tool object {type(tool).__name__}: pass a LocalTool, a "
                    "decorated function, a define_local_mcp/define_local_a2a definition, or "
                    "MantyxTool/PluginTool/A2ATool/McpTool",
                    path=f"tools[{index}]",
                )
        validate_tool_refs(refs)
    except BaseException:
        ResolvedTools(connections=tuple(connections)).close()
        raise
    return ResolvedTools(refs=tuple(refs), local=tuple(local), connections=tuple(connections))
