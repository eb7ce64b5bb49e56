"""Evaluations: run a dataset's cases against an agent and score them.

Reach them through ``client.evals`` (an :class:`Evals`):

* :meth:`Evals.datasets` / :meth:`Evals.dataset` read the stored datasets;
* :meth:`Evals.start` starts an evaluation of a stored or inline dataset
  against a stored agent or an :class:`~mantyx_sync.AgentSpec` /
  :class:`~mantyx_sync.Agent`, and returns an :class:`EvalRun`;
* :meth:`EvalRun.iterate` / :meth:`EvalRun.wait` follow it and answer the
  ``local_tool_call`` of every case run with this process's tools — the same
  executor and exactly-once result posting as an ordinary run, routed by the
  call's ``agentRunId``;
* :meth:`Evals.list`, :meth:`Evals.get`, :meth:`Evals.compare` and
  :meth:`Evals.cancel` read, compare and stop evaluations.

Example::

    with client.evals.start(dataset="ds_123", agent=agent, tools=[lookup]) as run:
        detail = run.wait()
    print(f"{detail.passed_cases}/{detail.total_cases} passed, score {detail.score}")
"""

from __future__ import annotations

from ._engine.eval_run import EvalRun
from ._engine.evals import Evals
from ._models import evals as _values
from ._models.evals import *  # noqa: F403 - the evaluation values, as their __all__ lists them

__all__ = ["EvalRun", "Evals"]
__all__ += _values.__all__
