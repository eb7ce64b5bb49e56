"""Prefork recipe (Celery's prefork pool, gunicorn, multiprocessing): agents in forked workers.

    python examples/recipes/prefork_worker.py ["prompt" ...]

The ``Client`` and the ``Agent`` are created once, at import, in the parent
process; workers are forked from it and each runs agents whose local tool is
answered inside that worker. The SDK is fork-safe: a forked child builds its
own connection pool on first use instead of sharing the parent's sockets, so
nothing here needs a "post-fork" hook.

With Celery the module looks the same; the task calls :func:`run_task`::

    from celery import Celery
    app = Celery("recipes", broker="redis://localhost:6379/0")

    @app.task
    def stock_report(prompt: str) -> dict:
        return run_task(prompt)

Return plain data from a task (Celery and multiprocessing pickle it), and
turn errors into data too: the SDK's exceptions carry a run's events, which do
not belong in a result backend. Fork needs Linux (or macOS with care).

Without MANTYX_API_KEY a local MANTYX emulator is started in the parent; the
forked workers reach it over HTTP like any other server.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import re
import sys
from typing import Any

import mantyx_sync

# Stock levels the tool reads (a stand-in for your database).
STOCK = {"A-1": 12, "A-2": 0, "A-3": 7, "B-1": 3}


@mantyx_sync.local_tool(read_only=True)
def stock_level(sku: str) -> dict[str, Any]:
    """How many units of a product are in stock.

    Args:
        sku: The product's stock-keeping unit, e.g. "A-1".
    """
    # worker_pid shows which process answered: the worker running the agent.
    return {"sku": sku, "units": STOCK.get(sku, 0), "worker_pid": os.getpid()}


def _connect() -> mantyx_sync.Client:
    if os.environ.get("MANTYX_API_KEY"):
        return mantyx_sync.Client()  # MANTYX_API_KEY, MANTYX_WORKSPACE, MANTYX_BASE_URL
    from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

    def stand_in_model(ctx: Any) -> Any:
        # Turn 0: look the SKU up with the tool; turn 1: answer from its result.
        if ctx.turn == 0:
            match = re.search(r"[A-Z]-\d+", ctx.prompt)
            return ToolCall("stock_level", {"sku": match.group(0) if match else "A-1"})
        stock = ctx.tool_results[0]["result"]
        return Turn(f"Stock check: {stock}")

    server = LocalMantyx(model=stand_in_model).start()
    atexit.register(server.stop)
    print(f"(local MANTYX emulator at {server.base_url}; a stand-in model)", file=sys.stderr)
    client: mantyx_sync.Client = server.client()
    return client


# Created at import, before any fork: what a Celery worker module does.
client = _connect()
agent = mantyx_sync.Agent(
    client,
    system_prompt="You answer stock questions. Use stock_level for every product asked about.",
    tools=[stock_level],
)


def run_task(prompt: str) -> dict[str, Any]:
    """One unit of work in a worker: run the agent, return plain data."""
    outcome: dict[str, Any] = {"prompt": prompt, "worker_pid": os.getpid()}
    try:
        result = agent.run(prompt)  # Ctrl-C in the middle cancels the run on the server
    except mantyx_sync.MantyxError as exc:  # RunError (it has run_id), auth, transport...
        return {**outcome, "run_id": getattr(exc, "run_id", None), "error": str(exc)}
    return {**outcome, "run_id": result.run_id, "text": result.text}


def main(argv: list[str]) -> int:
    prompts = argv or [f"How many units of {sku} are in stock?" for sku in STOCK]
    client.models.list()  # the parent may well use the client before forking; that is fine
    pool = multiprocessing.get_context("fork").Pool(processes=3)
    failed = 0
    try:
        for outcome in pool.imap(run_task, prompts):
            label = f"[worker {outcome['worker_pid']}] {outcome['prompt']}"
            if "error" in outcome:
                failed += 1
                print(f"{label}\n  FAILED: {outcome['error']}")
            else:
                print(f"{label}\n  {outcome['text']}")
        pool.close()  # no more work: the workers exit once idle
    except BaseException:
        # Ctrl-C reached the workers too (same process group): each one's
        # agent.run cancelled its run on the way out. Now stop them.
        pool.terminate()
        raise
    finally:
        pool.join()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
