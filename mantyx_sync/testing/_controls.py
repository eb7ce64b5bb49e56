"""How the emulator serves the newer run controls: their validation (independent
of the SDK's), plan-only runs, and playing the steps of :mod:`._steps`."""

from __future__ import annotations

from typing import Any, Final

from ._catalog import resolve_model
from ._steps import Overload, PlanUpdate, Supervise, ToolFiles

__all__ = [
    "CONTROL_STEPS",
    "check_controls",
    "int_in",
    "plan_only_result",
    "play_control",
    "structured_output_info",
]

CONTROL_STEPS: Final = (PlanUpdate, Supervise, Overload, ToolFiles)
PLAN_WORDS: Final = ("auto", "required", "off")
STEP_STATUSES: Final = frozenset({"pending", "in_progress", "done", "blocked", "skipped"})
FALLBACK_ERROR_CLASSES: Final = frozenset(
    {"overloaded", "server", "server_error", "unreachable", "upstream_timeout", "upstream_deadline"}
)
"""The failures a ``fallbackModelId`` covers (overload, server errors, an
unreachable or timed-out upstream); any other (``rate_limit``, ``auth``, ...) fails the run."""


def int_in(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def check_controls(body: dict[str, Any], fail: Any) -> None:
    """Check the newest spec fields of a run, session or message body.

    :param fail: the exception class to raise (the caller's 400 error).
    """
    if "fallbackModelId" in body:
        fallback = body["fallbackModelId"]
        if not isinstance(fallback, str) or not fallback:
            raise fail("fallbackModelId: must be a non-empty string")
        if fallback == body.get("modelId"):
            raise fail("fallbackModelId: must differ from modelId")
        resolve_model(fallback)
    if "supervisor" in body:
        _check_supervisor(body["supervisor"], fail)
    if "plan" in body:
        _check_plan(body["plan"], fail)
    schema = body.get("outputSchema")
    if isinstance(schema, dict) and schema.get("enforcement", "best_effort") not in (
        "best_effort",
        "strict",
    ):
        raise fail("outputSchema.enforcement: must be best_effort or strict")
    for i, ref in enumerate(body.get("tools") or ()):
        for flag in ("readOnly", "retain"):
            if isinstance(ref, dict) and flag in ref and not isinstance(ref[flag], bool):
                raise fail(f"tools[{i}].{flag}: must be a boolean")


def _check_supervisor(value: Any, fail: Any) -> None:
    if isinstance(value, bool):
        return
    if not isinstance(value, dict):
        raise fail("supervisor: must be a boolean or an object")
    if "interval" in value and not int_in(value["interval"], 1, 100):
        raise fail("supervisor.interval: integer 1-100")
    if "modelId" in value:
        if not isinstance(value["modelId"], str) or not value["modelId"]:
            raise fail("supervisor.modelId: must be a non-empty string")
        resolve_model(value["modelId"])
    trigger = value.get("reasoningTrigger")
    if trigger is None or trigger is False:
        return
    if not isinstance(trigger, dict):
        raise fail("supervisor.reasoningTrigger: must be false or an object")
    if "chars" in trigger and not int_in(trigger["chars"], 1, 50_000):
        raise fail("supervisor.reasoningTrigger.chars: integer up to 50000")
    if "ms" in trigger and not int_in(trigger["ms"], 1, 600_000):
        raise fail("supervisor.reasoningTrigger.ms: integer up to 600000")


def _check_plan(value: Any, fail: Any) -> None:
    if isinstance(value, bool) or value in PLAN_WORDS:
        return
    if not isinstance(value, dict):
        raise fail("plan: must be true, false, auto, required, off or an object")
    if "mode" in value and value["mode"] not in PLAN_WORDS:
        raise fail("plan.mode: must be auto, required or off")
    if "brief" in value and not isinstance(value["brief"], str):
        raise fail("plan.brief: must be a string")
    steps = value.get("steps", [])
    if not isinstance(steps, list) or not all(isinstance(s, str) and s for s in steps):
        raise fail("plan.steps: must be an array of non-empty strings")
    if "planOnly" in value and not isinstance(value["planOnly"], bool):
        raise fail("plan.planOnly: must be a boolean")


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
