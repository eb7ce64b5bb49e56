"""MCP: the client, its stdio and Streamable HTTP transports, and the
``mcp_local`` toolset a run connects to.
"""

__all__: list[str] = []
