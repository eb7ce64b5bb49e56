"""What a run's ``task_plan`` and ``model_fallback`` events add to its result: the
live plan and the model switches (:class:`~mantyx_sync.RunResult`'s ``plan``,
``model_fallbacks`` and ``model``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from .._models import wire as _wire
from ..events import ModelFallback, TaskPlan, TaskPlanUpdate

__all__ = ["OBSERVED_TYPES", "RunProgress"]

log = logging.getLogger(__name__)

OBSERVED_TYPES: Final = frozenset({"task_plan", "model_fallback"})
"""Event types :meth:`RunProgress.observe` needs to see."""


class RunProgress:
    """The current plan and the model fallbacks of one run, written by the thread iterating
    it; any thread may read :attr:`plan` and :attr:`fallbacks` (replaced, never mutated)."""

    def __init__(self) -> None:
        self.plan: TaskPlan | None = None
        self.fallbacks: tuple[ModelFallback, ...] = ()
        self._latest: dict[str | None, int] = {}  # plan id -> its newest revision seen

    def observe(self, event_type: str, data: Mapping[str, Any]) -> None:
        """Apply one ``task_plan`` or ``model_fallback`` event's data."""
        try:
            if event_type == "task_plan":
                self.apply(_wire.structure(data, TaskPlanUpdate))
            elif event_type == "model_fallback":
                fallback = _wire.structure(data, ModelFallback)
                self.fallbacks = (*self.fallbacks, fallback)
        except _wire.WireFormatError as exc:
            log.warning("%s event not understood, ignored: %s", event_type, exc)

    def apply(self, update: TaskPlanUpdate) -> bool:
        """Apply a plan revision; ``True`` when it changed the plan.

        A revision is applied only when it is newer than every revision already
        seen of the same ``planId`` (a new ``planId`` replaces the plan): a
        replayed or out-of-date revision never moves the plan backwards, not even
        one of a plan that has since been replaced.
        """
        latest = self._latest.get(update.plan_id)
        if update.revision is not None:
            if latest is not None and update.revision <= latest:
                return False
            self._latest[update.plan_id] = update.revision
        self.plan = TaskPlan(
            brief=update.brief, steps=update.steps, plan_id=update.plan_id, revision=update.revision
        )
        return True

    def final_plan(self, sent: Mapping[str, Any] | None) -> TaskPlan | None:
        """A plan-only run's plan (its result's ``plan``), else the latest live revision."""
        if sent is None:
            return self.plan
        return TaskPlan.from_wire(sent)
