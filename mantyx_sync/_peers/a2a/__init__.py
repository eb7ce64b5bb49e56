"""A2A: the client (0.3 and 1.0 lines) behind :mod:`mantyx_sync.a2a`'s ``a2a_local`` toolset."""

__all__: list[str] = []
