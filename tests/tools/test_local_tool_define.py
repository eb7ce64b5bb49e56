"""define_local_tool / LocalTool: definition checks, wire shape, validation, invocation."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, TypedDict

import attrs
import pytest

from mantyx_sync.errors import SpecError, ToolError
from mantyx_sync.local_tools import LocalTool, as_local_tool, define_local_tool, local_tool

READ_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}


@attrs.frozen
class ReadArgs:
    path: str
    encoding: str = "utf-8"


@dataclasses.dataclass
class SumArgs:
    numbers: list[int]


class Person(TypedDict):
    name: str


@attrs.frozen
class FileInfo:
    size: int


def test_dict_parameters_execute_gets_the_args_dict() -> None:
    received: list[Any] = []
    tool = define_local_tool(
        name="read_file",
        description="Read a file.",
        parameters=READ_SCHEMA,
        execute=lambda args: received.append(args) or "content",
    )
    assert tool.kind == "local"
    assert tool.validate_args({"path": "/x"}) is None
    assert tool.validate_args({"path": 1}) == "invalid arguments: data.path must be string"
    assert tool.invoke({"path": "/x"}) == "content"
    assert received == [{"path": "/x"}]


def test_none_parameters_mean_no_arguments() -> None:
    tool = define_local_tool(name="ping", execute=lambda args: "pong")
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.validate_args({}) is None
    assert tool.invoke({}) == "pong"


def test_attrs_parameters_execute_gets_an_instance() -> None:
    tool = define_local_tool(name="read", parameters=ReadArgs, execute=lambda a: a)
    assert tool.parameters["required"] == ["path"]
    assert tool.parameters["properties"]["encoding"] == {"type": "string", "default": "utf-8"}
    assert tool.validate_args({"path": "/x", "other": 1}) is not None
    assert tool.invoke({"path": "/x"}) == ReadArgs(path="/x")


def test_dataclass_and_typeddict_parameters() -> None:
    total = define_local_tool(name="total", parameters=SumArgs, execute=lambda a: sum(a.numbers))
    assert total.parameters["properties"]["numbers"] == {
        "type": "array",
        "items": {"type": "integer"},
    }
    assert total.invoke({"numbers": [1, 2, 3]}) == 6
    hello = define_local_tool(name="hello", parameters=Person, execute=lambda p: p["name"])
    assert hello.invoke({"name": "Ada"}) == "Ada"


def test_pydantic_parameters() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Inner(pydantic.BaseModel):
        v: int = pydantic.Field(description="a value")

    class Args(pydantic.BaseModel):
        """Arguments."""

        name: str
        inner: Inner

    tool = define_local_tool(name="p", parameters=Args, execute=lambda a: a)
    inner = tool.parameters["properties"]["inner"]
    assert "$ref" not in str(tool.parameters)  # $defs are inlined
    assert inner["properties"]["v"]["description"] == "a value"
    assert tool.validate_args({"name": "n", "inner": {"v": "x"}}) == (
        "invalid arguments: data.inner.v must be integer"
    )
    value = tool.invoke({"name": "n", "inner": {"v": 2}})
    assert isinstance(value, Args) and value.inner.v == 2


def test_recursive_pydantic_parameters_keep_defs_and_validate() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Tree(pydantic.BaseModel):
        label: str
        kids: list[Tree] = []

    Tree.model_rebuild()
    tool = define_local_tool(name="tree", parameters=Tree, execute=lambda t: t)
    assert tool.parameters["type"] == "object" and "$defs" in tool.parameters
    assert tool.validate_args({"label": "a", "kids": [{"label": "b"}]}) is None
    assert tool.validate_args({"label": "a", "kids": [{"label": 1}]}) is not None
    assert tool.invoke({"label": "a", "kids": [{"label": "b"}]}).kids[0].label == "b"


def test_structuring_failure_is_a_tool_error_and_handler_errors_propagate() -> None:
    tool = define_local_tool(name="read", parameters=ReadArgs, execute=lambda a: a)
    with pytest.raises(ToolError, match="invalid arguments"):
        tool.invoke({})

    def boom(args: Any) -> str:
        raise KeyError("nope")

    failing = define_local_tool(name="boom", execute=boom)
    with pytest.raises(KeyError, match="nope"):
        failing.invoke({})


@pytest.mark.parametrize("name", ["", "has space", "dash-name", "x" * 65, "émoji", None, 3])
def test_bad_names_are_rejected_at_definition(name: Any) -> None:
    with pytest.raises(SpecError, match=r"\^\[a-zA-Z0-9_\]\{1,64\}\$"):
        define_local_tool(name=name, execute=lambda a: a)


def test_name_limits_accept_64_chars() -> None:
    assert define_local_tool(name="a" * 64, execute=lambda a: a).name == "a" * 64


@pytest.mark.parametrize("timeout", [0, -1, math.inf, math.nan, "5", True])
def test_bad_timeouts_are_rejected(timeout: Any) -> None:
    with pytest.raises(SpecError, match="timeout must be a number of seconds > 0"):
        define_local_tool(name="t", execute=lambda a: a, timeout=timeout)


def test_execute_must_be_callable() -> None:
    with pytest.raises(SpecError, match="execute must be a callable"):
        define_local_tool(name="t", execute="not callable")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("parameters", "match"),
    [
        ({"type": "array"}, '"type": "object"'),
        ({"properties": {}}, '"type": "object"'),
        (42, "parameters must be"),
        (str, "parameters must be"),
    ],
)
def test_bad_parameters_are_rejected(parameters: Any, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        define_local_tool(name="t", parameters=parameters, execute=lambda a: a)


def test_to_wire_minimal_shape() -> None:
    tool = define_local_tool(name="ping", execute=lambda a: "pong")
    assert tool.to_wire() == {
        "kind": "local",
        "name": "ping",
        "parameters": {"type": "object", "properties": {}},
    }


def test_to_wire_full_shape_and_independent_copies() -> None:
    tool = define_local_tool(
        name="read_file",
        description="Read a file.",
        parameters=READ_SCHEMA,
        execute=lambda a: "",
        output_schema=FileInfo,
        long_running=True,
        timeout=2.5,
    )
    wire = tool.to_wire()
    assert wire == {
        "kind": "local",
        "name": "read_file",
        "description": "Read a file.",
        "parameters": READ_SCHEMA,
        "outputSchema": {
            "type": "object",
            "properties": {"size": {"type": "integer"}},
            "required": ["size"],
            "additionalProperties": False,
        },
        "longRunning": True,
    }
    assert tool.timeout == 2.5
    wire["parameters"]["properties"].clear()
    assert tool.parameters["properties"] == {"path": {"type": "string"}}
    assert "timeout" not in wire


def test_long_running_false_and_output_schema_dict() -> None:
    out = {"type": "object", "properties": {"id": {"type": "string"}}}
    wire = define_local_tool(
        name="t", execute=lambda a: a, output_schema=out, long_running=False
    ).to_wire()
    assert "longRunning" not in wire
    assert wire["outputSchema"] == out
    with pytest.raises(SpecError, match="output_schema must be an object schema"):
        define_local_tool(name="t", execute=lambda a: a, output_schema={"type": "string"})
    with pytest.raises(SpecError, match="output_schema must describe a JSON object"):
        define_local_tool(name="t", execute=lambda a: a, output_schema=type_with_no_object())


def type_with_no_object() -> Any:
    pydantic = pytest.importorskip("pydantic")
    return pydantic.RootModel[int]


def test_parameters_dict_is_copied_at_definition() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tool = define_local_tool(name="t", parameters=schema, execute=lambda a: a)
    schema["properties"]["a"]["type"] = "string"
    assert tool.parameters["properties"]["a"] == {"type": "integer"}
    assert tool.validate_args({"a": 1}) is None


def test_repr_hides_private_fields_and_tools_compare_by_value() -> None:
    def handler(a: Any) -> Any:
        return a

    first = define_local_tool(name="t", execute=handler)
    second = define_local_tool(name="t", execute=handler)
    assert first == second
    assert hash(first) == hash(second)
    assert len({first, second}) == 1
    assert "invoke" not in repr(first) and "validator" not in repr(first)


def test_as_local_tool() -> None:
    tool = define_local_tool(name="t", execute=lambda a: a)
    assert as_local_tool(tool) is tool

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    made = as_local_tool(add)
    assert isinstance(made, LocalTool) and made.name == "add"
    assert made.invoke({"a": 1, "b": 2}) == 3
    for bad in (42, "add", ReadArgs, None):
        with pytest.raises(SpecError, match="expected a LocalTool or a function"):
            as_local_tool(bad)


def test_local_tool_on_a_local_tool_is_an_error() -> None:
    tool = define_local_tool(name="t", execute=lambda a: a)
    with pytest.raises(SpecError, match="already a LocalTool"):
        local_tool(tool)  # type: ignore[arg-type]
