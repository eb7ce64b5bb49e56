"""A run's outcome as the error it ends with: ``None`` for a success."""

from __future__ import annotations

from .._models.terminal import ErrorPayload, RunOutcome
from ..errors import RunCancelled, RunError
from ..results import RunResult

__all__ = ["failure_of"]


def failure_of(outcome: RunOutcome, result: RunResult, run_id: str) -> RunError | None:
    """The error a run that ended with ``outcome`` raises; ``None`` for a success.

    ``result`` (what the run gathered) rides on the error.
    """
    message = outcome.message or outcome.status
    if outcome.status == "succeeded":
        return None
    if outcome.status == "cancelled":
        return RunCancelled(message, run_id=run_id, code=outcome.code, result=result)
    error = outcome.payload if isinstance(outcome.payload, ErrorPayload) else ErrorPayload()
    return RunError(
        message,
        run_id=run_id,
        code=outcome.code,
        error_class=error.error_class,
        finish_reason=error.finish_reason,
        partial_text=error.partial_text,
        retryable=error.retryable,
        result=result,
        api_status=error.api_status,
        api_code=error.api_code,
        structured_output=result.structured_output,
    )
