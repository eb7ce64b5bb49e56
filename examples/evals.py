"""Evals: score an agent on a dataset whose cases call a tool in this process.

Runs against MANTYX when MANTYX_API_KEY is set (with MANTYX_WORKSPACE and
MANTYX_EVAL_DATASET, a dataset id), and otherwise against the bundled local
emulator (``mantyx_sync.testing``) with a small dataset and a scripted model:

    python examples/evals.py
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import mantyx_sync

FORECASTS = {"Paris": "sunny, 21 C", "Oslo": "snow, -3 C", "Lima": "cloudy, 18 C"}


@mantyx_sync.local_tool
def forecast(city: str) -> str:
    """Tomorrow's weather forecast for a city.

    Args:
        city: The city name.
    """
    return FORECASTS.get(city, "unknown city")


def scripted_model(ctx: Any) -> Any:
    """The emulator's stand-in for an LLM: look the city up, then answer."""
    from mantyx_sync.testing import ToolCall, Turn

    if ctx.turn == 0:
        return Turn(
            "Checking the forecast.", tool_calls=[ToolCall("forecast", {"city": ctx.prompt})]
        )
    return Turn(f"Tomorrow in {ctx.prompt}: {ctx.tool_results[-1].get('result')}.")


def main() -> int:
    with contextlib.ExitStack() as stack:
        if os.environ.get("MANTYX_API_KEY"):
            client = stack.enter_context(mantyx_sync.Client())
            dataset_id = os.environ["MANTYX_EVAL_DATASET"]
            print(f"Using MANTYX at {client.config.base_url} (workspace {client.config.workspace})")
        else:
            from mantyx_sync.testing import LocalMantyx

            server = stack.enter_context(LocalMantyx(model=scripted_model))
            client = stack.enter_context(server.client())
            dataset_id = server.add_eval_dataset(
                "forecasts",
                [
                    {
                        "name": city,
                        "input": {"prompt": city},
                        "scorers": [{"type": "contains", "value": FORECASTS[city]}],
                    }
                    for city in FORECASTS
                ],
            )
            print(
                f"MANTYX_API_KEY is not set: using the local MANTYX emulator at {server.base_url}"
            )
            print("(a scripted stand-in model, not a real LLM)\n")

        for dataset in client.evals.datasets():
            print(f"dataset {dataset.id}: {dataset.name!r}, {dataset.case_count} cases")

        agent = mantyx_sync.Agent(
            client, system_prompt="You forecast the weather.", tools=[forecast]
        )
        with client.evals.start(dataset=dataset_id, agent=agent) as run:
            print(f"evaluation {run.id} started")
            for event in run.iterate():
                if event.type == "case_started":
                    name, agent_run = event.data.get("caseName"), event.data.get("agentRunId")
                    print(f"  case {name}: agent run {agent_run}")
                elif event.type == "local_tool_call":
                    print(f"    -> {event.data.get('name')}({event.data.get('args')})")
                elif event.type == "case_completed":
                    print(f"    passed={event.data.get('passed')} score={event.data.get('score')}")
        detail = client.evals.get(run.id)
        print(f"\n{detail.status}: {detail.passed_cases}/{detail.total_cases} cases passed")
        for result in detail.results:
            print(f"  {result.case_id}: {result.final_text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
