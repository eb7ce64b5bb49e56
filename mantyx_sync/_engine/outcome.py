"""A run's outcome as the error it ends with (``None`` for a success), and what a
handle following a run or an evaluation to that end reports on the way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .._base.types import Closing
from ..errors import RunCancelledError, RunError
from ..events import ErrorPayload, RunOutcome
from ..results import RunResult

if TYPE_CHECKING:
    from ..events import AnyRunEvent

__all__ = ["Followed", "failure_of"]


class Followed(Closing):
    """An iterator over a stream's events up to its terminal one (a run, an evaluation)."""

    _events: list[AnyRunEvent]
    _done: bool

    @property
    def events(self) -> tuple[AnyRunEvent, ...]:
        """Every event received so far, in order."""
        return tuple(self._events)

    @property
    def done(self) -> bool:
        """Whether the terminal event has arrived."""
        return self._done

    def __iter__(self) -> Iterator[AnyRunEvent]:
        return self

    def __next__(self) -> AnyRunEvent:
        raise NotImplementedError


def failure_of(outcome: RunOutcome, result: RunResult, run_id: str) -> RunError | None:
    """The error a run that ended with ``outcome`` raises, ``result`` riding on it."""
    message = outcome.message or outcome.status
    if outcome.status == "succeeded":
        return None
    if outcome.status == "cancelled":
        return RunCancelledError(message, run_id=run_id, code=outcome.code, result=result)
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
