"""The values of the evaluation routes, re-exported by :mod:`mantyx_sync.evals`. Every
field may be missing on an older server; unknown fields pass through in ``raw``."""

from __future__ import annotations

from typing import Any, Final

import attrs

from .wire import ALIASES, RAW, FromWire

__all__ = [
    "EvalCase",
    "EvalCaseComparison",
    "EvalCaseResult",
    "EvalComparison",
    "EvalDataset",
    "EvalDatasetSummary",
    "EvalRunDetail",
    "EvalRunSummary",
]

EVAL_TERMINAL_STATUSES: Final = frozenset({"succeeded", "failed", "cancelled"})
"""Statuses after which an evaluation changes no more."""


_RAW_FIELD: Final[Any] = {"factory": dict, "metadata": {RAW: True}, "repr": False, "eq": False}


@attrs.frozen(kw_only=True)
class EvalDatasetSummary(FromWire):
    """A dataset as ``GET /eval-datasets`` lists it."""

    id: str
    name: str | None = None
    description: str | None = None
    case_count: int | None = None
    run_count: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalCase(FromWire):
    """One case: the run input, its scorers and tags.

    :ivar input: the run input (e.g. ``{"prompt": ...}`` or ``{"messages": [...]}``).
    :ivar scorers: how the case is scored, as the server describes them.
    :ivar tool_mocks: canned tool answers for this case, as sent.
    """

    id: str | None = None
    name: str | None = None
    input: dict[str, Any] = attrs.field(factory=dict)
    scorers: tuple[dict[str, Any], ...] = ()
    tags: tuple[str, ...] = ()
    tool_mocks: Any = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalDataset(FromWire):
    """A dataset with its cases (``GET /eval-datasets/{id}``)."""

    id: str
    name: str | None = None
    description: str | None = None
    tool_mocks: Any = None
    cases: tuple[EvalCase, ...] = ()
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalRunSummary(FromWire):
    """An evaluation as ``GET /eval-runs`` lists it.

    :ivar status: ``succeeded``, ``failed`` or ``cancelled`` once it is over;
        anything else means it is still in progress.
    :ivar score: the overall score, when scored.
    """

    id: str = attrs.field(metadata={ALIASES: ("runId",)})
    dataset_id: str | None = None
    dataset_name: str | None = None
    agent_id: str | None = None
    inline_agent: bool | None = None
    status: str | None = None
    total_cases: int | None = None
    completed_cases: int | None = None
    passed_cases: int | None = None
    score: float | None = None
    token_usage: Any = None
    error: Any = None
    agent_overrides: dict[str, Any] | None = None
    started_at: str | None = None
    finished_at: str | None = None
    created_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)

    @property
    def done(self) -> bool:
        """Whether the evaluation is over (a terminal status)."""
        return self.status in EVAL_TERMINAL_STATUSES


@attrs.frozen(kw_only=True)
class EvalCaseResult(FromWire):
    """One case's outcome in an evaluation."""

    id: str | None = None
    case_id: str | None = None
    case: EvalCase | None = None
    final_text: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    scores: tuple[dict[str, Any], ...] = ()
    passed: bool | None = None
    score: float | None = None
    tokens: Any = None
    latency_ms: float | None = None
    error: Any = None
    created_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalRunDetail(EvalRunSummary):
    """An evaluation with its per-case results (``GET /eval-runs/{id}``)."""

    results: tuple[EvalCaseResult, ...] = ()
    inline_agent_spec: dict[str, Any] | None = None
    agent_spec_snapshot: dict[str, Any] | None = None
    updated_at: str | None = None


@attrs.frozen(kw_only=True)
class EvalCaseComparison(FromWire):
    """One case in a comparison: its two results (either may be missing)."""

    case_id: str | None = None
    case_name: str | None = None
    case_input: dict[str, Any] | None = None
    a: EvalCaseResult | None = None
    b: EvalCaseResult | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalComparison(FromWire):
    """Two evaluations of one dataset side by side (``GET /eval-runs/compare``)."""

    dataset_id: str | None = None
    dataset_name: str | None = None
    run_a: EvalRunSummary | None = None
    run_b: EvalRunSummary | None = None
    cases: tuple[EvalCaseComparison, ...] = ()
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)
