"""Tool making: Python functions and types turned into local tool definitions, and the
package's one cattrs converter (:mod:`.convert`). Sits on the foundation only."""

__all__: list[str] = []
