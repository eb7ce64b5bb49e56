"""Each wire class's plain path (``_models/plan.py``) against the cattrs converter.

The plain path builds the documented shapes without cattrs and hands every
other shape back (``UNUSUAL``). Whatever it builds or writes must be exactly
what the converter builds or writes (values and their exact types): shown for
every wire class of the package on generated JSON (hypothesis), and on a table
of the shapes servers send for a local tool call.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import typing
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mantyx_sync
from mantyx_sync._models.convert import converter
from mantyx_sync._models.plan import UNUSUAL, is_wire_class, plan_of
from mantyx_sync.events import LocalToolCall, structure_payload

# The modules whose classes are read from and written to the wire.
WIRE_MODULES = ("events", "results", "spec", "messages", "history", "feedback", "evals", "_models.")


def _wire_classes() -> list[type[Any]]:
    found: dict[str, type[Any]] = {}
    for info in pkgutil.walk_packages(mantyx_sync.__path__, "mantyx_sync."):
        if not info.name.removeprefix("mantyx_sync.").startswith(WIRE_MODULES):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra's module
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if is_wire_class(cls) and not inspect.isabstract(cls):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[name] for name in sorted(found)]


def _readable(cls: type[Any]) -> bool:
    # Classes the converter reads at all (some hold callables or handles).
    try:
        converter().get_structure_hook(cls)
    except Exception:
        return False
    return True


WIRE_CLASSES = [cls for cls in _wire_classes() if _readable(cls)]

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def _hints(cls: type[Any]) -> dict[str, Any]:
    attrs.resolve_types(cls)
    return {a.name: a.type for a in attrs.fields(cls)}


def _value_for(tp: Any, depth: int) -> st.SearchStrategy[Any]:
    """JSON of the field's type, or near it (ints for floats, strings of digits...)."""
    if tp is str:
        return st.text(max_size=5) | st.just("7")
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(-5, 5) | st.just(2.0) | st.just(True)
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers(-5, 5)
    if is_wire_class(tp):
        return _object_for(tp, depth + 1) if depth < 2 else st.just({})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is dict:
        return st.dictionaries(st.text(max_size=4), _json, max_size=3) | st.just({1: "x"})
    if origin in (list, tuple) and args:
        return st.lists(_value_for(args[0], depth + 1), max_size=2)
    if args:  # a union, a Literal...
        members = [a for a in args if not isinstance(a, (str, int))]
        literals = [a for a in args if isinstance(a, (str, int))]
        options = [_value_for(a, depth) for a in members if a is not type(None)]
        if literals:
            options.append(st.sampled_from(literals))
        return st.one_of(st.none(), *options) if options else _json
    return _json


@st.composite
def _object(draw: st.DrawFn, cls: type[Any], depth: int) -> dict[str, Any]:
    hints = _hints(cls)
    data: dict[str, Any] = {}
    for f in plan_of(cls).read_fields:
        if draw(st.integers(0, 4)) == 0:
            continue  # absent
        key = draw(st.sampled_from(f.keys))
        data[key] = draw(_value_for(hints[f.name], depth) | st.none() | _json)
    if draw(st.booleans()):
        data[draw(st.text(max_size=4))] = draw(_json)
    return data


def _object_for(cls: type[Any], depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    return _object(cls, depth)


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same exact types all the way down (``1 == 1.0`` is not enough)."""
    if type(a) is not type(b):
        return False
    if attrs.has(type(a)):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in attrs.fields(type(a)))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _check(cls: type[Any], data: Any) -> Any:
    """The plain value, checked against the converter's; ``UNUSUAL`` when it hands back."""
    plain = plan_of(cls).structure(data)
    if plain is UNUSUAL:
        return plain
    expected = converter().structure(data, cls)  # must not raise: the plain path built one
    assert _same(plain, expected), (plain, expected)
    written = plan_of(cls).unstructure(plain)
    if written is not UNUSUAL:
        assert _same(written, converter().unstructure(expected))
    return plain


def test_every_wire_class_is_checked() -> None:
    names = {cls.__name__ for cls in WIRE_CLASSES}
    assert {"LocalToolCall", "ResultPayload", "ErrorPayload", "TokenUsage", "ToolFiles"} <= names


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda cls: cls.__qualname__)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_plain_path_builds_what_the_converter_builds(
    cls: type[Any], data: st.DataObject
) -> None:
    _check(cls, data.draw(_object_for(cls)))


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda cls: cls.__qualname__)
def test_the_plain_path_writes_what_the_converter_writes(cls: type[Any]) -> None:
    try:
        value = cls()
    except TypeError:
        pytest.skip("no value without arguments")
    written = plan_of(cls).unstructure(value)
    if written is not UNUSUAL:
        assert _same(written, converter().unstructure(value))


