"""Wire models' private half: the values behind the public modules ``spec``, ``messages``,
``events``, ``results``, ``evals`` and ``history``, the wire mapping (:mod:`.wire`) and the
limit checks (:mod:`.checks`)."""

__all__: list[str] = []
