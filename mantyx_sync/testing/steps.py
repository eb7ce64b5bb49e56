"""Script steps for the newer events: plans, supervisor verdicts, model
overload (and fallback), and server-tool files.

Like the other steps they are immutable values; :mod:`._controls` plays them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from .._base.argcheck import checked_init

__all__ = ["Overload", "PlanUpdate", "Supervise", "ToolFiles"]


def _steps(value: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(value)


def _files(value: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    return tuple(value)


@checked_init(TypeError)
@attrs.frozen
class PlanUpdate:
    """Log a ``task_plan`` (v2) revision.

    :param steps: ``(title, status)`` pairs, titles (status ``pending``) or
        ``{id, title, status}`` dicts.
    :param brief: the plan's goal.
    :param plan_id: the plan (default ``plan_1``).
    :param revision: default: one more than this plan's last revision in the run.
    :param transition: ``{kind, stepId}``; default ``{"kind": "revised"}``.
    """

    steps: tuple[Any, ...] = attrs.field(converter=_steps)
    brief: str | None = attrs.field(default=None, kw_only=True)
    plan_id: str = attrs.field(default="plan_1", kw_only=True)
    revision: int | None = attrs.field(default=None, kw_only=True)
    transition: dict[str, Any] | None = attrs.field(default=None, kw_only=True)


@checked_init(TypeError)
@attrs.frozen
class Supervise:
    """Log a ``supervisor`` verdict (observability only; the run goes on)."""

    action: str = "on_track"
    reason: str = "The agent is progressing."
    redirect: str | None = attrs.field(default=None, kw_only=True)
    phase: str = attrs.field(default="turn_boundary", kw_only=True)


@checked_init(TypeError)
@attrs.frozen
class Overload:
    """The serving model fails after the server's retries (``errorClass``, default
    ``overloaded``).

    With a ``fallbackModelId`` (and the run not yet switched) the run logs
    ``model_fallback`` and goes on with the fallback model — in a session, every
    later run too — when the class is one a fallback covers (``overloaded``,
    ``server``/``server_error``, ``unreachable``, ``upstream_timeout``,
    ``upstream_deadline``). Otherwise the run ends with an ``error`` of that class.
    """

    error_class: str = "overloaded"


@checked_init(TypeError)
@attrs.frozen
class ToolFiles:
    """Log a ``tool_files`` event for a server-resolved tool ``name``.

    :param files: ``{filename, mimeType, sizeBytes, url?, storageKey?}`` dicts.
    """

    name: str
    files: tuple[dict[str, Any], ...] = attrs.field(converter=_files)
