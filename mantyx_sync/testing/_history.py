"""Run, session and feedback lists with cursors and filters, and session event replay.

Cursors are opaque to clients: ``c<number>`` (``f<number>`` for feedback), the
number marking the last item already returned.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._validation import InvalidRequest
from .clock import iso_millis
from .runs import EmulatedRun
from .sessions import EmulatedSession

__all__ = ["FeedbackStore", "int_param", "replay_body", "run_list_body", "session_list_body"]

LIST_DEFAULT: Final = 50
LIST_MAX: Final = 200
REPLAY_DEFAULT: Final = 50
REPLAY_MAX: Final = 500
PREVIEW_CHARS: Final = 120
REPLAY_PREVIEW_CHARS: Final = 1000
"""Replayed texts longer than this are shortened unless ``full=1``."""


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _preview(text: str | None) -> str | None:
    if text is None:
        return None
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def int_param(query: Mapping[str, str], name: str, default: int) -> int:
    """The integer query parameter ``name`` (``default`` when absent or empty)."""
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidRequest(f"{name} must be an integer, got {raw!r}") from None


def _page_limit(query: Mapping[str, str]) -> int:
    """A list's ``limit``: at least 1, at most :data:`LIST_MAX`."""
    value = int_param(query, "limit", LIST_DEFAULT)
    if value < 1:
        raise InvalidRequest(f"limit must be at least 1, got {value}")
    return min(value, LIST_MAX)


def _cursor(query: Mapping[str, str], prefix: str = "c") -> int | None:
    """The number in the query's ``cursor`` (``<prefix><number>``), or ``None``."""
    raw = query.get("cursor")
    if not raw:
        return None
    if not raw.startswith(prefix) or not raw[1:].isdigit():
        raise InvalidRequest(f"cursor {raw!r} is not one this server issued")
    return int(raw[1:])


def _metadata_filters(values: Sequence[str]) -> list[tuple[str, str]]:
    filters = []
    for value in values:
        name, sep, wanted = value.partition(":")
        if not sep or not name:
            raise InvalidRequest(f"metadata filter {value!r} must be key:value")
        filters.append((name, wanted))
    return filters


def _matches(metadata: Mapping[str, Any], filters: list[tuple[str, str]]) -> bool:
    return all(str(metadata.get(name)) == wanted and name in metadata for name, wanted in filters)


def _spec_value(spec: Mapping[str, Any], key: str) -> str | None:
    value = spec.get(key)
    return value if isinstance(value, str) else None


def _run_item(run: EmulatedRun) -> dict[str, Any]:
    with run.cond:
        events = list(run.events)
        status, final_text, error = run.status, run.final_text, run.error
        tokens, turns, completed = run.tokens, run.turns, run.completed_at
    prompt = run.spec.get("prompt")
    if prompt is None:
        users = [m for m in run.spec.get("messages") or () if m.get("role") == "user"]
        prompt = _text(users[-1].get("content")) if users else None
    calls = {
        e["data"].get("toolUseId") for e in events if e["type"] in ("local_tool_call", "tool_call")
    }
    return {
        "id": run.id,
        "sessionId": run.session_id,
        "status": status,
        "specName": _spec_value(run.spec, "name"),
        "agentId": _spec_value(run.spec, "agentId"),
        "modelId": _spec_value(run.spec, "modelId"),
        "inputPreview": _preview(prompt if isinstance(prompt, str) else None),
        "outputPreview": _preview(final_text),
        "error": error,
        "tokens": tokens,
        "turns": turns,
        "durationMs": None if completed is None else round((completed - run.created_at) * 1000),
        "toolCallCount": len(calls),
        "metadata": dict(run.spec.get("metadata") or {}),
        "createdAt": iso_millis(run.created_at),
        "completedAt": iso_millis(completed),
    }


def run_list_body(
    runs: Sequence[EmulatedRun],
    query: Mapping[str, str],
    metadata: Sequence[str],
) -> dict[str, Any]:
    """``GET /agent-runs``: newest first, filtered, one page after ``cursor``.

    :raises InvalidRequest: a malformed limit, cursor or metadata filter.
    """
    limit = _page_limit(query)
    after = _cursor(query)
    filters = _metadata_filters(metadata)
    wanted = {k: query[k] for k in ("status", "modelId", "agentId") if query.get(k)}
    matching = [
        run
        for run in sorted(runs, key=lambda r: r.number, reverse=True)
        if all(
            (run.status if key == "status" else run.spec.get(key)) == value
            for key, value in wanted.items()
        )
        and _matches(run.spec.get("metadata") or {}, filters)
    ]
    start = (
        0
        if after is None
        else next((i for i, run in enumerate(matching) if run.number < after), len(matching))
    )
    page = matching[start : start + limit]
    more = start + limit < len(matching)
    return {
        "total": len(matching) if query.get("includeTotal") in ("1", "true") else None,
        "limit": limit,
        "nextCursor": f"c{page[-1].number}" if more and page else None,
        "runs": [_run_item(run) for run in page],
    }


