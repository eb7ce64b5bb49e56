"""Every documented spec limit, at the boundary and one past it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from mantyx_sync import (
    A2ATool,
    Agent,
    Client,
    MantyxTool,
    McpTool,
    PluginTool,
    ToolConnection,
    define_local_a2a,
    define_local_mcp,
)
from mantyx_sync._base.limits import (
    HEADER_VALUE_MAX_BYTES,
    METADATA_MAX_BYTES,
    OUTPUT_SCHEMA_MAX_BYTES,
)
from mantyx_sync._models.checks import validate_tool_refs
from mantyx_sync.errors import SpecError
from mantyx_sync.messages import turn_input
from mantyx_sync.spec import AgentSpec, LoopDetection, MessageOverrides, OutputSchema, ToolBudget
from mantyx_sync.types import UNSET


def build(**kw: Any) -> AgentSpec:
    kw.setdefault("system_prompt", "You help.")
    return AgentSpec.build(**kw)


def compact_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


# -- system_prompt / agent_id -----------------------------------------------


def test_a_spec_without_instructions_builds_but_cannot_open_a_session() -> None:
    # NEWER item 3: a run may take its instructions from a system message, so the
    # spec alone is not refused; a session is created before any message, so it is.
    spec = AgentSpec.build(model_id="m")
    assert (spec.system_prompt, spec.agent_id, spec.instructed) == (None, None, False)
    assert AgentSpec.build(system_prompt="p").instructed
    assert AgentSpec.build(agent_id="agent_1").instructed
    with pytest.raises(SpecError) as info:
        spec.check_session()
    assert info.value.path == "system_prompt"
    assert "agent_id" in str(info.value) and "session" in str(info.value)
    AgentSpec.build(agent_id="agent_1").check_session()


def test_agent_id_alone_is_enough() -> None:
    assert AgentSpec.build(agent_id="agent_1").agent_id == "agent_1"
    both = AgentSpec.build(agent_id="agent_1", system_prompt="p")
    assert (both.agent_id, both.system_prompt) == ("agent_1", "p")


@pytest.mark.parametrize(
    ("kw", "path"),
    [
        ({"system_prompt": ""}, "system_prompt"),
        ({"system_prompt": 3}, "system_prompt"),
        ({"agent_id": "", "system_prompt": "p"}, "agent_id"),
        ({"model_id": "", "system_prompt": "p"}, "model_id"),
        ({"name": 5, "system_prompt": "p"}, "name"),
    ],
)
def test_text_fields(kw: dict[str, Any], path: str) -> None:
    with pytest.raises(SpecError) as info:
        AgentSpec.build(**kw)
    assert info.value.path == path


# -- output_schema ----------------------------------------------------------


@pytest.mark.parametrize("name", ["a" * 64, "weather_report", "a-b_C9", "x"])
def test_output_schema_name_ok(name: str) -> None:
    assert OutputSchema.coerce({"schema": {"type": "object"}, "name": name}).name == name


@pytest.mark.parametrize("name", ["a" * 65, "", "has space", "dot.name", 7])
def test_output_schema_name_bad(name: Any) -> None:
    with pytest.raises(SpecError) as info:
        OutputSchema.coerce({"schema": {"type": "object"}, "name": name})
    assert info.value.path in ("output_schema.name",)


@pytest.mark.parametrize("schema", [[{"type": "object"}], None, "object", 3])
def test_output_schema_must_be_an_object(schema: Any) -> None:
    with pytest.raises(SpecError) as info:
        OutputSchema.coerce({"schema": schema})
    assert info.value.path == "output_schema.schema"


@pytest.mark.parametrize("root", ["array", "string", ["object", "null"]])
def test_output_schema_root_must_be_object(root: Any) -> None:
    with pytest.raises(SpecError, match="JSON object") as info:
        OutputSchema.coerce({"type": root})
    assert info.value.path == "output_schema.schema.type"


def test_output_schema_without_type_is_accepted() -> None:
    assert OutputSchema.coerce({"properties": {"a": {}}}).schema == {"properties": {"a": {}}}


def _schema_of_size(total: int) -> dict[str, Any]:
    base = {"type": "object", "description": ""}
    overhead = compact_size({"schema": base})
    return {"type": "object", "description": "x" * (total - overhead)}


def test_output_schema_size_boundary() -> None:
    at_limit = _schema_of_size(OUTPUT_SCHEMA_MAX_BYTES)
    assert compact_size({"schema": at_limit}) == OUTPUT_SCHEMA_MAX_BYTES
    OutputSchema.coerce(at_limit)
    with pytest.raises(SpecError, match=f"{OUTPUT_SCHEMA_MAX_BYTES + 1} bytes") as info:
        OutputSchema.coerce(_schema_of_size(OUTPUT_SCHEMA_MAX_BYTES + 1))
    assert info.value.path == "output_schema"


def test_output_schema_must_be_json() -> None:
    with pytest.raises(SpecError, match="JSON-serializable"):
        OutputSchema.coerce({"type": "object", "enum": {1, 2}})


def test_output_schema_unknown_key_rejected() -> None:
    with pytest.raises(SpecError, match="unknown key 'nmae'"):
        OutputSchema.coerce({"schema": {"type": "object"}, "nmae": "x"})


def test_output_schema_wrong_type() -> None:
    with pytest.raises(SpecError, match="got list"):
        OutputSchema.coerce([{"type": "object"}])


# -- loop_detection ---------------------------------------------------------


@pytest.mark.parametrize(
    ("consecutive", "hard"),
    [(2, None), (5, None), (None, 4), (None, 100), (2, 3), (99, 100), (None, None)],
)
def test_loop_detection_ok(consecutive: int | None, hard: int | None) -> None:
    value = LoopDetection.coerce({"consecutiveThreshold": consecutive, "hardCutoffThreshold": hard})
    assert value == LoopDetection(consecutive_threshold=consecutive, hard_cutoff_threshold=hard)


@pytest.mark.parametrize(
    ("consecutive", "hard", "path", "match"),
    [
        (1, None, "consecutive_threshold", "between 2 and 100"),
        (101, 200, "consecutive_threshold", "between 2 and 100"),
        (None, 2, "hard_cutoff_threshold", "between 3 and 100"),
        (2, 101, "hard_cutoff_threshold", "between 3 and 100"),
        (5, 5, "hard_cutoff_threshold", "greater than consecutive_threshold"),
        (7, 6, "hard_cutoff_threshold", "greater than consecutive_threshold"),
        (6, None, "consecutive_threshold", "default hard_cutoff_threshold"),
        (None, 3, "hard_cutoff_threshold", "default consecutive_threshold"),
        (100, None, "consecutive_threshold", "default hard_cutoff_threshold"),
        (True, None, "consecutive_threshold", "integer"),
        (3.0, None, "consecutive_threshold", "integer"),
    ],
)
def test_loop_detection_bad(consecutive: Any, hard: Any, path: str, match: str) -> None:
    with pytest.raises(SpecError, match=match) as info:
        LoopDetection.coerce(
            LoopDetection(consecutive_threshold=consecutive, hard_cutoff_threshold=hard)
        )
    assert info.value.path == f"loop_detection.{path}"


def test_loop_detection_shapes() -> None:
    assert LoopDetection.coerce(False) is False
    expected = LoopDetection(consecutive_threshold=2, hard_cutoff_threshold=4)
    assert LoopDetection.coerce({"consecutive_threshold": 2, "hard_cutoff_threshold": 4}) == (
        expected
    )
    assert LoopDetection.coerce({"consecutiveThreshold": 2, "hardCutoffThreshold": 4}) == expected
    assert LoopDetection.coerce(expected) is expected


@pytest.mark.parametrize("value", [True, 3, "off", [2, 4]])
def test_loop_detection_wrong_type(value: Any) -> None:
    with pytest.raises(SpecError) as info:
        build(loop_detection=value)
    assert info.value.path == "loop_detection"


def test_loop_detection_string_threshold_rejected() -> None:
    with pytest.raises(SpecError, match="expected int, got str") as info:
        build(loop_detection={"consecutiveThreshold": "3"})
    assert info.value.path == "loop_detection.consecutive_threshold"


def test_loop_detection_none_means_unset() -> None:
    assert build(loop_detection=None).loop_detection is UNSET


# -- tool_budgets -----------------------------------------------------------


def test_tool_budget_entry_count_boundary() -> None:
    budgets = build(tool_budgets={f"t{i}": 1 for i in range(32)}).tool_budgets
    assert isinstance(budgets, dict) and len(budgets) == 32
    with pytest.raises(SpecError, match="33 entries") as info:
        build(tool_budgets={f"t{i}": 1 for i in range(33)})
    assert info.value.path == "tool_budgets"


@pytest.mark.parametrize("key", ["k" * 120, "k", "hive/search.deals"])
def test_tool_budget_key_ok(key: str) -> None:
    assert key in build(tool_budgets={key: 1}).tool_budgets  # type: ignore[operator]


@pytest.mark.parametrize("key", ["k" * 121, "", 3])
def test_tool_budget_key_bad(key: Any) -> None:
    with pytest.raises(SpecError, match="1-120 characters"):
        build(tool_budgets={key: 1})


@pytest.mark.parametrize("n", [0, 1, 1000])
def test_tool_budget_calls_ok(n: int) -> None:
    assert build(tool_budgets={"recall": n}).tool_budgets == {"recall": ToolBudget(max_calls=n)}


@pytest.mark.parametrize("n", [-1, 1001, True, False, 2.0, "3", None])
def test_tool_budget_calls_bad(n: Any) -> None:
    with pytest.raises(SpecError) as info:
        build(tool_budgets={"recall": n})
    assert info.value.path in ("tool_budgets['recall']", "tool_budgets['recall'].max_calls")


@pytest.mark.parametrize("n", [-1, 1001, True])
def test_tool_budget_calls_bad_in_object(n: Any) -> None:
    with pytest.raises(SpecError) as info:
        build(tool_budgets={"recall": {"maxCalls": n}})
    assert info.value.path == "tool_budgets['recall'].max_calls"


def test_tool_budget_shapes() -> None:
    spec = build(
        tool_budgets={
            "a": 1,
            "b": {"maxCalls": 2},
            "c": {"max_calls": 3},
            "d": ToolBudget(max_calls=4),
        }
    )
    assert spec.tool_budgets == {
        "a": ToolBudget(max_calls=1),
        "b": ToolBudget(max_calls=2),
        "c": ToolBudget(max_calls=3),
        "d": ToolBudget(max_calls=4),
    }


def test_tool_budgets_must_be_a_mapping() -> None:
    with pytest.raises(SpecError, match="mapping"):
        build(tool_budgets=[("a", 1)])


# -- metadata ---------------------------------------------------------------


def _metadata_of_size(total: int) -> dict[str, str]:
    meta = {f"k{i:02d}": "v" * 256 for i in range(16)}
    excess = compact_size(meta) - total
    meta["k15"] = "v" * (256 - excess)
    return meta


def test_metadata_size_boundary() -> None:
    at_limit = _metadata_of_size(METADATA_MAX_BYTES)
    assert compact_size(at_limit) == METADATA_MAX_BYTES
    assert build(metadata=at_limit).metadata == at_limit
    with pytest.raises(SpecError, match=f"{METADATA_MAX_BYTES + 1} bytes"):
        build(metadata=_metadata_of_size(METADATA_MAX_BYTES + 1))


def test_metadata_entry_boundary() -> None:
    build(metadata={f"k{i}": "v" for i in range(16)})
    with pytest.raises(SpecError, match="17 entries"):
        build(metadata={f"k{i}": "v" for i in range(17)})


@pytest.mark.parametrize("key", ["k" * 64, "trace.id", "env-1", "A_b"])
def test_metadata_key_ok(key: str) -> None:
    build(metadata={key: "v"})


@pytest.mark.parametrize("key", ["k" * 65, "", "has space", "a/b", 1])
def test_metadata_key_bad(key: Any) -> None:
    with pytest.raises(SpecError, match="key") as info:
        build(metadata={key: "v"})
    assert info.value.path == "metadata"


def test_metadata_value_boundary() -> None:
    build(metadata={"k": "v" * 256})
    with pytest.raises(SpecError, match="257 characters") as info:
        build(metadata={"k": "v" * 257})
    assert info.value.path == "metadata['k']"


@pytest.mark.parametrize("value", [1, None, True, ["a"]])
def test_metadata_value_must_be_string(value: Any) -> None:
    with pytest.raises(SpecError, match="must be a string"):
        build(metadata={"k": value})


# -- reasoning_level --------------------------------------------------------


@pytest.mark.parametrize("level", ["off", "low", "medium", "high", 0, 1, 50, 100])
def test_reasoning_level_ok(level: str | int) -> None:
    assert build(reasoning_level=level).reasoning_level == level


@pytest.mark.parametrize("level", ["max", "HIGH", -1, 101, True, 50.0, [50]])
def test_reasoning_level_bad(level: Any) -> None:
    with pytest.raises(SpecError) as info:
        build(reasoning_level=level)
    assert info.value.path == "reasoning_level"


# -- budgets ----------------------------------------------------------------


def test_budgets_passthrough() -> None:
    budgets = {"maxToolTurns": 1, "maxToolTurnsExceeded": "finalize"}
    assert build(budgets=budgets).budgets == budgets


@pytest.mark.parametrize("turns", [0, -3, True, "3", 2.5])
def test_budgets_max_tool_turns_positive_int(turns: Any) -> None:
    with pytest.raises(SpecError) as info:
        build(budgets={"maxToolTurns": turns})
    assert info.value.path == "budgets['maxToolTurns']"


# -- tools ------------------------------------------------------------------


class FakeClientTool:
    kind = "mcp_local"
    name = "fs"

    def connect(self) -> ToolConnection:
        raise NotImplementedError


class HasToWire:
    def to_wire(self) -> dict[str, Any]:
        return {"kind": "local", "name": "x"}


def test_tools_accepted() -> None:
    tools = [
        MantyxTool("tool_1"),
        PluginTool("web_search"),
        A2ATool("peer", "https://p/.well-known/agent-card.json"),
        McpTool("gh", "https://mcp"),
        HasToWire(),
        FakeClientTool(),
    ]
    assert build(tools=tools).tools == tuple(tools)


@pytest.mark.parametrize(
    ("bad", "type_name"),
    [({"kind": "mantyx", "id": "x"}, "dict"), ("web_search", "str"), (42, "int")],
)
def test_tools_rejected_with_index_and_type(bad: Any, type_name: str) -> None:
    with pytest.raises(SpecError, match=type_name) as info:
        build(tools=[MantyxTool("ok"), bad])
    assert info.value.path == "tools[1]"


def test_tools_must_be_a_list() -> None:
    with pytest.raises(SpecError, match="list of tools") as info:
        build(tools=MantyxTool("x"))
    assert info.value.path == "tools"


# -- turn input -------------------------------------------------------------


def test_turn_input_prompt() -> None:
    assert turn_input(prompt="Hi") == {"prompt": "Hi"}
    assert turn_input("Hi") == {"prompt": "Hi"}


def test_turn_input_messages() -> None:
    got = turn_input(
        messages=[
            {"role": "system", "content": "Be brief."},
            ("user", "Hi"),
            {"role": "assistant", "content": "Hello"},
            {
                "role": "user",
                "content": "Bye",
                "attachments": [{"type": "input_file_url", "url": "https://x.test/a.pdf"}],
            },
        ]
    )
    assert got == {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {
                "role": "user",
                "content": "Bye",
                "attachments": [{"type": "input_file_url", "url": "https://x.test/a.pdf"}],
            },
        ]
    }


def test_turn_input_both_or_neither() -> None:
    with pytest.raises(SpecError, match="pass prompt or messages, not both"):
        turn_input(prompt="a", messages=[("user", "b")])
    with pytest.raises(SpecError, match="pass prompt or messages"):
        turn_input()


@pytest.mark.parametrize(
    ("kw", "path"),
    [
        ({"prompt": ""}, "prompt"),
        ({"prompt": "   "}, "prompt"),
        ({"prompt": 5}, "prompt"),
        ({"messages": []}, "messages"),
        ({"messages": "hi"}, "messages"),
        ({"messages": {"role": "user", "content": "x"}}, "messages"),
        ({"messages": [("bot", "x")]}, "messages[0].role"),
        ({"messages": [{"content": "x"}]}, "messages[0].role"),
        ({"messages": [("user", "ok"), {"role": "user", "content": 3}]}, "messages[1].content"),
        ({"messages": [("user", "a", "b")]}, "messages[0]"),
        ({"messages": ["hi"]}, "messages[0]"),
    ],
)
def test_turn_input_bad(kw: dict[str, Any], path: str) -> None:
    with pytest.raises(SpecError) as info:
        turn_input(**kw)
    assert info.value.path == path


# -- validate_tool_refs -----------------------------------------------------


def local(name: Any) -> dict[str, Any]:
    return {"kind": "local", "name": name, "parameters": {"type": "object"}}


def mcp_local(label: str, *names: Any) -> dict[str, Any]:
    return {"kind": "mcp_local", "name": label, "tools": [{"name": n} for n in names]}


def check(refs: Sequence[Mapping[str, Any]]) -> SpecError:
    with pytest.raises(SpecError) as info:
        validate_tool_refs(refs)
    return info.value


def test_valid_refs() -> None:
    validate_tool_refs(
        [
            {"kind": "mantyx", "id": "tool_1"},
            {"kind": "mantyx_plugin", "name": "web_search"},
            local("a" * 64),
            {"kind": "a2a", "name": "peer", "agentCardUrl": "https://x", "headers": {"A": "b"}},
            {"kind": "a2a_local", "name": "hr", "agentCard": {"name": "HR"}},
            {"kind": "mcp", "name": "fs", "url": "https://mcp"},
            mcp_local("fs", "fs_read_file", "fs_write_file"),
            local("fs"),  # a remote mcp server label never collides: its tools are fs_*
        ]
    )


@pytest.mark.parametrize("name", ["a" * 65, "", "has-dash", "sp ace", None, 3])
def test_local_name_rules(name: Any) -> None:
    assert check([local(name)]).path == "tools[0].name"


def test_mcp_local_tool_name_rule_path() -> None:
    error = check([local("a"), local("b"), mcp_local("fs", "fs/read")])
    assert error.path == "tools[2].tools[0].name"


def test_mcp_local_label_rule() -> None:
    assert check([mcp_local("my-fs", "read")]).path == "tools[0].name"


def test_remote_mcp_label_rule() -> None:
    assert check([{"kind": "mcp", "name": "git hub", "url": "u"}]).path == "tools[0].name"


@pytest.mark.parametrize(
    ("refs", "path"),
    [
        ([local("x"), local("x")], "tools[1].name"),
        ([local("x"), mcp_local("fs", "y", "x")], "tools[1].tools[1].name"),
        ([mcp_local("fs", "x", "x")], "tools[0].tools[1].name"),
        ([mcp_local("a", "x"), mcp_local("b", "x")], "tools[1].tools[0].name"),
        (
            [
                {"kind": "a2a", "name": "peer", "agentCardUrl": "u"},
                {"kind": "a2a_local", "name": "peer", "agentCard": {}},
            ],
            "tools[1].name",
        ),
        ([{"kind": "a2a_local", "name": "x", "agentCard": {}}, local("x")], "tools[1].name"),
    ],
)
def test_duplicate_names(refs: list[dict[str, Any]], path: str) -> None:
    error = check(refs)
    assert error.path == path
    assert "already used" in str(error)


def test_duplicate_mcp_local_labels() -> None:
    error = check([mcp_local("fs", "a"), mcp_local("fs", "b")])
    assert error.path == "tools[1].name"


def test_mcp_local_tool_count_boundary() -> None:
    validate_tool_refs([mcp_local("fs", "t0")])
    validate_tool_refs([mcp_local("fs", *[f"t{i}" for i in range(64)])])
    assert check([mcp_local("fs", *[f"t{i}" for i in range(65)])]).path == "tools[0].tools"
    assert check([mcp_local("fs")]).path == "tools[0].tools"
    assert check([{"kind": "mcp_local", "name": "fs"}]).path == "tools[0].tools"


@pytest.mark.parametrize("kind", ["a2a", "mcp"])
def test_header_value_size_boundary(kind: str) -> None:
    ref: dict[str, Any] = {"kind": kind, "name": "srv", "url": "u", "agentCardUrl": "u"}
    secret = "s" * HEADER_VALUE_MAX_BYTES
    validate_tool_refs([{**ref, "headers": {"Authorization": secret}}])
    too_big = "S" * (HEADER_VALUE_MAX_BYTES + 1)
    error = check([{**ref, "headers": {"Authorization": too_big}}])
    assert error.path == "tools[0].headers"
    assert "Authorization" in str(error)
    assert too_big not in str(error) and "SSS" not in str(error)


def test_header_value_multibyte_counts_bytes() -> None:
    value = "é" * (HEADER_VALUE_MAX_BYTES // 2 + 1)  # 2 bytes each
    ref = {"kind": "mcp", "name": "srv", "url": "u", "headers": {"X-Key": value}}
    assert check([ref]).path == "tools[0].headers"


def test_header_value_must_be_string_and_is_not_shown() -> None:
    ref = {"kind": "a2a", "name": "p", "agentCardUrl": "u", "headers": {"X-Token": 12345}}
    error = check([ref])
    assert "12345" not in str(error)
    assert error.path == "tools[0].headers"


def test_ref_must_be_object() -> None:
    assert check(["local"]).path == "tools[0]"  # type: ignore[list-item]


# -- checked when built: what validate_tool_refs can know before connecting ----


def _named(name: str) -> Any:
    def handler(text: str) -> str:
        """Echo the text."""
        return text

    handler.__name__ = name
    return handler


@pytest.mark.parametrize(
    ("tools", "path", "message"),
    [
        ([_named("add"), _named("add")], "tools[1].name", "'add' is already used by tools[0]"),
        (
            [A2ATool("add", "https://peer"), _named("add")],
            "tools[1].name",
            "'add' is already used by tools[0]",
        ),
        (
            [_named("hr"), define_local_a2a("hr", url="http://127.0.0.1:9")],
            "tools[1].name",
            "'hr' is already used by tools[0]",
        ),
        (
            [define_local_mcp("fs", command="x"), define_local_mcp("fs", command="y")],
            "tools[1].name",
            "label 'fs' is already used",
        ),
        ([A2ATool("my peer", "https://peer")], "tools[0].name", "must be 1-64 characters"),
        (
            [McpTool("fs", "https://mcp", headers={"A": "s" * (HEADER_VALUE_MAX_BYTES + 1)})],
            "tools[0].headers",
            "the limit is",
        ),
    ],
)
def test_what_is_known_of_the_tools_fails_when_the_agent_is_built(
    tools: list[Any], path: str, message: str
) -> None:
    # Nothing to connect or send: the clash is reported where the spec is written.
    client = Client("mantyx_k", workspace="w", base_url="http://127.0.0.1:9")
    with pytest.raises(SpecError) as info:
        Agent(client, system_prompt="x", tools=tools)
    assert (info.value.path, message in str(info.value)) == (path, True), str(info.value)
    agent = Agent(client, system_prompt="x")
    with pytest.raises(SpecError):  # a session message's own tools, and spec.replace alike
        agent.spec.replace(tools=tools)
    with pytest.raises(SpecError):
        MessageOverrides.build(tools=tools)


def test_an_mcp_servers_tools_are_checked_once_it_is_reached() -> None:
    # Before connecting only its label is known: two servers may each offer a
    # tool of the same name; that clash is found when the run starts.
    validate_tool_refs([{"kind": "mcp_local", "name": "fs"}], connected=False)
    assert check([{"kind": "mcp_local", "name": "fs"}]).path == "tools[0].tools"
