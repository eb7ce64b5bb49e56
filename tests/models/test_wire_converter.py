"""The one converter: camelCase mapping, tolerant input, strict scalars, omitted None/UNSET."""

from __future__ import annotations

import json
from typing import Any

import attrs
import cattrs
import pytest

from mantyx_sync._models import convert
from mantyx_sync._models import wire as _wire
from mantyx_sync._models.wire import WireFormatError, camel, structure, unstructure
from mantyx_sync.errors import SpecError
from mantyx_sync.events import (
    AssistantDelta,
    AssistantMessage,
    LocalToolCall,
    ModelInfo,
    ResultPayload,
    TokenUsage,
)
from mantyx_sync.results import Model, ModelCatalog, Pricing
from mantyx_sync.spec import LoopDetection, MessageOverrides, ToolBudget
from mantyx_sync.types import UNSET


def test_private_converter_is_not_the_global_one() -> None:
    assert convert.converter() is not cattrs.global_converter
    # Our hooks must not leak into users' global converter.
    assert cattrs.global_converter.unstructure(TokenUsage(input_tokens=1)) == {
        "input_tokens": 1,
        "cached_tokens": 0,
        "reasoning_tokens": 0,
        "output_tokens": 0,
    }


def test_wire_values_and_tool_values_share_one_converter(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[cattrs.Converter] = []

    class Counted(cattrs.Converter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(cattrs, "Converter", Counted)
    for module in (convert, _wire):
        if hasattr(module, "_built"):
            monkeypatch.setattr(module, "_built", None)

    @attrs.frozen
    class Point:  # a tool's own attrs class: plain field names, not camelCase
        x_pos: int

    assert structure({"inputTokens": 3}, TokenUsage).input_tokens == 3
    assert convert.structurer_for(Point)({"x_pos": 2}) == Point(x_pos=2)
    assert convert.to_jsonable(Point(x_pos=2)) == {"x_pos": 2}
    assert len(built) == 1


@pytest.mark.parametrize(
    ("snake", "wire"),
    [("tool_use_id", "toolUseId"), ("id", "id"), ("mcp_server_info", "mcpServerInfo")],
)
def test_camel(snake: str, wire: str) -> None:
    assert camel(snake) == wire


def test_unstructure_is_camel_case_and_omits_none() -> None:
    assert unstructure(ModelInfo(id="openai/gpt-5.5", provider="openai")) == {
        "id": "openai/gpt-5.5",
        "provider": "openai",
    }
    assert unstructure(LoopDetection(consecutive_threshold=2)) == {"consecutiveThreshold": 2}


def test_unstructure_omits_unset_but_keeps_false_and_empty() -> None:
    assert unstructure(MessageOverrides()) == {}
    body = unstructure(MessageOverrides(loop_detection=False, tool_budgets={}))
    assert body == {"loopDetection": False, "toolBudgets": {}}
    assert UNSET not in body.values()


def test_explicit_wire_name_overrides_camel_case() -> None:
    pricing = Pricing(input_per_1m_usd=3.0, output_per_1m_usd=15.0, cache_read_per_1m_usd=0.3)
    wire = unstructure(pricing)
    assert wire == {"inputPer1MUsd": 3.0, "outputPer1MUsd": 15.0, "cacheReadPer1MUsd": 0.3}
    assert structure(wire, Pricing) == pricing


def test_tuples_become_lists() -> None:
    message = AssistantMessage(text="t", tool_calls=({"id": "c1"},))
    assert unstructure(message) == {"text": "t", "toolCalls": [{"id": "c1"}]}
    json.dumps(unstructure(message))


def test_round_trip_nested() -> None:
    catalog = ModelCatalog(
        models=(
            Model(id="a/b", label="A", pricing=Pricing(input_per_1m_usd=1.0)),
            Model(id="c", context_window_tokens=1000),
        ),
        default_model_id="a/b",
    )
    assert structure(json.loads(json.dumps(unstructure(catalog))), ModelCatalog) == catalog


@pytest.mark.parametrize(
    "value",
    [
        TokenUsage(),
        TokenUsage(input_tokens=10**9, cached_tokens=7, reasoning_tokens=0, output_tokens=1),
        ModelInfo(),
        ModelInfo(id="openai/gpt-5.5", provider="openai", vendor_model_id="gpt-5.5"),
        ModelInfo(id="x", provider="p", vendor_model_id="v", reasoning_effort="high"),
        AssistantMessage(text="", turn=0, finish_reason="end_turn", tool_calls=({"a": [1]},)),
        LoopDetection(consecutive_threshold=2, hard_cutoff_threshold=3),
        ToolBudget(max_calls=0),
    ],
)
def test_round_trip(value: Any) -> None:
    wire = json.loads(json.dumps(unstructure(value)))
    assert structure(wire, type(value)) == value


def test_raw_field_gets_whole_input_and_is_never_written() -> None:
    data = {"toolUseId": "tu", "name": "n", "args": {}, "future": 1}
    call = structure(data, LocalToolCall)
    assert call.raw == data
    assert "raw" not in unstructure(call)
    assert structure(unstructure(call), LocalToolCall) == attrs.evolve(call, raw=unstructure(call))


def test_unknown_keys_are_tolerated() -> None:
    assert structure({"text": "x", "brandNew": {"a": 1}}, AssistantDelta) == AssistantDelta(
        text="x"
    )


def test_null_for_defaulted_field_means_default() -> None:
    message = structure({"text": "t", "toolCalls": None, "turn": None}, AssistantMessage)
    assert message.tool_calls == ()
    assert message.turn is None
    call = structure({"toolUseId": "t", "name": "n", "kind": None, "args": None}, LocalToolCall)
    assert call.kind == "local"
    assert call.args == {}


def test_snake_case_keys_accepted_on_input() -> None:
    assert structure({"input_tokens": 5}, TokenUsage).input_tokens == 5


@pytest.mark.parametrize(
    ("data", "cls", "where"),
    [
        ({"text": 5}, AssistantDelta, "$.text"),
        ({"tokens": {"inputTokens": "x"}}, ResultPayload, "$.tokens.inputTokens"),
        ({"turns": True}, ResultPayload, "$.turns"),
        ({"turns": 1.5}, ResultPayload, "$.turns"),
        ({"ok": "yes"}, ResultPayload, "$.ok"),
        ([1, 2], AssistantDelta, "$"),
    ],
)
def test_scalars_are_checked_not_coerced(data: Any, cls: type[Any], where: str) -> None:
    with pytest.raises(WireFormatError) as info:
        structure(data, cls)
    assert where in str(info.value)
    assert isinstance(info.value, ValueError)


def test_json_numbers() -> None:
    assert structure({"turns": 2.0}, ResultPayload).turns == 2
    assert structure({"inputPer1MUsd": 3}, Pricing).input_per_1m_usd == 3.0
    assert isinstance(structure({"inputPer1MUsd": 3}, Pricing).input_per_1m_usd, float)


def test_required_field_missing() -> None:
    with pytest.raises(WireFormatError, match=r"required field missing @ \$\.toolUseId"):
        structure({"name": "n"}, LocalToolCall)


def test_structure_with_a_path_rejects_unknown_keys_with_path() -> None:
    with pytest.raises(SpecError) as info:
        structure({"maxCall": 3}, ToolBudget, path="tool_budgets['x']")
    assert info.value.path == "tool_budgets['x']"
    assert "'maxCall' (expected: max_calls)" in str(info.value)


def test_structure_with_a_path_type_error_has_python_path() -> None:
    # The caller's value is named as Python spells it, whichever key style it used.
    for key in ("max_calls", "maxCalls"):
        with pytest.raises(SpecError) as info:
            structure({key: "3"}, ToolBudget, path="tool_budgets['x']")
        assert info.value.path == "tool_budgets['x'].max_calls"
    assert "expected int, got str" in str(info.value)


def test_structure_with_a_path_needs_a_mapping() -> None:
    with pytest.raises(SpecError, match="expected an object, got list"):
        structure([1], ToolBudget, path="toolBudgets['x']")
