"""Tool making: Python functions and types turned into local tool definitions.

Schema derivation (:mod:`.schema`), the object schemas a tool declares
(:mod:`.object_schema`), the function front end (:mod:`.signature`,
:mod:`.docstring`), the package's one cattrs converter, wire values' and
tools' (:mod:`.convert`), validation
(:mod:`.validator`) and the :class:`~mantyx_sync.LocalTool` value
(:mod:`.local_tool`). Sits on the foundation only.
"""

__all__: list[str] = []
