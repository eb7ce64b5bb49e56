"""Run guards of an agent spec: output schema, loop detection, tool budgets.

:class:`OutputSchema`, :class:`LoopDetection` and :class:`ToolBudget`
(``mantyx_sync.OutputSchema`` ...); the ``coerce_*`` functions accept every
documented input shape and raise :class:`~mantyx_sync.errors.SpecError` naming
the argument to fix. Values are immutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeVar, Union

import attrs

from ._base.argcheck import checked_init
from ._base.limits import (
    LOOP_THRESHOLD_MAX,
    OUTPUT_SCHEMA_MAX_BYTES,
    OUTPUT_SCHEMA_NAME_RE,
    TOOL_BUDGET_KEY_MAX,
    TOOL_BUDGET_MAX_CALLS,
    TOOL_BUDGETS_MAX_ENTRIES,
)
from ._models import wire as _wire
from ._models.checks import check_choice, check_int, is_int, json_size
from .errors import ArgumentTypeError, SpecError
from .types import UnsetType

__all__ = ["LoopDetection", "OutputSchema", "ToolBudget"]

# The server's thresholds when a field is omitted.
_DEFAULT_CONSECUTIVE: Final = 3
_DEFAULT_HARD_CUTOFF: Final = 6
_ENFORCEMENTS: Final = ("best_effort", "strict")


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True)
class OutputSchema:
    """A JSON Schema the final reply must satisfy.

    :ivar schema: the JSON Schema; its root must describe a JSON object.
    :ivar name: provider-facing identifier (server default ``"output"``).
    :ivar enforcement: ``"best_effort"`` (the server default: the schema is
        asked for, and a model that cannot be constrained answers unconstrained)
        or ``"strict"`` (the run fails with ``structured_output_schema_rejected``,
        ``structured_output_not_supported`` or ``structured_output_not_enforced``
        rather than answer unconstrained).
    """

    schema: dict[str, Any]
    name: str | None = None
    enforcement: str | None = None

    @classmethod
    def coerce(cls, value: Any, *, path: str = "output_schema") -> OutputSchema:
        """Accept an :class:`OutputSchema`, the wire shape ``{"schema", "name"?}`` or a
        bare JSON Schema object, and check the documented limits.

        :raises SpecError: what to fix, with the field path.
        """
        if isinstance(value, Mapping) and "schema" not in value:
            value = cls(schema=dict(value))  # a bare JSON Schema
        return _checked(cls, value, path, "a JSON Schema object or {'schema': ..., 'name': ...}")

    def _check(self, path: str) -> None:
        if not isinstance(self.schema, Mapping):
            raise SpecError(
                f"must be a JSON object, got {type(self.schema).__name__}", path=f"{path}.schema"
            )
        root_type = self.schema.get("type")
        if root_type is not None and root_type != "object":
            raise SpecError(
                f"the root must describe a JSON object (type 'object'), got type {root_type!r}",
                path=f"{path}.schema.type",
            )
        name: Any = self.name
        valid_name = isinstance(name, str) and OUTPUT_SCHEMA_NAME_RE.match(name)
        if name is not None and not valid_name:
            raise SpecError(
                "must be 1-64 characters from a-z, A-Z, 0-9, '_' and '-'", path=f"{path}.name"
            )
        if self.enforcement is not None:
            where = f"{path}.enforcement"
            check_choice(self.enforcement, _ENFORCEMENTS, where, "'best_effort' or 'strict'")
        size = json_size(_wire.unstructure(self), path)
        if size > OUTPUT_SCHEMA_MAX_BYTES:
            raise SpecError(
                f"serializes to {size} bytes; the limit is {OUTPUT_SCHEMA_MAX_BYTES}", path=path
            )


_Guard = TypeVar("_Guard", OutputSchema, "LoopDetection", "ToolBudget")


def _checked(
    cls: type[_Guard], value: Any, path: str, wrong: str, error: type[SpecError] = ArgumentTypeError
) -> _Guard:
    """``value`` as ``cls`` (itself, or built from a mapping in either key style), checked."""
    if isinstance(value, cls):
        result = value
    elif isinstance(value, Mapping):
        result = _wire.structure(value, cls, path=path)
    else:
        raise error(f"must be {wrong}, got {type(value).__name__}", path=path)
    result._check(path)
    return result


@attrs.frozen(kw_only=True)
class LoopDetection:
    """Loop-guard thresholds; ``None`` keeps the server default.

    ``consecutive_threshold`` (≥ 2, default 3) identical tool batches in a row
    nudge the model; ``hard_cutoff_threshold`` (≥ 3, default 6, and greater than
    the consecutive threshold) force it to finish. Both are at most 100. Pass
    ``loop_detection=False`` to a spec to disable the guard instead.
    """

    consecutive_threshold: int | None = None
    hard_cutoff_threshold: int | None = None

    @classmethod
    def coerce(cls, value: Any, *, path: str = "loop_detection") -> LoopDetection | Literal[False]:
        """Accept ``False``, a :class:`LoopDetection` or a mapping in either key style.

        :raises SpecError: what to fix, with the field path.
        """
        if value is False:
            return False
        return _checked(cls, value, path, "False, a LoopDetection or a mapping")

    def _check(self, path: str) -> None:
        consecutive, hard = self.consecutive_threshold, self.hard_cutoff_threshold
        if consecutive is not None:
            check_int(consecutive, f"{path}.consecutive_threshold", low=2, high=LOOP_THRESHOLD_MAX)
        if hard is not None:
            check_int(hard, f"{path}.hard_cutoff_threshold", low=3, high=LOOP_THRESHOLD_MAX)
        effective_consecutive = _DEFAULT_CONSECUTIVE if consecutive is None else consecutive
        effective_hard = _DEFAULT_HARD_CUTOFF if hard is None else hard
        if effective_hard > effective_consecutive:
            return
        if hard is None:
            raise SpecError(
                f"consecutive_threshold ({consecutive}) must be below the default "
                f"hard_cutoff_threshold ({_DEFAULT_HARD_CUTOFF}); set hard_cutoff_threshold too",
                path=f"{path}.consecutive_threshold",
            )
        default = "the default " if consecutive is None else ""
        raise SpecError(
            f"hard_cutoff_threshold ({hard}) must be greater than {default}"
            f"consecutive_threshold ({effective_consecutive})",
            path=f"{path}.hard_cutoff_threshold",
        )


@attrs.frozen(kw_only=True)
class ToolBudget:
    """A per-run call cap for one tool; ``0`` disables the tool."""

    max_calls: int

    def _check(self, path: str) -> None:
        check_int(self.max_calls, f"{path}.max_calls", low=0, high=TOOL_BUDGET_MAX_CALLS)


def coerce_tool_budgets(value: Any, path: str = "tool_budgets") -> dict[str, ToolBudget]:
    """Tool name → ``int`` / :class:`ToolBudget` / ``{"maxCalls": n}``, checked."""
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(
            f"must be a mapping of tool name to budget, got {type(value).__name__}", path=path
        )
    if len(value) > TOOL_BUDGETS_MAX_ENTRIES:
        raise SpecError(
            f"has {len(value)} entries; the limit is {TOOL_BUDGETS_MAX_ENTRIES}", path=path
        )
    out: dict[str, ToolBudget] = {}
    for key, budget in value.items():
        where = f"{path}[{key!r}]"
        if not isinstance(key, str) or not 1 <= len(key) <= TOOL_BUDGET_KEY_MAX:
            raise SpecError(
                f"tool names must be strings of 1-{TOOL_BUDGET_KEY_MAX} characters", path=where
            )
        if is_int(budget):
            budget = ToolBudget(max_calls=budget)
        wrong = "an int, a ToolBudget or {'maxCalls': n}"
        out[key] = _checked(ToolBudget, budget, where, wrong, SpecError)
    return out


LoopDetectionArg = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
    LoopDetection, Literal[False], Mapping[str, Any], UnsetType, None
]
"""What ``loop_detection`` accepts."""
ToolBudgetsArg = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
    Mapping[str, Union[ToolBudget, int, Mapping[str, Any]]], UnsetType, None  # noqa: UP007
]
"""What ``tool_budgets`` accepts."""
