"""RunResult.parse: JSON, output-schema validation, validators; never partial text."""

from __future__ import annotations

import threading
import uuid
from typing import Any
from unittest import mock

import fastjsonschema
import pytest

from mantyx_sync._tools import validator
from mantyx_sync.errors import OutputParseError
from mantyx_sync.events import RunEvent
from mantyx_sync.results import RunResult
from mantyx_sync.spec import OutputSchema

SCHEMA = OutputSchema(
    schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "temperature_c": {"type": "number"}},
        "required": ["city", "temperature_c"],
    },
    name="weather_report",
)


def result(text: str, schema: OutputSchema | None = SCHEMA) -> RunResult:
    return RunResult(run_id="run_1", text=text, output_schema=schema)


def test_parse_without_schema() -> None:
    assert result("[1, 2]", None).parse() == [1, 2]


def test_parse_with_schema() -> None:
    assert result('{"city": "Oslo", "temperature_c": 4.5}').parse() == {
        "city": "Oslo",
        "temperature_c": 4.5,
    }


@pytest.mark.parametrize("text", ["Sure! Here it is", '{"city": "Oslo", ', ""])
def test_not_json(text: str) -> None:
    with pytest.raises(OutputParseError, match="not valid JSON") as info:
        result(text).parse()
    assert info.value.raw_text == text
    assert "run_1" in str(info.value)


def test_schema_failure() -> None:
    text = '{"city": "Oslo"}'
    with pytest.raises(OutputParseError, match="does not match the output schema") as info:
        result(text).parse()
    assert info.value.raw_text == text
    assert info.value.errors and "temperature_c" in info.value.errors[0]


def test_schema_type_failure() -> None:
    with pytest.raises(OutputParseError, match="number"):
        result('{"city": "Oslo", "temperature_c": "warm"}').parse()


def test_validator_transforms() -> None:
    seen: list[Any] = []

    def to_tuple(data: dict[str, Any]) -> tuple[str, float]:
        seen.append(data)
        return (data["city"], data["temperature_c"])

    assert result('{"city": "Oslo", "temperature_c": 1}').parse(to_tuple) == ("Oslo", 1)
    assert seen == [{"city": "Oslo", "temperature_c": 1}]


def test_validator_returning_none_keeps_data() -> None:
    assert result('{"city": "Oslo", "temperature_c": 1}').parse(lambda d: None) == {
        "city": "Oslo",
        "temperature_c": 1,
    }


def test_validator_raising_is_wrapped_and_chained() -> None:
    problem = ValueError("temperature out of range")

    def reject(data: Any) -> Any:
        raise problem

    text = '{"city": "Oslo", "temperature_c": 1000}'
    with pytest.raises(OutputParseError, match="temperature out of range") as info:
        result(text).parse(reject)
    assert info.value.__cause__ is problem
    assert info.value.raw_text == text


def test_validator_not_called_when_schema_fails() -> None:
    called = threading.Event()
    with pytest.raises(OutputParseError):
        result("{}").parse(lambda d: called.set())
    assert not called.is_set()


def test_uncompilable_schema() -> None:
    broken = OutputSchema(schema={"type": "object", "properties": {"a": {"type": "nope"}}})
    with pytest.raises(OutputParseError, match="cannot be compiled") as info:
        result('{"a": 1}', broken).parse()
    assert info.value.raw_text == '{"a": 1}'


def test_compiled_schema_is_cached_by_canonical_json_in_the_one_schema_cache() -> None:
    title = uuid.uuid4().hex  # a schema no other test compiled
    first = OutputSchema(schema={"title": title, "type": "object", "required": ["a"]})
    same = OutputSchema(schema={"required": ["a"], "type": "object", "title": title})
    with mock.patch.object(fastjsonschema, "compile", wraps=fastjsonschema.compile) as compile_spy:
        result('{"a": 1}', first).parse()
        result('{"a": 2}', same).parse()
        assert compile_spy.call_count == 1
        # The cache the local tools' validators live in holds it too.
        validator._compile.cache_clear()
        result('{"a": 3}', same).parse()
        assert compile_spy.call_count == 2


def test_defaults_the_output_schema_declares_are_filled_in() -> None:
    schema = OutputSchema(
        schema={"type": "object", "properties": {"n": {"type": "integer", "default": 5}}}
    )
    assert result("{}", schema).parse() == {"n": 5}


def test_repr_shows_event_count_not_events() -> None:
    events = tuple(
        RunEvent(seq=i, type="assistant_delta", data={"text": f"chunk-{i}"}) for i in range(50)
    )
    text = repr(RunResult(run_id="run_1", text="hi", events=events))
    assert "<50 events>" in text
    assert "chunk-" not in text
