"""Peer protocols a MANTYX run reaches through local tools: MCP (:mod:`.mcp`),
A2A (:mod:`.a2a`), agentscope's Agent API (:mod:`.agent_api`), MCP's JSON-RPC
endpoint (:mod:`.jsonrpc`) and what every peer tool checks
alike (:mod:`.definition`).
They speak to their own servers, never to MANTYX.
"""

__all__: list[str] = []
