"""Run controls of an agent spec: :class:`Plan`, :class:`ReasoningTrigger` and
:class:`Supervisor` (``mantyx_sync.Plan`` ...). Each coerce function accepts every
documented shorthand and checks the bounds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, TypeVar, Union

import attrs

from ._base.argcheck import checked_init
from ._models.checks import check_choice, check_int, coerce_text
from ._models.wire import camel, unstructure
from .errors import ArgumentTypeError, SpecError

__all__ = ["Plan", "ReasoningTrigger", "Supervisor"]

PLAN_MODES: Final = ("auto", "required", "off")
"""The ``mode`` values of :class:`Plan` (``True`` means ``"auto"``, ``False`` ``"off"``)."""

SUPERVISOR_INTERVAL_MAX: Final = 100
TRIGGER_CHARS_MAX: Final = 50_000
TRIGGER_MS_MAX: Final = 600_000


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True)
class ReasoningTrigger:
    """When the supervisor also looks at long reasoning.

    ``None`` keeps the server defaults (3,000 characters, 30,000 ms).

    :ivar chars: reasoning characters before a check, 1-50,000.
    :ivar ms: milliseconds of reasoning before a check, 1-600,000.
    """

    chars: int | None = None
    ms: int | None = None

    def _check(self, path: str) -> None:
        if self.chars is not None:
            check_int(self.chars, f"{path}.chars", low=1, high=TRIGGER_CHARS_MAX)
        if self.ms is not None:
            check_int(self.ms, f"{path}.ms", low=1, high=TRIGGER_MS_MAX)

    def to_wire(self) -> dict[str, Any]:
        """The ``reasoningTrigger`` object."""
        return unstructure(self)


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True)
class Supervisor:
    """A supervisor model that watches the run and may redirect or finish it.

    ``supervisor=True`` turns it on with the server's defaults; this value sets them.

    :ivar interval: check every N model turns, 1-100 (server default 5).
    :ivar model_id: the supervising model (default: the server's choice).
    :ivar reasoning_trigger: ``False`` to ignore reasoning, or a
        :class:`ReasoningTrigger`; ``None`` keeps the server default.
    """

    interval: int | None = None
    model_id: str | None = None
    reasoning_trigger: ReasoningTrigger | Literal[False] | None = None

    def _check(self, path: str) -> None:
        if self.interval is not None:
            check_int(self.interval, f"{path}.interval", low=1, high=SUPERVISOR_INTERVAL_MAX)
        coerce_text(self.model_id, f"{path}.model_id")
        trigger: Any = self.reasoning_trigger
        if isinstance(trigger, ReasoningTrigger):
            trigger._check(f"{path}.reasoning_trigger")
        elif trigger is not None and trigger is not False:
            raise SpecError(
                f"must be False or a ReasoningTrigger, got {type(trigger).__name__}",
                path=f"{path}.reasoning_trigger",
            )

    def to_wire(self) -> dict[str, Any]:
        """The ``supervisor`` object."""
        return unstructure(self)


def _steps_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise SpecError("must be a list of step titles, not a string", path="plan.steps")
    return tuple(value)


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True)
class Plan:
    """Task-plan settings.

    :ivar mode: ``"auto"`` (the model plans when useful), ``"required"`` or ``"off"``.
    :ivar brief: a one-line goal to seed the plan with.
    :ivar steps: step titles to seed the plan with.
    :ivar plan_only: only make the plan: the run ends with ``RunResult.plan``,
        zero tokens and ``turns == 0`` (use :meth:`Agent.run_plan`).
    """

    mode: str | None = None
    brief: str | None = None
    steps: tuple[str, ...] | None = attrs.field(default=None, converter=_steps_tuple)
    plan_only: bool | None = None

    def _check(self, path: str) -> None:
        if self.mode is not None:
            check_choice(self.mode, PLAN_MODES, f"{path}.mode", "'auto', 'required' or 'off'")
        coerce_text(self.brief, f"{path}.brief")
        steps: tuple[Any, ...] = self.steps or ()
        for index, step in enumerate(steps):
            if not isinstance(step, str) or not step.strip():
                raise SpecError("must be a non-empty string", path=f"{path}.steps[{index}]")
        if self.plan_only is not None and not isinstance(self.plan_only, bool):
            raise SpecError("must be True or False", path=f"{path}.plan_only")

    def to_wire(self) -> dict[str, Any]:
        """The ``plan`` object."""
        return unstructure(self)


SupervisorArg = Union[bool, Supervisor, Mapping[str, Any], None]  # noqa: UP007 - runtime alias
"""What ``supervisor`` accepts."""
PlanArg = Union[bool, str, Plan, Mapping[str, Any], None]  # noqa: UP007 - runtime alias
"""What ``plan`` accepts."""


_Control = TypeVar("_Control", ReasoningTrigger, Supervisor, Plan)


def _build(cls: type[_Control], value: Mapping[str, Any], path: str) -> _Control:
    """``cls`` from its mapping in either key style, a wrong type reported at its field's path."""
    unknown = set(value) - {key for a in attrs.fields(cls) for key in (a.name, camel(a.name))}
    if unknown:
        raise SpecError(f"unknown field(s) {sorted(unknown)}", path=path)
    fields = {a.name: value.get(camel(a.name), value.get(a.name)) for a in attrs.fields(cls)}
    trigger = fields.get("reasoning_trigger")
    if isinstance(trigger, Mapping):  # a supervisor's; only its two keys are read
        fields["reasoning_trigger"] = _build(
            ReasoningTrigger,
            {"chars": trigger.get("chars"), "ms": trigger.get("ms")},
            f"{path}.reasoning_trigger",
        )
    try:
        return cls(**fields)
    except SpecError as exc:  # an ArgumentTypeError stays one
        raise type(exc)(str(exc), path=f"{path}.{exc.path}" if exc.path else path) from None


def coerce_supervisor(value: Any, path: str = "supervisor") -> bool | Supervisor:
    """``True``/``False``, a :class:`Supervisor` or its wire mapping, checked."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Mapping):
        value = _build(Supervisor, value, path)
    if not isinstance(value, Supervisor):
        raise ArgumentTypeError(
            f"must be True, False or a Supervisor, got {type(value).__name__}", path=path
        )
    value._check(path)
    return value


def coerce_plan(value: Any, path: str = "plan") -> bool | str | Plan:
    """``True``/``"auto"``, ``"required"``, ``False``/``"off"``, a :class:`Plan` or its
    wire mapping, checked."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return check_choice(
            value, PLAN_MODES, path, "True, 'auto', 'required', False, 'off' or a Plan"
        )
    if isinstance(value, Mapping):
        value = _build(Plan, value, path)
    if not isinstance(value, Plan):
        raise ArgumentTypeError(
            f"must be True, 'auto', 'required', False or a Plan, got {type(value).__name__}",
            path=path,
        )
    value._check(path)
    return value


def control_wire(value: bool | str | Supervisor | Plan) -> Any:
    """The wire form of a coerced ``supervisor`` or ``plan`` value."""
    if isinstance(value, (Supervisor, Plan)):
        return value.to_wire()
    return value


def plan_only(
    current: bool | str | Plan | Any | None,
    *,
    steps: Iterable[str] | None = None,
    brief: str | None = None,
) -> Plan:
    """The ``plan`` of a plan-only run, keeping the mode of ``current`` when it names one."""
    mode = current.mode if isinstance(current, Plan) else current
    return Plan(
        mode=mode if isinstance(mode, str) and mode != "off" else None,
        brief=brief if brief is not None else getattr(current, "brief", None),
        steps=tuple(steps) if steps is not None else getattr(current, "steps", None),
        plan_only=True,
    )
