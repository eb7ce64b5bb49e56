"""Ids the user passes become exactly one URL path segment.

An empty id would address the collection (``GET /agent-runs/`` lists runs), and
``/``, ``?`` or ``#`` in one would address another resource: the first is a
``SpecError`` before anything is sent, the others are percent-encoded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import responses
from core_support import BASE, KEY, ROOT

from mantyx_sync import Client, SpecError


@pytest.fixture
def client() -> Iterator[Client]:
    c = Client(KEY, workspace="acme", base_url=BASE, request_timeout=5.0, max_retries=0)
    yield c
    c.close()


CALLS: dict[str, Callable[[Client, str], Any]] = {
    "get_run": lambda c, i: c.runs.get(i),
    "cancel": lambda c, i: c.runs.cancel(i),
    "get_session": lambda c, i: c.sessions.get(i),
    "end_session": lambda c, i: c.sessions.end(i),
    "feedback": lambda c, i: c.feedback.create(i, verdict="up"),
    "session_events": lambda c, i: list(c.sessions.events(i)),
    "evals.get": lambda c, i: c.evals.get(i),
    "evals.cancel": lambda c, i: c.evals.cancel(i),
    "evals.dataset": lambda c, i: c.evals.dataset(i),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_empty_id_is_refused_before_anything_is_sent(client: Client, name: str) -> None:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        with pytest.raises(SpecError, match="non-empty"):
            CALLS[name](client, "")
        assert len(mock.calls) == 0


@pytest.mark.parametrize(
    ("call", "method", "path"),
    [
        ("get_run", "GET", "/agent-runs/a%2Fb%3Fc%23d"),
        ("cancel", "POST", "/agent-runs/a%2Fb%3Fc%23d/cancel"),
        ("get_session", "GET", "/agent-sessions/a%2Fb%3Fc%23d"),
        ("end_session", "DELETE", "/agent-sessions/a%2Fb%3Fc%23d"),
        ("evals.dataset", "GET", "/eval-datasets/a%2Fb%3Fc%23d"),
    ],
)
def test_an_id_is_one_path_segment(client: Client, call: str, method: str, path: str) -> None:
    with responses.RequestsMock() as mock:
        body = {"id": "a/b?c#d", "status": "running", "cases": []}
        mock.add(method, f"{ROOT}{path}", json=body)
        CALLS[call](client, "a/b?c#d")
        assert mock.calls[0].request.url == f"{ROOT}{path}"
