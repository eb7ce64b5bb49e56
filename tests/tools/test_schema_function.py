"""function_schema: signatures and docstrings become schemas; bind structures the args."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
from typing import TYPE_CHECKING, Annotated, Any, Literal

import attrs
import pytest

from mantyx_sync._tools.signature import function_schema
from mantyx_sync.errors import SchemaWarning, SpecError, ToolError

if TYPE_CHECKING:
    from decimal import Decimal  # unresolvable at runtime on purpose


class Unit(enum.Enum):
    CM = "cm"
    INCH = "in"


@attrs.frozen
class Size:
    width: float
    height: float
    unit: Unit = Unit.CM


@dataclasses.dataclass
class Order:
    sku: str
    sizes: list[Size]
    when: dt.date
    gift: bool = False


def resize(
    path: str,
    size: Size,
    *,
    keep_ratio: bool = True,
    quality: Annotated[int, "JPEG quality, 1-100"] = 85,
    fmt: Literal["png", "jpeg"] | None = None,
) -> str:
    """Resize an image.

    Args:
        path: the image file.
        size: the target size.
        quality: ignored: the Annotated text wins.
    """
    return f"{path} {size} {keep_ratio} {quality} {fmt}"


def test_schema_from_signature_and_docstring() -> None:
    spec = function_schema(resize)
    assert spec.name == "resize"
    assert spec.description == "Resize an image."
    props = spec.parameters["properties"]
    assert spec.parameters["required"] == ["path", "size"]
    assert spec.parameters["additionalProperties"] is False
    assert props["path"] == {"type": "string", "description": "the image file."}
    assert props["size"]["description"] == "the target size."
    assert props["size"]["properties"]["unit"] == {
        "enum": ["cm", "in"],
        "type": "string",
        "default": "cm",
    }
    assert props["keep_ratio"] == {"type": "boolean", "default": True}
    assert props["quality"] == {
        "type": "integer",
        "description": "JPEG quality, 1-100",
        "default": 85,
    }
    assert props["fmt"] == {
        "enum": ["png", "jpeg", None],
        "type": ["string", "null"],
        "default": None,
    }


def test_bind_structures_nested_values_and_respects_defaults() -> None:
    spec = function_schema(resize)
    out = spec.bind({"path": "a.png", "size": {"width": 3, "height": 4.5, "unit": "in"}})
    assert out == "a.png Size(width=3.0, height=4.5, unit=<Unit.INCH: 'in'>) True 85 None"


def test_bind_dataclass_lists_dates_tuples_and_sets() -> None:
    seen: dict[str, Any] = {}

    def place(order: Order, corner: tuple[int, int], labels: set[str]) -> None:
        seen.update(order=order, corner=corner, labels=labels)

    spec = function_schema(place)
    spec.bind(
        {
            "order": {"sku": "X1", "sizes": [{"width": 1, "height": 2}], "when": "2024-05-01"},
            "corner": [1, 2],
            "labels": ["a", "a", "b"],
        }
    )
    assert seen == {
        "order": Order(sku="X1", sizes=[Size(1.0, 2.0)], when=dt.date(2024, 5, 1)),
        "corner": (1, 2),
        "labels": {"a", "b"},
    }


def test_bind_reports_conversion_failures_as_tool_errors() -> None:
    spec = function_schema(resize)
    with pytest.raises(ToolError, match=r"invalid arguments: .*argument 'size'"):
        spec.bind({"path": "p", "size": {"width": "wide", "height": 1}})
    with pytest.raises(ToolError, match="missing required argument 'size'"):
        spec.bind({"path": "p"})


def test_unannotated_parameters_are_permissive_or_typed_by_default() -> None:
    def f(a, b=3, c=None):  # type: ignore[no-untyped-def]
        return (a, b, c)

    spec = function_schema(f)
    assert spec.parameters["properties"] == {
        "a": {},
        "b": {"type": "integer", "default": 3},
        "c": {"default": None},
    }
    assert spec.bind({"a": {"raw": [1]}, "c": "x"}) == ({"raw": [1]}, 3, "x")


def test_kwargs_keeps_extra_properties_and_passes_them() -> None:
    def f(a: int, **rest: Any) -> Any:
        return a, rest

    spec = function_schema(f)
    assert "additionalProperties" not in spec.parameters
    assert spec.bind({"a": 1, "b": 2}) == (1, {"b": 2})


def test_star_args_is_rejected() -> None:
    def f(*items: int) -> None: ...

    with pytest.raises(SpecError, match=r"\*items"):
        function_schema(f)


def test_positional_only_parameters_are_passed_positionally() -> None:
    def f(a: int, b: int = 2, /, c: int = 3) -> tuple[int, int, int]:
        return (a, b, c)

    spec = function_schema(f)
    assert spec.bind({"a": 1, "c": 5}) == (1, 2, 5)
    assert spec.bind({"a": 1, "b": 7}) == (1, 7, 3)


class Greeter:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    def greet(self, who: str) -> str:
        """Greet someone."""
        return f"{self.greeting}, {who}"

    @classmethod
    def make(cls, greeting: str) -> str:
        return cls(greeting).greet("world")


def test_bound_methods_skip_self_and_cls() -> None:
    spec = function_schema(Greeter("hi").greet)
    assert list(spec.parameters["properties"]) == ["who"]
    assert spec.bind({"who": "bob"}) == "hi, bob"
    cls_spec = function_schema(Greeter.make)
    assert list(cls_spec.parameters["properties"]) == ["greeting"]
    assert cls_spec.bind({"greeting": "yo"}) == "yo, world"


def test_explicit_name_and_description_win() -> None:
    spec = function_schema(resize, name="img_resize", description="Custom.")
    assert (spec.name, spec.description) == ("img_resize", "Custom.")


def test_no_docstring_means_no_description() -> None:
    def f(x: int) -> int:
        return x

    assert function_schema(f).description is None


def test_partial_needs_a_name_and_keeps_hints() -> None:
    part = functools.partial(resize, keep_ratio=False)
    with pytest.raises(SpecError, match="pass name="):
        function_schema(part)
    spec = function_schema(part, name="resize2")
    assert spec.parameters["properties"]["path"]["type"] == "string"


def test_unresolvable_annotation_degrades_for_that_parameter_only() -> None:
    def price(amount: Decimal, currency: str) -> str:
        return f"{amount} {currency}"

    with pytest.warns(SchemaWarning, match="unresolved annotation 'Decimal'.*'amount'"):
        spec = function_schema(price)
    assert spec.parameters["properties"]["amount"] == {}
    assert spec.bind({"amount": "1.5", "currency": "EUR"}) == "1.5 EUR"


def test_optional_annotation_and_any() -> None:
    def f(a: int | None, b: Any, c: dict[str, list[int]]) -> Any:
        return a, b, c

    spec = function_schema(f)
    assert spec.parameters["properties"] == {
        "a": {"type": ["integer", "null"]},
        "b": {},
        "c": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "integer"}},
        },
    }
    assert spec.parameters["required"] == ["a", "b", "c"]
    assert spec.bind({"a": None, "b": [1], "c": {"k": [1]}}) == (None, [1], {"k": [1]})
