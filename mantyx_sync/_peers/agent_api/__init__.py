"""Agent API protocol (agentscope-runtime): the client and the tool that delegates to it."""

__all__: list[str] = []
