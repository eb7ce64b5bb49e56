"""The run engine's workers: tool resolution before a run starts (:mod:`.resolution`),
the thread-pool executor that answers each ``local_tool_call`` exactly once
(:mod:`.executor`, :mod:`.calls`, :mod:`.outputs`), and evaluations
(:mod:`.evals`, :mod:`.eval_run`).
"""

__all__: list[str] = []
