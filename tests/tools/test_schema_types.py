"""Deriver.schema: one JSON Schema per supported annotation, and graceful degradation."""

# ruff: noqa: UP007, UP045 - the typing.Optional / typing.Union spellings are under test

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import enum
import logging
import uuid
import warnings
from collections.abc import Callable
from typing import Annotated, Any, Literal, NewType, Optional, TypedDict, Union

import attrs
import pytest
from typing_extensions import NotRequired, Required

from mantyx_sync._tools.object_schema import object_schema
from mantyx_sync._tools.schema import Deriver
from mantyx_sync.errors import SchemaWarning, SpecError


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Weird(enum.Enum):
    A = (1, 2)


@attrs.define
class Point:
    """A point on the plane."""

    x: int
    y: int = 0
    label: str = attrs.field(default="", metadata={"description": "shown next to it"})
    tags: list[str] = attrs.Factory(list)


@attrs.define
class Node:
    value: int
    children: list[Node] = attrs.Factory(list)


@dataclasses.dataclass
class Box:
    corner: Point
    size: Annotated[float, "edge length in cm"]
    color: Color = Color.RED
    note: Optional[str] = None
    hidden: int = dataclasses.field(default=0, init=False)


@dataclasses.dataclass
class Documented:
    """A documented dataclass.

    Attributes:
        name: who it is.
    """

    name: str
    when: dt.datetime = dataclasses.field(
        default_factory=dt.datetime.now, metadata={"description": "the moment"}
    )


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class PartialMovie(TypedDict, total=False):
    title: Required[str]
    year: int


UserId = NewType("UserId", str)


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
        (Any, {}),
        (object, {}),
        (UserId, {"type": "string"}),
        (dt.datetime, {"type": "string", "format": "date-time"}),
        (dt.date, {"type": "string", "format": "date"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (list, {"type": "array"}),
        (dict, {"type": "object"}),
    ],
)
def test_scalars_and_bare_containers(tp: Any, expected: dict[str, Any]) -> None:
    assert Deriver().schema(tp) == expected


def test_optional_forms_use_a_null_type() -> None:
    assert Deriver().schema(Optional[int]) == {"type": ["integer", "null"]}
    assert Deriver().schema(int | None) == {"type": ["integer", "null"]}
    assert Deriver().schema(Union[int, str, None]) == {"type": ["integer", "string", "null"]}
    assert Deriver().schema(list[int] | None) == {
        "type": ["array", "null"],
        "items": {"type": "integer"},
    }


def test_unions_of_complex_members_use_any_of() -> None:
    schema = Deriver().schema(Union[Point, int])
    assert schema["anyOf"][1] == {"type": "integer"}
    assert schema["anyOf"][0]["properties"]["x"] == {"type": "integer"}
    assert Deriver().schema(Union[Point, int, None])["anyOf"][-1] == {"type": "null"}
    # type-scoped keywords stay valid when "null" joins the type list
    assert Deriver().schema(Optional[Point])["type"] == ["object", "null"]
    assert Deriver().schema(Optional[Color]) == {
        "enum": ["red", "blue", None],
        "type": ["string", "null"],
    }


def test_union_with_any_is_permissive() -> None:
    assert Deriver().schema(Union[int, Any]) == {}


def test_literal_and_enum_become_enums() -> None:
    assert Deriver().schema(Literal["r", "w"]) == {"enum": ["r", "w"], "type": "string"}
    assert Deriver().schema(Literal[1, 2]) == {"enum": [1, 2], "type": "integer"}
    assert Deriver().schema(Literal["a", 1]) == {"enum": ["a", 1]}
    assert Deriver().schema(Optional[Literal["a"]]) == {
        "enum": ["a", None],
        "type": ["string", "null"],
    }
    assert Deriver().schema(Color) == {"enum": ["red", "blue"], "type": "string"}
    assert Deriver().schema(Level) == {"enum": [1, 2], "type": "integer"}
    assert Deriver().schema(Literal[Color.RED]) == {"enum": ["red"], "type": "string"}


def test_sequences_tuples_and_sets() -> None:
    assert Deriver().schema(list[str]) == {"type": "array", "items": {"type": "string"}}
    assert Deriver().schema(cabc.Sequence[int]) == {"type": "array", "items": {"type": "integer"}}
    assert Deriver().schema(list[Any]) == {"type": "array"}
    assert Deriver().schema(tuple[int, ...]) == {"type": "array", "items": {"type": "integer"}}
    assert Deriver().schema(tuple[int, str]) == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert Deriver().schema(tuple[float, float]) == {
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": "number"}],
        "items": {"type": "number"},
        "minItems": 2,
        "maxItems": 2,
    }
    assert Deriver().schema(set[int]) == {
        "type": "array",
        "items": {"type": "integer"},
        "uniqueItems": True,
    }
    assert Deriver().schema(frozenset[str])["uniqueItems"] is True


