"""Foundation: JSON type aliases, the UNSET marker, documented limits and secret redaction.

Imports nothing else of the package; every other wing may use it.
"""

__all__: list[str] = []
