"""History: list past runs and sessions, and replay a session's conversation.

Runs against MANTYX when MANTYX_API_KEY is set (with MANTYX_WORKSPACE), and
otherwise against the bundled local emulator (``mantyx_sync.testing``), where
it first makes a few runs and a session so there is something to list:

    python examples/history.py
"""

from __future__ import annotations

import contextlib
import os
import sys

import mantyx_sync


def make_some_history(client: mantyx_sync.Client) -> None:
    """A few tagged runs and a two-message session (only on the emulator)."""
    agents = [
        mantyx_sync.Agent(client, system_prompt="You are terse.", metadata={"parity": str(p)})
        for p in (0, 1)
    ]
    for i in range(12):
        agents[i % 2].run(f"Question {i}")
    agent = agents[0]
    with agent.session(metadata={"example": "history"}) as chat:
        chat.run("My name is Ada.")
        chat.run("What is my name?")
        session_id = chat.id
    print(f"made 12 runs and session {session_id}\n")


def main() -> int:
    with contextlib.ExitStack() as stack:
        if os.environ.get("MANTYX_API_KEY"):
            client = stack.enter_context(mantyx_sync.Client())
            print(f"Using MANTYX at {client.config.base_url} (workspace {client.config.workspace})")
        else:
            from mantyx_sync.testing import LocalMantyx

            server = stack.enter_context(LocalMantyx())
            client = stack.enter_context(server.client())
            print(
                f"MANTYX_API_KEY is not set: using the local MANTYX emulator at {server.base_url}"
            )
            make_some_history(client)

        # Pages of 5, fetched one at a time as the loop needs them.
        runs = client.runs.list(metadata={"parity": "1"}, limit=5, include_total=True)
        print(f"odd runs (the server counts {runs.total}):")
        for run in runs:
            print(f"  {run.id}  {run.status:<10} {run.input_preview!r} -> {run.output_preview!r}")

        print("\nthe 3 newest runs of any kind:")
        for run in client.runs.list(max_items=3):
            tokens = run.tokens.total_tokens if run.tokens else "n/a"
            print(f"  {run.id}  {run.created_at}  tokens={tokens}")

        print("\nsessions:")
        for session in client.sessions.list(max_items=5):
            print(f"  {session.id}  {session.status:<6} {session.summary!r}")
            for event in client.sessions.events(session.id):
                print(f"    #{event.seq} {event.role}: {event.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
