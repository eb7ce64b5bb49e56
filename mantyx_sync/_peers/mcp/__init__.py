"""MCP: the client and its stdio and Streamable HTTP transports, behind
:mod:`mantyx_sync.mcp`'s ``mcp_local`` toolset.
"""

__all__: list[str] = []
