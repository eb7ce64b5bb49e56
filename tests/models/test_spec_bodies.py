"""Request bodies: camelCase, UNSET vs None vs False vs {}, replace(), message overrides."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from mantyx_sync import MantyxTool
from mantyx_sync.errors import SpecError
from mantyx_sync.spec import (
    AgentSpec,
    LoopDetection,
    MessageOverrides,
    OutputSchema,
    ToolBudget,
)
from mantyx_sync.types import UNSET

REFS = [{"kind": "mantyx", "id": "tool_1"}]


def test_full_body_is_camel_case() -> None:
    spec = AgentSpec.build(
        name="ephemeral",
        agent_id="agent_1",
        system_prompt="You help.",
        model_id="openai/gpt-5.5",
        reasoning_level="medium",
        tools=[MantyxTool("tool_1")],
        budgets={"maxToolTurns": 32},
        output_schema={"name": "report", "schema": {"type": "object"}},
        loop_detection={"consecutive_threshold": 3, "hard_cutoff_threshold": 6},
        tool_budgets={"recall": 4},
        metadata={"customer": "acme"},
    )
    body = spec.to_body(REFS)
    assert body == {
        "name": "ephemeral",
        "agentId": "agent_1",
        "systemPrompt": "You help.",
        "modelId": "openai/gpt-5.5",
        "reasoningLevel": "medium",
        "tools": REFS,
        "budgets": {"maxToolTurns": 32},
        "outputSchema": {"schema": {"type": "object"}, "name": "report"},
        "loopDetection": {"consecutiveThreshold": 3, "hardCutoffThreshold": 6},
        "toolBudgets": {"recall": {"maxCalls": 4}},
        "metadata": {"customer": "acme"},
    }
    assert json.loads(json.dumps(body)) == body


def test_minimal_body_omits_none_and_unset() -> None:
    body = AgentSpec.build(system_prompt="p").to_body([])
    assert body == {"systemPrompt": "p", "tools": []}


def test_loop_detection_false_is_sent() -> None:
    body = AgentSpec.build(system_prompt="p", loop_detection=False).to_body([])
    assert body["loopDetection"] is False


def test_empty_loop_detection_object_is_sent() -> None:
    body = AgentSpec.build(system_prompt="p", loop_detection=LoopDetection()).to_body([])
    assert body["loopDetection"] == {}


def test_empty_tool_budgets_is_sent() -> None:
    spec = AgentSpec.build(system_prompt="p", tool_budgets={})
    assert spec.tool_budgets == {}
    assert spec.to_body([])["toolBudgets"] == {}


@pytest.mark.parametrize("value", [UNSET, None])
def test_unset_and_none_guards_are_omitted(value: Any) -> None:
    body = AgentSpec.build(system_prompt="p", loop_detection=value, tool_budgets=value).to_body([])
    assert "loopDetection" not in body and "toolBudgets" not in body


def test_reasoning_level_zero_is_sent() -> None:
    assert AgentSpec.build(system_prompt="p", reasoning_level=0).to_body([])["reasoningLevel"] == 0


def test_bare_schema_becomes_wire_shape() -> None:
    spec = AgentSpec.build(system_prompt="p", output_schema={"type": "object"})
    assert spec.output_schema == OutputSchema(schema={"type": "object"})
    assert spec.to_body([])["outputSchema"] == {"schema": {"type": "object"}}


def test_output_schema_shapes() -> None:
    as_value = OutputSchema(schema={"type": "object"}, name="n")
    assert OutputSchema.coerce(as_value) is as_value
    assert OutputSchema.coerce({"schema": {"type": "object"}, "name": "n"}) == as_value
    strict = OutputSchema.coerce({"schema": {"type": "object"}, "enforcement": "strict"})
    assert strict.enforcement == "strict"


def test_spec_is_frozen_and_copies_inputs() -> None:
    metadata = {"k": "v"}
    spec = AgentSpec.build(system_prompt="p", metadata=metadata)
    metadata["k"] = "changed"
    assert spec.metadata == {"k": "v"}
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        spec.name = "x"  # type: ignore[misc]


def test_replace_validates() -> None:
    spec = AgentSpec.build(system_prompt="p", tool_budgets={"a": 1}, loop_detection=False)
    changed = spec.replace(model_id="m", reasoning_level="low")
    assert (changed.model_id, changed.reasoning_level) == ("m", "low")
    assert changed.tool_budgets == {"a": ToolBudget(max_calls=1)}
    assert changed.loop_detection is False
    assert spec.model_id is None
    with pytest.raises(SpecError) as info:
        spec.replace(reasoning_level="extreme")
    assert info.value.path == "reasoning_level"
    assert not spec.replace(system_prompt=None).instructed


def test_replace_unknown_field() -> None:
    with pytest.raises(SpecError, match="unknown spec field"):
        AgentSpec.build(system_prompt="p").replace(sytem_prompt="x")


def test_replace_can_unset_guards() -> None:
    spec = AgentSpec.build(system_prompt="p", loop_detection=False, tool_budgets={})
    cleared = spec.replace(loop_detection=UNSET, tool_budgets=UNSET)
    assert cleared.to_body([]) == {"systemPrompt": "p", "tools": []}


# -- MessageOverrides -------------------------------------------------------


def test_overrides_empty() -> None:
    assert MessageOverrides.build().to_body(None) == {}


def test_overrides_only_set_fields() -> None:
    overrides = MessageOverrides.build(
        reasoning_level=20,
        output_schema={"type": "object"},
        loop_detection=False,
        tool_budgets={},
        metadata={"turn": "2"},
    )
    assert overrides.to_body(None) == {
        "reasoningLevel": 20,
        "outputSchema": {"schema": {"type": "object"}},
        "loopDetection": False,
        "toolBudgets": {},
        "metadata": {"turn": "2"},
    }


def test_overrides_tools_only_with_refs() -> None:
    overrides = MessageOverrides.build(tools=[MantyxTool("tool_1")])
    assert overrides.tools == (MantyxTool("tool_1"),)
    assert "tools" not in overrides.to_body(None)
    assert overrides.to_body(REFS) == {"tools": REFS}
    assert MessageOverrides.build().to_body([]) == {"tools": []}


def test_overrides_none_is_not_sent() -> None:
    overrides = MessageOverrides.build(
        tools=None, reasoning_level=None, output_schema=None, metadata=None, tool_budgets=None
    )
    assert overrides == MessageOverrides()
    assert overrides.to_body(None) == {}


@pytest.mark.parametrize(
    ("kw", "path"),
    [
        ({"reasoning_level": 101}, "reasoning_level"),
        ({"output_schema": {"type": "array"}}, "output_schema.schema.type"),
        ({"loop_detection": {"consecutiveThreshold": 1}}, "loop_detection.consecutive_threshold"),
        ({"tool_budgets": {"x": 1001}}, "tool_budgets['x'].max_calls"),
        ({"metadata": {"k": 1}}, "metadata['k']"),
        ({"tools": [object()]}, "tools[0]"),
    ],
)
def test_overrides_validate_like_spec(kw: dict[str, Any], path: str) -> None:
    with pytest.raises(SpecError) as info:
        MessageOverrides.build(**kw)
    assert info.value.path == path