class _Str(str):
    pass


# The shapes servers send for a local tool call (and a few they must not).
CALLS: list[dict[str, Any]] = [
    {"toolUseId": "tu", "name": "noop", "args": {}},
    {"toolUseId": "tu", "name": "noop", "args": {"a": [1, {"b": None}]}, "kind": "local"},
    {"toolUseId": "tu", "name": "noop", "args": {}, "kind": "a2a_local", "extra": 1},
    {"toolUseId": "", "name": "", "args": {}},
    {"toolUseId": "tu", "name": "noop", "args": {}, "kind": None},
    {"toolUseId": "tu", "name": "noop", "args": None, "input": {"p": 1}},
    {"toolUseId": "tu", "name": "noop", "args": {}, "input": {"p": 1}},
    {"tool_use_id": "tu", "name": "noop", "args": {}},
    {"toolUseId": None, "tool_use_id": "tu", "name": "noop", "args": {}},
    {"toolUseId": "tu", "name": "noop", "args": {}, "mcpServer": "fs", "kind": "mcp_local"},
    {"toolUseId": "tu", "name": "noop", "args": {}, "agentCard": None},
    {"toolUseId": "tu", "name": "r", "args": {}, "mcpToolName": "r", "mcpServerInfo": {}},
    {"toolUseId": _Str("tu"), "name": "noop", "args": {}},
    {"toolUseId": "tu", "name": "noop", "args": {1: "x"}},
    {"toolUseId": "tu", "name": "noop", "args": "{}"},
    {"toolUseId": 7, "name": "noop", "args": {}},
    {"toolUseId": "tu", "name": True, "args": {}},
    {"toolUseId": "tu", "name": "noop", "args": {}, "kind": 3},
    {"name": "noop", "args": {}},
]


@pytest.mark.parametrize("data", CALLS)
def test_a_local_call_reads_alike_both_ways(data: dict[str, Any]) -> None:
    plain = _check(LocalToolCall, data)
    if plain is not UNUSUAL:
        assert plain.raw is not data and plain.args is not data.get("args")


def test_the_documented_shapes_take_the_plain_path() -> None:
    # The round trip and a run's end never need cattrs for what servers send.
    for data in CALLS[:12]:
        assert _check(LocalToolCall, data) is not UNUSUAL, data
    result = {
        "subtype": "success",
        "ok": True,
        "text": "done",
        "tokens": {"inputTokens": 3, "outputTokens": 1},
        "turns": 1,
        "model": {"id": "m", "provider": "p"},
        "structuredOutput": {"schemaRequested": False},
        "plan": None,
    }
    built = structure_payload("result", result)
    assert _check(type(built), result) == built


def test_a_wrong_field_is_left_to_the_converter() -> None:
    for data in CALLS[12:]:
        assert plan_of(LocalToolCall).structure(data) is UNUSUAL, data


SPECS: list[dict[str, Any]] = [
    {"system_prompt": "s"},
    {"system_prompt": "s", "model_id": "openai/gpt-5.5", "name": "n", "reasoning_level": 40},
    {"agent_id": "ag_1", "budgets": {"maxToolTurns": 3}, "metadata": {"team": "a"}},
    {"system_prompt": "s", "loop_detection": False, "tool_budgets": {}},
    {"system_prompt": "s", "loop_detection": {"consecutiveThreshold": 2}},
    {"system_prompt": "s", "tool_budgets": {"search": 3, "fetch": {"maxCalls": 1}}},
    {"system_prompt": "s", "output_schema": {"type": "object", "properties": {}}},
    {"system_prompt": "s", "supervisor": True, "plan": "required", "fallback_model_id": "x/y"},
]


@pytest.mark.parametrize("keywords", SPECS)
def test_a_spec_body_is_written_alike_both_ways(keywords: dict[str, Any]) -> None:
    from mantyx_sync.spec import AgentSpec, MessageOverrides

    spec = AgentSpec.build(**keywords)
    assert _same(plan_of(AgentSpec).unstructure(spec), converter().unstructure(spec))
    overrides = {k: v for k, v in keywords.items() if k in MessageOverrides.__annotations__}
    message = MessageOverrides.build(**overrides)
    written = plan_of(MessageOverrides).unstructure(message)
    assert _same(written, converter().unstructure(message))


def test_a_number_too_large_for_a_float_is_left_to_the_converter() -> None:
    from mantyx_sync._models.wire import WireFormatError, structure
    from mantyx_sync.results import Pricing

    assert structure({"inputPer1MUsd": 3}, Pricing).input_per_1m_usd == 3.0
    with pytest.raises(WireFormatError, match="too large"):
        structure({"inputPer1MUsd": 10**400}, Pricing)
