"""The HTTP wing: transport, retry policies, client configuration, the SSE stream
reader and the exactly-once tool-result poster. The only wing that speaks to
the MANTYX API.
"""

__all__: list[str] = []
