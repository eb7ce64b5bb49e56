"""A2A: the client (0.3 and 1.0 lines) and the ``a2a_local`` toolset a run connects to."""

__all__: list[str] = []
