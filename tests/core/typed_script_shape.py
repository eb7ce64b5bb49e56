"""A user's script of the 1.0 API shape (names, resources, per-call options),
kept as a test: ``mypy --strict`` must pass with each ``reveal_type`` exactly
as :data:`REVEALED` says (no ``Any``), and :func:`main` runs against the emulator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mantyx_sync

if not TYPE_CHECKING:

    def reveal_type(value: object) -> object:
        return value


def main(client: mantyx_sync.Client) -> list[str]:
    """Every call of the new shape once; returns what the runs said."""
    said: list[str] = []
    with mantyx_sync.Agent(client, system_prompt="You are terse.") as agent:
        reveal_type(client.runs)
        reveal_type(client.sessions)
        reveal_type(client.feedback)
        reveal_type(client.models.list())
        result = agent.run("hi", run_timeout=30.0, metadata={"team": "ops"})
        reveal_type(result)
        said.append(result.text)
        terse = agent.with_options(reasoning_level="low")
        reveal_type(terse)
        with terse.stream("hi", run_timeout=30.0, reasoning_level="high") as run:
            reveal_type(run)
            for event in run:
                said.append(event.type)
        started = agent.start("hi", plan="required")
        reveal_type(started.wait(run_timeout=30.0))
        reveal_type(client.runs.get(result.run_id))
        reveal_type(client.runs.list(max_items=5))
        reveal_type(client.feedback.create(result.run_id, "up"))
        reveal_type(client.feedback.list(max_items=5))
        with client.sessions.create(system_prompt="You are terse.") as chat:
            reveal_type(chat)
            said.append(chat.run("hi", run_timeout=30.0, metadata={"k": "v"}).text)
            reveal_type(client.sessions.get(chat.id))
            reveal_type(client.sessions.events(chat.id))
    try:
        agent.run("hi", run_timeout=0.001)
    except mantyx_sync.RunTimeoutError as exc:
        reveal_type(exc)
    except mantyx_sync.RequestTimeoutError as exc:
        reveal_type(exc)
    except mantyx_sync.APIStatusError as exc:
        reveal_type(exc.status)
    except mantyx_sync.APIConnectionError as exc:
        reveal_type(exc)
    return said


REVEALED = [
    "mantyx_sync.resources.Runs",
    "mantyx_sync.resources.Sessions",
    "mantyx_sync.resources.Feedbacks",
    "mantyx_sync.results.ModelCatalog",
    "mantyx_sync.results.RunResult[str]",
    "mantyx_sync.agent.Agent",
    "mantyx_sync.run.Run[str]",
    "mantyx_sync.results.RunResult[str]",
    "mantyx_sync.results.RunSnapshot",
    "mantyx_sync.paging.Listing[mantyx_sync.history.RunSummary]",
    "mantyx_sync.feedback.Feedback",
    "mantyx_sync.paging.Listing[mantyx_sync.feedback.Feedback]",
    "mantyx_sync.session.Session",
    "mantyx_sync.results.SessionInfo",
    "mantyx_sync.history.EventReplay",
    "mantyx_sync.errors.RunTimeoutError",
    "mantyx_sync.errors.RequestTimeoutError",
    "int",
    "mantyx_sync.errors.APIConnectionError",
]
