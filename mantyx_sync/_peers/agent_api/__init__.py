"""Agent API protocol (agentscope-runtime): the client behind :mod:`mantyx_sync.agent_api`."""

__all__: list[str] = []
