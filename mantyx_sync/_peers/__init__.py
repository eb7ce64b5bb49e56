"""Peer protocols a MANTYX run reaches through local tools: MCP (:mod:`.mcp`),
A2A (:mod:`.a2a`) and the JSON-RPC endpoint they share (:mod:`.jsonrpc`).
They speak to their own servers, never to MANTYX.
"""

__all__: list[str] = []
