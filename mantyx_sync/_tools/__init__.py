"""Tool making: Python functions and types turned into local tool definitions, their
values converted by the package's one cattrs converter (:mod:`mantyx_sync._models.convert`).
Sits on the wire models and the foundation only."""

__all__: list[str] = []
