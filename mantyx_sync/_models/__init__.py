"""Wire models' private half: bodies to values and back (:mod:`.wire`), the limit
checks (:mod:`.checks`) and the values behind the public value modules ``spec``
(:mod:`.guards`, :mod:`.controls`), ``messages`` (:mod:`.attachments`),
``events`` (:mod:`.payloads`) and ``results`` (:mod:`.progress`), the
evaluation values (:mod:`.evals`), and the cursor paging of list routes
(:mod:`.paging`) behind ``history`` and ``feedback``.
"""

__all__: list[str] = []
