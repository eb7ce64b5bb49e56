"""Wire models' private half: the one cattrs converter (:mod:`.wire`), the limit
checks (:mod:`.checks`) and the values behind the public value modules ``spec``
(:mod:`.guards`, :mod:`.controls`), ``messages`` (:mod:`.attachments`),
``events`` and ``results``, and the cursor paging of list routes
(:mod:`.paging`) behind ``history`` and ``feedback``.
"""

__all__: list[str] = []