def test_string_keyed_mappings() -> None:
    assert Deriver().schema(dict[str, int]) == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert Deriver().schema(cabc.Mapping[str, Any]) == {"type": "object"}
    assert Deriver().schema(dict[Literal["a", "b"], int]) == {
        "type": "object",
        "propertyNames": {"enum": ["a", "b"], "type": "string"},
        "additionalProperties": {"type": "integer"},
    }


def test_attrs_class_properties_defaults_and_metadata() -> None:
    assert Deriver().schema(Point) == {
        "type": "object",
        "description": "A point on the plane.",
        "properties": {
            "x": {"type": "integer"},
            "y": {"type": "integer", "default": 0},
            "label": {"type": "string", "description": "shown next to it", "default": ""},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
        "additionalProperties": False,
    }


def test_dataclass_nested_annotated_enum_and_init_false() -> None:
    schema = Deriver().schema(Box)
    assert schema["required"] == ["corner", "size"]
    assert set(schema["properties"]) == {"corner", "size", "color", "note"}
    assert schema["properties"]["corner"]["properties"]["x"] == {"type": "integer"}
    assert schema["properties"]["size"] == {"type": "number", "description": "edge length in cm"}
    assert schema["properties"]["color"] == {
        "enum": ["red", "blue"],
        "type": "string",
        "default": "red",
    }
    assert schema["properties"]["note"] == {"type": ["string", "null"], "default": None}
    # the synthesised "Box(corner: ...)" docstring is not a description
    assert "description" not in schema


def test_dataclass_docstring_attributes_and_field_metadata() -> None:
    schema = Deriver().schema(Documented)
    assert schema["description"] == "A documented dataclass."
    assert schema["properties"]["name"]["description"] == "who it is."
    assert schema["properties"]["when"] == {
        "type": "string",
        "format": "date-time",
        "description": "the moment",
    }
    assert schema["required"] == ["name"]


def test_typeddict_total_and_not_required() -> None:
    assert Deriver().schema(Movie) == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["title"],
    }
    assert Deriver().schema(PartialMovie)["required"] == ["title"]


def test_annotated_mapping_metadata_is_merged() -> None:
    assert Deriver().schema(Annotated[int, "how many", {"minimum": 1}]) == {
        "type": "integer",
        "description": "how many",
        "minimum": 1,
    }


def test_recursive_class_is_cut_with_a_warning() -> None:
    with pytest.warns(SchemaWarning, match="recursive reference to .*Node"):
        schema = Deriver().schema(Node)
    assert schema["properties"]["children"] == {"type": "array"}


@pytest.mark.parametrize(
    ("tp", "construct"),
    [
        (bytes, "bytes"),
        (Callable[[int], int], "Callable"),
        (dict[int, str], "mapping key type int"),
        (Weird, "enum .*Weird"),
        ("NotAType", "unresolved annotation"),
    ],
)
def test_unsupported_constructs_degrade_with_a_warning_and_a_log(
    tp: Any, construct: str, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="mantyx_sync._tools.schema"),
        pytest.warns(SchemaWarning, match=construct) as record,
    ):
        schema = Deriver().schema(tp)
    assert schema in ({}, {"type": "object"})
    assert any("cannot express" in r.getMessage() for r in caplog.records)
    # the warning points at this test, not at mantyx_sync internals
    assert record[0].filename == __file__


def test_unsupported_nested_field_keeps_the_rest_of_the_schema() -> None:
    @attrs.define
    class HasBytes:
        name: str
        blob: bytes

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        schema = Deriver().schema(HasBytes)
    assert schema["properties"] == {"name": {"type": "string"}, "blob": {}}
    assert [w.category for w in caught] == [SchemaWarning]


def test_object_schema_checks_dicts_and_rejects_other_things() -> None:
    given = {"type": "object", "properties": {"a": {"type": "string"}}}
    copied = object_schema(given)
    assert copied == given
    assert copied is not given and copied["properties"] is not given["properties"]
    with pytest.raises(SpecError, match='"type": "object"'):
        object_schema({"type": "string"})
    with pytest.raises(SpecError, match='"type": "object"'):
        object_schema({"properties": {}})
    with pytest.raises(SpecError, match="JSON-serialisable"):
        object_schema({"type": "object", "default": object()})
    with pytest.raises(SpecError, match="output_schema must be"):
        object_schema(42, what="output_schema")
    with pytest.raises(SpecError, match="got int"):
        object_schema(int)
