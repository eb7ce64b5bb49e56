"""Run feedback: one record per run, created (201) then replaced (200).

``GET /reply-feedback`` lists the records newest first, filtered by
``agentRunId`` and ``verdict``, paged with an opaque ``cursor`` (the body is
``{feedback, limit, nextCursor}``).
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any, Final

from ._clock import iso_millis
from ._history import cursor, page_limit
from ._validation import InvalidRequest

__all__ = ["FeedbackStore"]

EXPLANATION_MAX: Final = 8000


def _validate(body: Any) -> None:
    if not isinstance(body, dict):
        raise InvalidRequest("the body must be a JSON object")
    unknown = set(body) - {"verdict", "explanation", "contentSnapshot"}
    if unknown:
        raise InvalidRequest(f"unknown field(s): {', '.join(sorted(unknown))}")
    if body.get("verdict") not in ("UP", "DOWN"):
        raise InvalidRequest("verdict must be UP or DOWN")
    explanation = body.get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        raise InvalidRequest("explanation must be a string")
    if isinstance(explanation, str) and len(explanation) > EXPLANATION_MAX:
        raise InvalidRequest(f"explanation is longer than {EXPLANATION_MAX} characters")


class FeedbackStore:
    """Feedback by run id. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, dict[str, Any]] = {}
        self._order: dict[str, int] = {}
        self._numbers = itertools.count(1)

    def give(self, run_id: str, body: Any) -> tuple[int, dict[str, Any]]:
        """Create (``201``) or replace (``200``) ``run_id``'s feedback.

        :raises InvalidRequest: the body breaks a rule.
        """
        _validate(body)
        now = time.time()
        with self._lock:
            existing = self._records.get(run_id)
            record: dict[str, Any] = {
                "id": existing["id"] if existing else f"fb_{secrets.token_hex(5)}",
                "verdict": body["verdict"],
                "targetKind": "agent_run",
                "agentRunId": run_id,
                "explanation": body.get("explanation"),
                "contentSnapshot": body.get("contentSnapshot"),
                "createdAt": existing["createdAt"] if existing else iso_millis(now),
                "updatedAt": iso_millis(now),
            }
            self._records[run_id] = record
            if existing is None:
                self._order[run_id] = next(self._numbers)
            return (200 if existing else 201), dict(record)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every record by run id (copies)."""
        with self._lock:
            return {run_id: dict(record) for run_id, record in self._records.items()}

    def list_body(self, query: Mapping[str, str]) -> dict[str, Any]:
        """``GET /reply-feedback``.

        :raises InvalidRequest: a malformed limit, cursor or verdict.
        """
        limit = page_limit(query)
        verdict = query.get("verdict")
        if verdict not in (None, "", "UP", "DOWN"):
            raise InvalidRequest("verdict must be UP or DOWN")
        after = cursor(query, "f")
        run_id = query.get("agentRunId")
        with self._lock:
            ordered = sorted(self._records, key=lambda r: self._order[r], reverse=True)
            matching = [
                (self._order[r], dict(self._records[r]))
                for r in ordered
                if (not run_id or r == run_id)
                and (not verdict or self._records[r]["verdict"] == verdict)
                and (after is None or self._order[r] < after)
            ]
        page = matching[:limit]
        return {
            "feedback": [record for _, record in page],
            "limit": limit,
            "nextCursor": f"f{page[-1][0]}" if len(matching) > limit else None,
        }
