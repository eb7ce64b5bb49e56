"""Plans: make a plan first, then watch the live plan change as the agent works.

    python examples/plans.py

Runs against MANTYX when MANTYX_API_KEY is set (with MANTYX_WORKSPACE), and
otherwise against the bundled local emulator (``mantyx_sync.testing``), whose
scripted stand-in model revises a three-step plan while it "works".
"""

from __future__ import annotations

import contextlib
import os
import sys

import mantyx_sync
from mantyx_sync.events import TaskPlan

MARKS = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]", "blocked": "[!]", "skipped": "[-]"}
TASK = "Plan and write a short release note for version 2.0"


def show(plan: TaskPlan) -> None:
    label = f"revision {plan.revision}" if plan.revision is not None else "plan"
    print(f"  {label}: {plan.brief or ''}")
    for step in plan.steps:
        print(f"    {MARKS.get(step.status, '[?]')} {step.title}")


def stand_in_model() -> list[object]:
    """A scripted stand-in for the model: a server-side tool call per step, a plan
    revision after each, then the answer."""
    from mantyx_sync.testing import PlanUpdate, ToolCall, Turn

    titles = ["Collect the changes", "Draft the note", "Proofread"]

    def revision(done: int) -> PlanUpdate:
        steps = [
            (title, "done" if i < done else "in_progress" if i == done else "pending")
            for i, title in enumerate(titles)
        ]
        return PlanUpdate(steps, brief="Release note for 2.0")

    return [
        revision(0),
        ToolCall("read_changelog", {}, server_result="plans, file inputs, fallback model"),
        revision(1),
        ToolCall("write_draft", {}, server_result="draft saved"),
        revision(2),
        ToolCall("spell_check", {}, server_result="no mistakes"),
        revision(3),
        Turn("Version 2.0 brings plans, file inputs and a fallback model."),
    ]


def main() -> int:
    with contextlib.ExitStack() as stack:
        if os.environ.get("MANTYX_API_KEY"):
            client = stack.enter_context(mantyx_sync.Client())
            print(f"Using MANTYX at {client.config.base_url} (workspace {client.config.workspace})")
            server = None
        else:
            from mantyx_sync.testing import LocalMantyx

            server = stack.enter_context(LocalMantyx())
            client = stack.enter_context(server.client())
            print(
                f"MANTYX_API_KEY is not set: using the local MANTYX emulator at {server.base_url}"
            )
            print("(a scripted stand-in model, not a real LLM)\n")

        agent = mantyx_sync.Agent(
            client, system_prompt="You are a careful technical writer.", plan="required"
        )

        print(f"> {TASK}\n\n1. A plan only (no work done, no tokens):")
        planned = agent.run_plan(TASK, steps=["Collect the changes", "Draft the note", "Proofread"])
        assert planned.plan is not None
        show(planned.plan)
        print(f"  turns: {planned.turns}")

        print("\n2. The run, printing the plan each time it changes:")
        if server is not None:
            server.queue_script(stand_in_model())
        with agent.stream(TASK) as run:
            for event in run:
                if event.type == "task_plan" and run.plan is not None:
                    show(run.plan)
        result = run.result
        assert result is not None
        print(f"\n{result.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
