"""Wire models' private half: the values behind the public modules ``spec``, ``messages``,
``events``, ``results``, ``evals`` and ``history``, the wire mapping (:mod:`.wire`: each
class's :mod:`.plan`, and the one cattrs converter, :mod:`.convert`) and the limit checks
(:mod:`.checks`). Sits on the foundation only."""

__all__: list[str] = []
