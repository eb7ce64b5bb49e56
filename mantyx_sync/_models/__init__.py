"""Wire models' private half: the one cattrs converter (:mod:`.wire`) and the limit
checks (:mod:`.checks`) behind the public value modules ``spec``, ``events``
and ``results``.
"""

__all__: list[str] = []
