"""Sessions and server-wide run settings as the emulator keeps them."""

from __future__ import annotations

import threading
import time
from typing import Any

import attrs

from .clock import iso_seconds

__all__ = ["EmulatedSession"]


@attrs.frozen(kw_only=True)
class RunOptions:
    """The server-wide settings a run needs (``LocalMantyx``'s arguments of those names)."""

    tool_timeout: float
    result_shape: str
    usage: bool
    started_event: bool


class EmulatedSession:
    """A session as the emulator stores it.

    Thread-safety: attributes are read freely; changes happen under :attr:`lock`.

    :ivar id: the ``sessionId``.
    :ivar spec: the spec the session was created with.
    :ivar status: ``"active"`` or ``"ended"``.
    :ivar messages: the history, as ``{role, content}`` dicts.
    """

    def __init__(self, session_id: str, spec: dict[str, Any]) -> None:
        self.id = session_id
        self.spec = spec
        self.status = "active"
        self.messages: list[dict[str, Any]] = []
        self.created_at: float = time.time()
        self.last_interaction_at: float = self.created_at
        # Set once a run of the session fell back: later runs use that model.
        self.active_model_id: str | None = None
        # Results of retain tools, replayed to the model on later runs.
        self.retained: list[dict[str, Any]] = []
        self.lock: threading.Lock = threading.Lock()

    def snapshot(self) -> dict[str, Any]:
        """The ``GET /agent-sessions/{id}`` body."""
        with self.lock:
            return {
                "sessionId": self.id,
                "status": self.status,
                "spec": {**self.spec, "activeModelId": self.active_model_id}
                if self.active_model_id
                else self.spec,
                "metadata": self.spec.get("metadata") or {},
                "messages": [dict(m) for m in self.messages],
                "createdAt": iso_seconds(self.created_at),
                "lastInteractionAt": iso_seconds(self.last_interaction_at),
            }
