"""The run engine's workers: tool resolution before a run starts and the thread-pool
executor that answers each ``local_tool_call`` exactly once.
"""

__all__: list[str] = []
