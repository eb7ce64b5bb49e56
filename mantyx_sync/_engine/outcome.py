"""A run's terminal event read as an outcome: success, or the error that says why not.

The outcome comes from the event type and the raw fields, never from whether
the typed payload could be built: one odd field (a non-string reason, a
string ``"retryable"``) must not turn a failure into a success.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import RunCancelled, RunError
from ..events import RunEvent
from ..results import RunResult

__all__ = ["failure_of"]


def _text_field(data: Mapping[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` holding usable text (non-text values are rendered)."""
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
        if value is not None and not isinstance(value, (bool, int, float, str)):
            return json.dumps(value, ensure_ascii=False, default=str)
    return None


def _result_succeeded(data: Mapping[str, Any]) -> bool:
    """Success is ``subtype == "success"``, or ``ok`` true with no subtype."""
    subtype = data.get("subtype")
    if subtype is not None:
        return bool(subtype == "success")
    return data.get("ok") is True


def failure_of(event: RunEvent, result: RunResult, run_id: str) -> RunError | None:
    """The error a terminal ``event`` ends its run with; ``None`` for a success.

    ``result`` (what the run gathered) rides on the error.
    """
    data = event.data
    if event.type == "cancelled":
        reason = _text_field(data, "reason")
        return RunCancelled(
            f"cancelled ({reason})" if reason else "cancelled",
            run_id=run_id,
            code="cancelled",
            result=result,
        )
    if event.type == "error":
        payload = event.payload
        retryable = data.get("retryable")
        return RunError(
            _text_field(data, "error", "message") or "the run failed",
            run_id=run_id,
            code=_text_field(data, "code", "errorClass"),
            error_class=_text_field(data, "errorClass"),
            finish_reason=_text_field(data, "finishReason"),
            partial_text=_text_field(data, "partialText"),
            retryable=retryable if isinstance(retryable, bool) else None,
            result=result,
            api_status=getattr(payload, "api_status", None),
            api_code=getattr(payload, "api_code", None),
            structured_output=result.structured_output,
        )
    if _result_succeeded(data):
        return None
    subtype = _text_field(data, "subtype")
    ended = f"the run ended with {subtype or 'no success flag'}"
    return RunError(
        _text_field(data, "error", "message") or ended,
        run_id=run_id,
        code=subtype,
        result=result,
        structured_output=result.structured_output,
    )
