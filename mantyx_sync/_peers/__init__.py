"""Peer protocols a MANTYX run reaches through local tools: MCP (:mod:`.mcp`),
A2A (:mod:`.a2a`), agentscope's Agent API (:mod:`.agent_api`), the JSON-RPC
endpoint MCP and A2A share (:mod:`.jsonrpc`) and what every peer tool checks
alike (:mod:`.definition`).
They speak to their own servers, never to MANTYX.
"""

__all__: list[str] = []
