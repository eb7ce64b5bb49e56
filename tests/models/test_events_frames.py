"""RunEvent.from_frame: the envelope, the event:/id: fallbacks, malformed frames."""

from __future__ import annotations

import json
import pickle
import typing
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync._engine.eval_cases import TERMINAL_EVENTS as EVAL_TERMINAL_EVENTS
from mantyx_sync._models.frames import MalformedEvent
from mantyx_sync.events import (
    _PAYLOADS,
    TERMINAL_TYPES,
    EventType,
    RunEvent,
    UnknownPayload,
)

# What an evaluation's stream sends besides a case run's local_tool_call.
EVAL_TYPES = {"case_started", "case_completed", "run_completed", "run_error", "run_cancelled"}


def frame(**envelope: Any) -> str:
    return json.dumps(envelope)


def test_envelope() -> None:
    event = RunEvent.from_frame(frame(seq=3, type="assistant_delta", data={"text": "Hel"}))
    assert event == RunEvent(seq=3, type="assistant_delta", data={"text": "Hel"})


def test_envelope_type_wins_over_event_line() -> None:
    event = RunEvent.from_frame(frame(seq=1, type="result", data={}), event="assistant_delta")
    assert event.type == "result"


def test_event_line_used_when_type_missing() -> None:
    event = RunEvent.from_frame(frame(seq=8, data={"ok": True, "text": "hi"}), event="result")
    assert event.type == "result"
    assert event.is_terminal


def test_sseclient_default_event_name_is_not_a_type() -> None:
    with pytest.raises(MalformedEvent, match="no event type"):
        RunEvent.from_frame(frame(seq=1, data={}), event="message")


def test_seq_falls_back_to_id_line() -> None:
    assert RunEvent.from_frame(frame(type="started"), id="17").seq == 17


def test_envelope_seq_wins_over_id_line() -> None:
    assert RunEvent.from_frame(frame(seq=4, type="started"), id="17").seq == 4


@pytest.mark.parametrize("data", [None, "absent"])
def test_missing_or_null_data_is_empty(data: Any) -> None:
    envelope: dict[str, Any] = {"seq": 1, "type": "cancelled"}
    if data != "absent":
        envelope["data"] = data
    assert RunEvent.from_frame(json.dumps(envelope)).data == {}


@pytest.mark.parametrize(
    ("text", "kwargs", "reason"),
    [
        ("not json", {}, "not JSON"),
        ("", {}, "not JSON"),
        ("[1, 2]", {}, "not an object"),
        ('"text"', {}, "not an object"),
        (frame(seq=1, data={}), {}, "no event type"),
        (frame(seq=1, type="", data={}), {}, "no event type"),
        (frame(seq=1, type=7, data={}), {}, "no event type"),
        (frame(type="started"), {}, "no integer seq"),
        (frame(type="started"), {"id": "abc"}, "no integer seq"),
        (frame(seq="x", type="started"), {"id": "3"}, "no integer seq"),
        (frame(seq=1.5, type="started"), {}, "no integer seq"),
        (frame(seq=True, type="started"), {}, "no integer seq"),
        (frame(seq=1, type="started", data=[1]), {}, "data is not an object"),
        (frame(seq=1, type="started", data="x"), {}, "data is not an object"),
    ],
)
def test_malformed(text: str, kwargs: dict[str, str], reason: str) -> None:
    with pytest.raises(MalformedEvent, match=reason):
        RunEvent.from_frame(text, **kwargs)


def test_malformed_is_a_value_error() -> None:
    assert issubclass(MalformedEvent, ValueError)


@pytest.mark.parametrize(
    ("event_type", "terminal"),
    [
        ("result", True),
        ("error", True),
        ("cancelled", True),
        ("assistant_message", False),
        ("local_tool_call", False),
        ("something_new", False),
    ],
)
def test_is_terminal(event_type: str, terminal: bool) -> None:
    assert RunEvent(seq=1, type=event_type, data={}).is_terminal is terminal
    assert (event_type in TERMINAL_TYPES) is terminal


@pytest.mark.parametrize(
    ("event_type", "data", "text"),
    [
        ("assistant_delta", {"text": "Hel"}, "Hel"),
        ("thinking_delta", {"text": "hmm"}, "hmm"),
        ("assistant_message", {"text": "whole", "turn": 0}, "whole"),
        ("result", {"subtype": "success", "text": "final"}, "final"),
        ("result", {"subtype": "error_x", "error": "boom"}, None),
        ("tool_result", {"text": "not model text"}, None),
        ("error", {"error": "boom", "partialText": "par"}, None),
        ("assistant_delta", {"text": 5}, None),
    ],
)
def test_text(event_type: str, data: dict[str, Any], text: str | None) -> None:
    assert RunEvent(seq=1, type=event_type, data=data).text == text


def test_event_is_frozen() -> None:
    event = RunEvent(seq=1, type="started")
    with pytest.raises(AttributeError):
        event.seq = 2  # type: ignore[misc]


def test_a_parsed_event_is_the_one_its_constructor_builds() -> None:
    # from_frame sets the slots itself (the per-event path): nothing may differ.
    data = {"text": "Hel"}
    parsed = RunEvent.from_frame(frame(seq=3, type="assistant_delta", data=data))
    built = RunEvent(seq=3, type="assistant_delta", data=data)
    assert type(parsed) is RunEvent
    assert (parsed, repr(parsed)) == (built, repr(built))
    assert parsed.payload == built.payload
    assert pickle.loads(pickle.dumps(parsed)) == built
    with pytest.raises(AttributeError):
        parsed.seq = 4  # type: ignore[misc]


def test_an_unknown_event_type_passes_through_as_sent() -> None:
    # EventType names the known types for a type checker; a newer server's type still arrives.
    for text in (frame(seq=4, type="memory_compacted", data={"v": 2}), frame(seq=4, data={"v": 2})):
        event = RunEvent.from_frame(text, event="memory_compacted")
        assert (event.type, event.data) == ("memory_compacted", {"v": 2})
        assert event.payload == UnknownPayload(data={"v": 2})


def test_event_type_names_every_typed_payload_and_the_evaluation_events() -> None:
    known = set(typing.get_args(EventType))
    assert known == set(_PAYLOADS) | EVAL_TYPES
    assert known >= EVAL_TERMINAL_EVENTS | TERMINAL_TYPES
    assert mantyx_sync.EventType is EventType
