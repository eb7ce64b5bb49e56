"""Feedback on runs: a thumbs up or down, with an optional explanation.

A run has one feedback, created (``201``) or replaced (``200``), so sending it
again is safe and it is retried like any idempotent request. This module knows
no HTTP: the client (or a :class:`~mantyx_sync.RunResult`) hands it a
``post(run_id, body) -> (status, body)`` callable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from ._models import wire as _wire
from ._models.checks import check_text
from ._models.wire import OMIT, RAW
from .errors import SpecError

__all__ = ["Feedback"]

EXPLANATION_MAX_CHARS: Final = 8000
"""The longest ``explanation`` the server accepts."""

Poster = Callable[[str, Mapping[str, Any]], "tuple[int, Any]"]
"""``post(run_id, json_body) -> (status, body)``: the run's feedback route."""

_VERDICTS: Final = {"up": "UP", "down": "DOWN"}


def _verdict_out(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) else None


@attrs.frozen(kw_only=True)
class Feedback:
    """One run's feedback as the server stored it.

    :ivar verdict: ``"up"`` or ``"down"`` (``UP``/``DOWN`` on the wire).
    :ivar agent_run_id: the run it is about.
    :ivar target_kind: ``"agent_run"``.
    :ivar created: ``True`` when this call created it (``201``), ``False`` when
        it replaced earlier feedback (``200``); ``None`` for listed items.
    :ivar raw: the body as sent.
    """

    id: str | None = None
    verdict: str | None = attrs.field(default=None, converter=_verdict_out)
    agent_run_id: str | None = None
    target_kind: str | None = None
    explanation: str | None = None
    content_snapshot: Any = None
    created_at: str | None = None
    updated_at: str | None = None
    created: bool | None = attrs.field(default=None, metadata={OMIT: True})
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False, eq=False)

    @classmethod
    def from_wire(cls, body: Mapping[str, Any], *, created: bool | None = None) -> Feedback:
        """Build the value from a reply or list item.

        :raises WireFormatError: (a ``ValueError``) the body is not feedback.
        """
        value = _wire.structure(body, cls)
        return value if created is None else attrs.evolve(value, created=created)


def wire_verdict(verdict: Any) -> str:
    wire = _VERDICTS.get(verdict.lower()) if isinstance(verdict, str) else None
    if wire is None:
        raise SpecError(f"must be 'up' or 'down', got {verdict!r}", path="verdict")
    return wire


def send_feedback(
    post: Poster,
    run_id: str,
    verdict: str,
    *,
    explanation: str | None = None,
    content_snapshot: Any = None,
) -> Feedback:
    """Create or replace ``run_id``'s feedback (see :meth:`Feedbacks.create`).

    :param verdict: ``"up"`` or ``"down"`` (any case).
    :param explanation: at most 8000 characters.
    :param content_snapshot: what was judged (e.g. the reply text), sent as given;
        it must be JSON-serialisable.
    :raises SpecError: bad arguments (nothing is sent).
    """
    check_text(run_id, "run_id")
    body: dict[str, Any] = {"verdict": wire_verdict(verdict)}
    if explanation is not None:
        if not isinstance(explanation, str):
            raise SpecError(
                f"must be a string, got {type(explanation).__name__}", path="explanation"
            )
        if len(explanation) > EXPLANATION_MAX_CHARS:
            raise SpecError(
                f"is {len(explanation)} characters; the limit is {EXPLANATION_MAX_CHARS}",
                path="explanation",
            )
        body["explanation"] = explanation
    if content_snapshot is not None:
        try:
            json.dumps(content_snapshot, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise SpecError(
                f"must be JSON-serialisable, and is not ({exc})", path="content_snapshot"
            ) from exc
        body["contentSnapshot"] = content_snapshot
    status, reply = post(run_id, body)
    return Feedback.from_wire(reply if isinstance(reply, Mapping) else {}, created=status == 201)
