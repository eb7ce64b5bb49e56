"""How the emulator serves the newer run controls: plan-only runs, and playing
the steps of :mod:`.steps` (their validation is :mod:`._validation`'s)."""

from __future__ import annotations

from typing import Any, Final

from .steps import Overload, PlanUpdate, Supervise, ToolFiles

__all__ = [
    "CONTROL_STEPS",
    "plan_only_result",
    "play_control",
    "structured_output_info",
]

CONTROL_STEPS: Final = (PlanUpdate, Supervise, Overload, ToolFiles)
STEP_STATUSES: Final = frozenset({"pending", "in_progress", "done", "blocked", "skipped"})
FALLBACK_ERROR_CLASSES: Final = frozenset(
    {"overloaded", "server", "server_error", "unreachable", "upstream_timeout", "upstream_deadline"}
)
"""The failures a ``fallbackModelId`` covers (overload, server errors, an
unreachable or timed-out upstream); any other (``rate_limit``, ``auth``, ...) fails the run."""


def plan_only_result(spec: dict[str, Any], prompt: str) -> dict[str, Any] | None:
    """The terminal ``result`` data of a plan-only run, or ``None`` for a normal run."""
    plan = spec.get("plan")
    if not isinstance(plan, dict) or plan.get("planOnly") is not True:
        return None
    titles = plan.get("steps") or [
        f"Understand the request: {prompt[:60]}",
        "Do the work",
        "Check the result",
    ]
    steps = [
        {"id": f"s{i + 1}", "title": title, "status": "pending"} for i, title in enumerate(titles)
    ]
    brief = plan.get("brief") or prompt[:200]
    return {
        "subtype": "success",
        "text": "",
        "plan": {"brief": brief, "steps": steps},
        "turns": 0,
        "tokens": {"inputTokens": 0, "cachedTokens": 0, "reasoningTokens": 0, "outputTokens": 0},
    }


def structured_output_info(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The ``structuredOutput`` of a terminal event (the emulator enforces natively)."""
    if not isinstance(spec.get("outputSchema"), dict):
        return None
    return {
        "schemaRequested": True,
        "schemaEnforced": True,
        "enforcementMechanism": "native_schema",
        "unconstrainedFallbackOccurred": False,
    }


def _plan_steps(steps: tuple[Any, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, step in enumerate(steps):
        if isinstance(step, dict):
            out.append({"id": step.get("id", f"s{i + 1}"), **step})
        elif isinstance(step, tuple):
            title, status = step
            out.append({"id": f"s{i + 1}", "title": title, "status": status})
        else:
            out.append({"id": f"s{i + 1}", "title": str(step), "status": "pending"})
    for step in out:
        if step.get("status") not in STEP_STATUSES:
            raise ValueError(
                f"plan step status {step.get('status')!r} is not one of {STEP_STATUSES}"
            )
    return out


def play_control(run: Any, step: Any, revisions: dict[str, int]) -> bool:
    """Play one control step on ``run`` (an ``EmulatedRun``); ``True`` when it ended the run.

    :param revisions: the run's last revision per plan id (updated).
    """
    if isinstance(step, Overload):
        covered = step.error_class in FALLBACK_ERROR_CLASSES
        return bool(run.overload(step.error_class, covered=covered))
    if isinstance(step, PlanUpdate):
        revision = (
            step.revision if step.revision is not None else revisions.get(step.plan_id, 0) + 1
        )
        revisions[step.plan_id] = max(revision, revisions.get(step.plan_id, 0))
        steps = _plan_steps(step.steps)
        plan = run.spec.get("plan")
        mode = plan.get("mode", "auto") if isinstance(plan, dict) else plan
        run.emit_event(
            "task_plan",
            {
                "v": 2,
                "planId": step.plan_id,
                "revision": revision,
                "mode": mode if isinstance(mode, str) else "auto",
                "source": "model",
                "transition": step.transition or {"kind": "revised"},
                "transitionIndex": revision - 1,
                "transitionCount": revision,
                "brief": step.brief,
                "steps": steps,
                "plan": {"brief": step.brief, "steps": steps},
            },
        )
    elif isinstance(step, Supervise):
        data = {"action": step.action, "reason": step.reason, "llmCalls": 1, "phase": step.phase}
        data["model"] = run.model_id
        if step.redirect is not None:
            data["redirect"] = step.redirect
        run.emit_event("supervisor", data)
    else:
        run.emit_event("tool_files", {"name": step.name, "files": [dict(f) for f in step.files]})
    return False
