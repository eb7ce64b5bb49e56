"""Past runs and sessions: typed list items, session replay, the metadata filter.

:class:`Listing` (from :mod:`.paging`) and :class:`EventReplay` are
handed a ``get(params) -> body`` callable for their route by the client, so
this module knows no HTTP. Values are immutable and thread-safe; a
:class:`Listing` or :class:`EventReplay` is iterated by one thread.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from typing import Any, Final

import attrs

from ._base.handout import handed_out
from ._base.limits import METADATA_KEY_RE
from ._models import wire as _wire
from ._models.wire import ALIASES, RAW, FromWire, WireFormatError
from .errors import SpecError
from .events import TokenUsage
from .messages import Message
from .paging import (
    Getter,
    Listing,
    check_positive,
    int_or_none,
    page_of,
)

__all__ = ["EventReplay", "Listing", "RunSummary", "SessionEvent", "SessionSummary"]

REPLAY_PAGE_MAX: Final = 500
"""The most events one ``GET /agent-sessions/{id}/events`` page returns (``lastMessages``)."""


@attrs.frozen(kw_only=True)
class RunSummary(FromWire):
    """One run as ``GET /agent-runs`` lists it (compact; previews, not full texts).

    :ivar status: ``queued``, ``running``, ``succeeded``, ``failed`` or ``cancelled``.
    :ivar spec_name: the ``name`` the run's spec was given, if any.
    :ivar input_preview: the start of the prompt.
    :ivar output_preview: the start of the reply (``None`` until it ends).
    :ivar tokens: usage, ``None`` until the run ends.
    :ivar created_at: ISO-8601 timestamp, as sent.
    :ivar raw: the item as sent (unknown fields included).
    """

    id: str = attrs.field(metadata={ALIASES: ("runId",)})
    session_id: str | None = None
    status: str | None = None
    spec_name: str | None = None
    agent_id: str | None = None
    model_id: str | None = None
    input_preview: str | None = None
    output_preview: str | None = None
    error: Any = None
    tokens: TokenUsage | None = None
    turns: int | None = None
    duration_ms: float | None = None
    tool_call_count: int | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    created_at: str | None = None
    completed_at: str | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False, eq=False)


@attrs.frozen(kw_only=True)
class SessionSummary(FromWire):
    """One session as ``GET /agent-sessions`` lists it.

    :ivar status: ``active`` or ``ended``.
    :ivar summary: a short description of the conversation, when the server has one.
    :ivar created_at: ISO-8601 timestamp, as sent (named as on :class:`RunSummary`).
    :ivar last_interaction_at: ISO-8601 timestamp of the latest message, as sent.
    :ivar raw: the item as sent.
    """

    id: str = attrs.field(metadata={_wire.WIRE: "sessionId", ALIASES: ("id",)})
    status: str | None = None
    summary: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    created_at: str | None = attrs.field(
        default=None, metadata={_wire.WIRE: "creationDate", ALIASES: ("createdAt",)}
    )
    last_interaction_at: str | None = attrs.field(
        default=None,
        metadata={_wire.WIRE: "lastInteractionDate", ALIASES: ("lastInteractionAt",)},
    )
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False, eq=False)

    @property
    def creation_date(self) -> str | None:
        """Deprecated: :attr:`created_at`, the name every summary uses."""
        return _renamed(self.created_at, "creation_date", "created_at")

    @property
    def last_interaction_date(self) -> str | None:
        """Deprecated: :attr:`last_interaction_at`."""
        return _renamed(self.last_interaction_at, "last_interaction_date", "last_interaction_at")


def _renamed(value: str | None, old: str, new: str) -> str | None:
    warnings.warn(
        f"SessionSummary.{old} is deprecated: use .{new}", DeprecationWarning, stacklevel=3
    )
    return value


_ROLE_OF_TYPE: Final = {"user_message": "user", "assistant_message": "assistant"}


@attrs.frozen(kw_only=True)
class SessionEvent(FromWire):
    """One entry of a session's replay: a user or assistant message, or another message.

    :ivar seq: its position in the session (increasing).
    :ivar type: ``user_message``, ``assistant_message`` or ``message`` (others
        pass through as sent).
    :ivar text: the message text (shortened by the server unless ``full=True``).
    :ivar attachments: attachment metadata (never the file contents).
    :ivar raw: the event as sent.
    """

    seq: int
    type: str
    text: str | None = None
    attachments: tuple[dict[str, Any], ...] = ()
    raw: dict[str, Any] = attrs.field(factory=dict, metadata={RAW: True}, repr=False, eq=False)

    @property
    def role(self) -> str | None:
        """``user``/``assistant`` for those types, else the ``role`` the server sent."""
        role = _ROLE_OF_TYPE.get(self.type) or self.raw.get("role")
        return role if isinstance(role, str) else None

    @property
    def message(self) -> Message | None:
        """This entry as a :class:`~mantyx_sync.Message`, the value
        :meth:`Session.history` returns (``None`` when it names no role)."""
        role = self.role
        return None if role is None else Message(role, self.text or "", self.attachments)


@handed_out("Session.events() and Sessions.events return one")
class EventReplay:
    """A session's conversation, replayed oldest-first (``GET …/events``).

    Pages are fetched backwards from the newest event with ``beforeSeq``
    until ``last`` events (or all of them) are in hand — on first iteration,
    not before — and then yielded in ``seq`` order.

    Thread-safety: iterate from one thread.
    """

    def __init__(self, get: Getter, *, last: int | None, full: bool) -> None:
        self._get = get
        self._last = last
        self._full = full
        self._total: int | None = None
        self._truncated = False
        self._loaded: list[SessionEvent] | None = None
        self._events: Iterator[SessionEvent] | None = None

    def __repr__(self) -> str:
        return f"<EventReplay total={self._total}>"

    @property
    def total(self) -> int | None:
        """How many events the session has (loads the replay when not yet loaded)."""
        self._load()
        return self._total

    @property
    def truncated(self) -> bool:
        """Whether the server shortened any text (ask with ``full=True`` for whole texts)."""
        self._load()
        return self._truncated

    def __iter__(self) -> Iterator[SessionEvent]:
        return self

    def __next__(self) -> SessionEvent:
        if self._events is None:
            self._events = iter(self._load())
        return next(self._events)

    def _load(self) -> list[SessionEvent]:
        if self._loaded is not None:
            return self._loaded
        pages: list[tuple[SessionEvent, ...]] = []
        count = 0
        before: int | None = None
        while self._last is None or count < self._last:
            wanted = REPLAY_PAGE_MAX if self._last is None else self._last - count
            size = min(REPLAY_PAGE_MAX, wanted)
            params: dict[str, Any] = {"lastMessages": size}
            if self._full:
                params["full"] = 1
            if before is not None:
                params["beforeSeq"] = before
            body = self._get(params)
            page = page_of(body, "events", SessionEvent.from_wire)
            assert isinstance(body, Mapping)  # checked by _page
            if self._total is None:
                self._total = int_or_none(body.get("total"))
            self._truncated = self._truncated or body.get("truncated") is True
            events = tuple(sorted(page.items, key=lambda e: e.seq))
            if self._last is not None:
                events = events[max(0, len(events) - (self._last - count)) :]
            pages.append(events)
            count += len(events)
            following = int_or_none(body.get("nextBeforeSeq"))
            if not events or following is None:
                break
            if before is not None and following >= before:
                raise WireFormatError(
                    f"the server's nextBeforeSeq {following} does not move back from {before}"
                )
            before = following
        self._loaded = [event for page_events in reversed(pages) for event in page_events]
        return self._loaded


def metadata_query(metadata: Any) -> dict[str, list[str]]:
    """The ``metadata`` filter of a list route, checked (nothing is sent on an error)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise SpecError(
            f"must be a mapping of str to str, got {type(metadata).__name__}", path="metadata"
        )
    filters = []
    for key, value in metadata.items():
        if not isinstance(key, str) or not METADATA_KEY_RE.match(key):
            raise SpecError(
                f"key {key!r} must be 1-64 characters of letters, digits, '.', '_' or '-'",
                path="metadata",
            )
        if not isinstance(value, str):
            raise SpecError(
                f"must be a string, got {type(value).__name__}", path=f"metadata[{key!r}]"
            )
        filters.append(f"{key}:{value}")
    return {"metadata": filters} if filters else {}


def replay_session(get: Getter, *, last: int | None = None, full: bool = False) -> EventReplay:
    """An :class:`EventReplay` of one session's events route ``get`` (see
    :meth:`Sessions.events`).

    :raises SpecError: ``last`` or ``full`` is invalid (nothing is sent).
    """
    check_positive(last, "last")
    if not isinstance(full, bool):
        raise SpecError(f"must be True or False, got {full!r}", path="full")
    return EventReplay(get, last=last, full=full)