def _session_item(session: EmulatedSession) -> dict[str, Any]:
    with session.lock:
        first_user = next((m for m in session.messages if m.get("role") == "user"), None)
        return {
            "sessionId": session.id,
            "creationDate": iso_millis(session.created_at),
            "lastInteractionDate": iso_millis(session.last_interaction_at),
            "summary": _preview(_text(first_user["content"])) if first_user else None,
            "metadata": dict(session.spec.get("metadata") or {}),
            "status": session.status,
        }


def session_list_body(
    sessions: Sequence[EmulatedSession],
    query: Mapping[str, str],
    metadata: Sequence[str],
) -> dict[str, Any]:
    """``GET /agent-sessions``: newest first, filtered, by ``cursor`` or legacy ``offset``.

    :raises InvalidRequest: a malformed limit, cursor, offset, status or filter.
    """
    limit = _page_limit(query)
    status = query.get("status")
    if status not in (None, "", "active", "ended"):
        raise InvalidRequest(f"status must be active or ended, got {status!r}")
    filters = _metadata_filters(metadata)
    # Sessions are numbered by creation order (the state keeps insertion order).
    numbered = list(enumerate(sessions, start=1))
    matching = [
        (number, session)
        for number, session in reversed(numbered)
        if (not status or session.status == status)
        and _matches(session.spec.get("metadata") or {}, filters)
    ]
    after = _cursor(query)
    if after is not None:
        start = next((i for i, (n, _) in enumerate(matching) if n < after), len(matching))
    else:
        start = int_param(query, "offset", 0)
        if start < 0:
            raise InvalidRequest("offset must not be negative")
    page = matching[start : start + limit]
    more = start + limit < len(matching)
    return {
        "total": None if query.get("includeTotal") in ("0", "false") else len(matching),
        "limit": limit,
        "offset": start,
        "nextCursor": f"c{page[-1][0]}" if more and page else None,
        "sessions": [_session_item(session) for _, session in page],
    }


def _replay_event(seq: int, message: Mapping[str, Any], full: bool) -> tuple[dict[str, Any], bool]:
    role = message.get("role")
    text = _text(message.get("content", ""))
    shortened = not full and len(text) > REPLAY_PREVIEW_CHARS
    if shortened:
        text = text[:REPLAY_PREVIEW_CHARS] + "…"
    kind = {"user": "user_message", "assistant": "assistant_message"}.get(str(role), "message")
    event: dict[str, Any] = {"seq": seq, "type": kind, "text": text}
    if kind == "message":
        event["role"] = role
    attachments = message.get("attachments")
    if isinstance(attachments, list) and attachments:
        event["attachments"] = [
            {k: a.get(k) for k in ("type", "mimeType", "filename", "url") if a.get(k) is not None}
            for a in attachments
            if isinstance(a, Mapping)
        ]
    return event, shortened


def replay_body(session: EmulatedSession, query: Mapping[str, str]) -> dict[str, Any]:
    """``GET /agent-sessions/{id}/events``: the newest ``lastMessages`` before ``beforeSeq``.

    :raises InvalidRequest: a malformed ``lastMessages`` or ``beforeSeq``.
    """
    count = int_param(query, "lastMessages", REPLAY_DEFAULT)
    if not 1 <= count <= REPLAY_MAX:
        raise InvalidRequest(f"lastMessages must be from 1 to {REPLAY_MAX}, got {count}")
    full = query.get("full") in ("1", "true")
    with session.lock:
        messages = [dict(m) for m in session.messages]
    before = int_param(query, "beforeSeq", len(messages) + 1)
    end = max(0, min(before - 1, len(messages)))
    start = max(0, end - count)
    events, truncated = [], False
    for index in range(start, end):
        event, shortened = _replay_event(index + 1, messages[index], full)
        events.append(event)
        truncated = truncated or shortened
    return {
        "sessionId": session.id,
        "total": len(messages),
        "events": events,
        "nextBeforeSeq": start + 1 if start > 0 else None,
        "truncated": truncated,
    }


EXPLANATION_MAX: Final = 8000


def _check_feedback(body: Any) -> None:
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
    """Run feedback by run id: one record per run, created (201) then replaced (200).

    Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, dict[str, Any]] = {}
        self._order: dict[str, int] = {}
        self._numbers = itertools.count(1)

    def give(self, run_id: str, body: Any) -> tuple[int, dict[str, Any]]:
        """Create (``201``) or replace (``200``) ``run_id``'s feedback.

        :raises InvalidRequest: the body breaks a rule.
        """
        _check_feedback(body)
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
        limit = _page_limit(query)
        verdict = query.get("verdict")
        if verdict not in (None, "", "UP", "DOWN"):
            raise InvalidRequest("verdict must be UP or DOWN")
        after = _cursor(query, "f")
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
