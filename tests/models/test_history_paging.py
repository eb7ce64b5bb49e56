"""history.Listing and EventReplay over a scripted getter: paging rules without HTTP."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mantyx_sync._models.wire import WireFormatError
from mantyx_sync.history import RunSummary, SessionSummary, metadata_query, replay_session
from mantyx_sync.paging import paged


class ScriptedGet:
    """Answers a list route's GETs from a list of bodies and records each one's params."""

    def __init__(self, *bodies: Any) -> None:
        self.bodies = list(bodies)
        self.calls: list[dict[str, Any]] = []

    def __call__(self, params: Mapping[str, Any]) -> Any:
        self.calls.append(dict(params))
        return self.bodies.pop(0)


def _events(*seqs: int) -> list[dict[str, Any]]:
    return [
        {"seq": s, "type": "user_message" if s % 2 else "assistant_message", "text": f"t{s}"}
        for s in seqs
    ]


def test_replay_pages_backwards_and_yields_oldest_first() -> None:
    get = ScriptedGet(
        {"total": 5, "events": _events(4, 5), "nextBeforeSeq": 4, "truncated": False},
        {"total": 5, "events": _events(2, 3), "nextBeforeSeq": 2, "truncated": True},
        {"total": 5, "events": _events(1), "nextBeforeSeq": None},
    )
    replay = replay_session(get)
    assert get.calls == [], "lazy until iterated"
    assert [e.seq for e in replay] == [1, 2, 3, 4, 5]
    assert [c.get("beforeSeq") for c in get.calls] == [None, 4, 2]
    assert replay.total == 5 and replay.truncated is True
    assert [e.role for e in replay_session(ScriptedGet({"events": _events(1, 2)}))] == [
        "user",
        "assistant",
    ]


def test_replay_last_stops_once_enough_events_are_in_hand() -> None:
    get = ScriptedGet(
        {"total": 9, "events": _events(8, 9), "nextBeforeSeq": 8},
        {"total": 9, "events": _events(7), "nextBeforeSeq": 7},
    )
    assert [e.seq for e in replay_session(get, last=3)] == [7, 8, 9]
    assert [c["lastMessages"] for c in get.calls] == [3, 1]


def test_replay_refuses_a_server_that_does_not_move_back() -> None:
    get = ScriptedGet(
        {"events": _events(5), "nextBeforeSeq": 5},
        {"events": _events(4), "nextBeforeSeq": 5},
    )
    with pytest.raises(WireFormatError, match="does not move back"):
        list(replay_session(get))


def test_listing_stops_on_a_repeated_cursor() -> None:
    run = {"id": "r1"}
    get = ScriptedGet(
        {"runs": [run], "nextCursor": "x"},
        {"runs": [run], "nextCursor": "x"},
        {"runs": [run], "nextCursor": "x"},
    )
    with pytest.raises(WireFormatError, match="repeated the cursor"):
        list(paged(get, {}, "runs", RunSummary.from_wire))
    assert [c.get("cursor") for c in get.calls] == [None, "x"]


def test_listing_reads_total_once_and_reuses_the_first_page() -> None:
    get = ScriptedGet(
        {"total": 2, "sessions": [{"sessionId": "a"}], "nextCursor": "c1"},
        {"total": 2, "sessions": [{"sessionId": "b", "extra": 1}], "nextCursor": None},
    )
    listing = paged(get, metadata_query({"k": "v", "j": "w"}), "sessions", SessionSummary.from_wire)
    assert listing.total == 2 and len(get.calls) == 1
    items = list(listing)
    assert [s.id for s in items] == ["a", "b"] and items[1].raw["extra"] == 1
    assert get.calls[0] == {"metadata": ["k:v", "j:w"]}
    assert get.calls[1] == {"metadata": ["k:v", "j:w"], "cursor": "c1"}


def test_a_body_without_the_list_is_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError, match="'runs'"):
        list(paged(ScriptedGet({"items": []}), {}, "runs", RunSummary.from_wire))
