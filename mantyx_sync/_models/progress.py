"""What a run's non-terminal events add to its result: the live plan and model switches.

:class:`RunProgress` is fed the ``task_plan`` and ``model_fallback`` events of
one run, in ``seq`` order, by the thread reading them, and fills in
:class:`~mantyx_sync.RunResult`'s ``plan``, ``model_fallbacks`` and ``model``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from . import wire as _wire

if TYPE_CHECKING:
    from .payloads import ModelFallback, PlanTracker, TaskPlan

__all__ = ["OBSERVED_TYPES", "RunProgress"]

log = logging.getLogger(__name__)

OBSERVED_TYPES: Final = frozenset({"task_plan", "model_fallback"})
"""Event types :meth:`RunProgress.observe` needs to see."""


class RunProgress:
    """The current plan and the model fallbacks of one run.

    Written by one thread (the one iterating the run); :attr:`plan` and
    :attr:`fallbacks` may be read from any thread (they are replaced, never mutated).
    """

    def __init__(self) -> None:
        self._plans: PlanTracker | None = None  # made by the first task_plan event
        self.fallbacks: tuple[ModelFallback, ...] = ()

    @property
    def plan(self) -> TaskPlan | None:
        """The latest applied plan revision, or ``None``."""
        return None if self._plans is None else self._plans.plan

    def observe(self, event_type: str, data: Mapping[str, Any]) -> None:
        """Apply one ``task_plan`` or ``model_fallback`` event's data."""
        # The payload classes load with the first such event: most runs have none.
        from . import payloads

        try:
            if event_type == "task_plan":
                if self._plans is None:
                    self._plans = payloads.PlanTracker()
                self._plans.apply(_wire.structure(data, payloads.TaskPlanUpdate))
            elif event_type == "model_fallback":
                fallback = _wire.structure(data, payloads.ModelFallback)
                self.fallbacks = (*self.fallbacks, fallback)
        except _wire.WireFormatError as exc:
            log.warning("%s event not understood, ignored: %s", event_type, exc)

    def final_plan(self, sent: Mapping[str, Any] | None) -> TaskPlan | None:
        """A plan-only run's plan (its result's ``plan``), else the latest live revision."""
        if sent is None:
            return self.plan
        from .payloads import TaskPlan

        return TaskPlan.from_wire(sent)
