"""``output_type=T``: the schema sent is derived from ``T``, the reply comes back
as a ``T`` (dataclass, attrs class, TypedDict, pydantic model), and a reply that
does not fit raises ``OutputParseError`` naming the first bad field."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, TypedDict

import attrs
import pytest

import mantyx_sync
from mantyx_sync import Agent, OutputParseError
from mantyx_sync.testing import LocalMantyx, Turn

SYSTEM = "You are terse."


@dataclasses.dataclass
class Item:
    name: str
    price: float


@dataclasses.dataclass
class Order:
    items: list[Item]
    note: str = ""


@attrs.frozen
class Point:
    x: int
    y: int


class Label(TypedDict):
    name: str
    score: float


def _agent(emulator: LocalMantyx, **spec: Any) -> Agent:
    return Agent(emulator.client(in_memory=True), system_prompt=SYSTEM, **spec)


def _sent_schema(emulator: LocalMantyx) -> Any:
    bodies = [r.json for r in emulator.requests if isinstance(r.json, dict)]
    return [body for body in bodies if "outputSchema" in body][-1]["outputSchema"]["schema"]


@pytest.mark.parametrize(
    ("output_type", "reply", "expected"),
    [
        (Order, {"items": [{"name": "tea", "price": 2.5}]}, Order([Item("tea", 2.5)])),
        (Point, {"x": 1, "y": 2}, Point(1, 2)),
        (Label, {"name": "spam", "score": 0.9}, {"name": "spam", "score": 0.9}),
    ],
)
def test_the_reply_is_built_as_the_output_type(
    emulator: LocalMantyx, output_type: Any, reply: Any, expected: Any
) -> None:
    emulator.set_model([Turn(json.dumps(reply))])
    result = _agent(emulator).run("x", output_type=output_type)
    assert result.output == expected
    assert result.output is result.output  # built once
    assert result.output_type is output_type
    schema = _sent_schema(emulator)
    assert schema["type"] == "object"
    assert set(schema["required"]) <= set(reply)


def test_a_pydantic_model_is_validated_by_the_model(emulator: LocalMantyx) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Verdict(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        ok: bool
        reason: str

    emulator.set_model([Turn('{"ok": true, "reason": "prime"}')])
    result = _agent(emulator).run("Is 7 prime?", output_type=Verdict)
    assert result.output == Verdict(ok=True, reason="prime")
    assert _sent_schema(emulator)["properties"]["ok"]["type"] == "boolean"
    emulator.set_model([Turn('{"ok": "maybe", "reason": "?"}')])
    with pytest.raises(OutputParseError) as info:
        _agent(emulator).run("Is 9 prime?", output_type=Verdict)
    assert info.value.path == "ok"


def test_a_reply_that_does_not_fit_names_the_first_bad_field(emulator: LocalMantyx) -> None:
    reply = '{"items": [{"name": "tea", "price": 2}, {"name": "cake", "price": "free"}]}'
    emulator.set_model([Turn(reply)])
    with pytest.raises(OutputParseError) as info:
        _agent(emulator).run("x", output_type=Order)
    assert info.value.path == "items[1].price"
    assert "items[1].price" in str(info.value)
    assert info.value.raw_text == reply
    emulator.set_model([Turn("not json")])
    with pytest.raises(OutputParseError, match="not valid JSON") as bad:
        _agent(emulator).run("x", output_type=Order)
    assert bad.value.path is None


def test_streams_and_sessions_take_it_too(emulator: LocalMantyx) -> None:
    emulator.set_model([Turn('{"x": 3, "y": 4}')])
    agent = _agent(emulator)
    with agent.stream("x", output_type=Point) as run:
        assert [e.type for e in run][-1] == "result"
        assert run.result is not None and run.result.output == Point(3, 4)
    with agent.session() as chat:
        assert chat.run("x", output_type=Point).output == Point(3, 4)
        assert _sent_schema(emulator)["required"] == ["x", "y"]
        assert chat.run("plain").output == '{"x": 3, "y": 4}'


def test_without_output_type_the_output_is_the_text_and_the_raw_schema_form_works(
    emulator: LocalMantyx,
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    emulator.set_model([Turn('{"n": 5}')])
    result = _agent(emulator, output_schema=schema).run("x")
    assert result.output == result.text == '{"n": 5}'
    assert result.parse() == {"n": 5}
    assert _sent_schema(emulator) == schema


def test_an_output_type_that_is_not_a_class_of_fields_is_refused_before_sending(
    emulator: LocalMantyx,
) -> None:
    with pytest.raises(mantyx_sync.ArgumentTypeError, match="output_type"):
        _agent(emulator).run("x", output_type=int)
    assert not [r for r in emulator.requests if r.method == "POST"]
