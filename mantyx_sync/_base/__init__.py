"""Foundation: JSON type aliases, the UNSET marker, the ``with``-closes mixin, documented
limits, secret redaction, argument type checks (:mod:`.argcheck`) and the event-stream
reader (:mod:`.sse`).

Imports nothing else of the package; every other wing may use it.
"""

__all__: list[str] = []
