"""define_local_mcp validation, naming, result flattening, and bring-your-own catalogs."""

from __future__ import annotations

from typing import Any

import pytest
from peerkit import tool_call

from mantyx_sync._peers.mcp.client import flatten_call_result
from mantyx_sync.errors import SpecError, ToolError, ToolResolutionError
from mantyx_sync.mcp import LocalMcp, define_local_mcp, model_names
from mantyx_sync.tools import ClientResolvedTool, ToolConnection


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"command": "x", "url": "http://h/mcp"},
        {"url": "http://h/mcp", "catalog": [{"name": "a"}], "call": lambda n, a: ""},
        {"catalog": [{"name": "a"}]},
        {"command": "x", "call": lambda n, a: ""},
        {"url": "ftp://h/mcp"},
        {"command": "x", "headers": {"A": "b"}},
        {"url": "http://h/mcp", "env": {"A": "b"}},
        {"url": "http://h/mcp", "headers": {"Authorization": "x" * 9000}},
        {"command": "x", "args": "--flag"},
        {"command": "x", "timeout": 0},
        {"command": "x", "tool_filter": "one"},
    ],
)
def test_bad_combinations_raise_spec_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(SpecError):
        define_local_mcp("srv", **kwargs)


@pytest.mark.parametrize("name", ["", "has-dash", "x" * 65, "sp ace"])
def test_bad_names_raise_spec_error(name: str) -> None:
    with pytest.raises(SpecError, match="must match"):
        define_local_mcp(name, command="x")


def test_definition_is_frozen_and_repr_hides_secrets() -> None:
    http = define_local_mcp(
        "srv", url="http://h/mcp", headers={"Authorization": "Bearer s3cr3t-tok"}
    )
    stdio = define_local_mcp("srv", command="srv-bin", env={"API_TOKEN": "hunter2-value"})
    assert "s3cr3t" not in repr(http)
    assert "hunter2" not in repr(stdio)
    assert isinstance(http, LocalMcp) and http.kind == "mcp_local"
    assert isinstance(stdio, ClientResolvedTool)
    with pytest.raises(AttributeError):
        http.name = "other"  # type: ignore[misc]


def test_model_names_sanitise_prefix_and_stay_unique_within_64() -> None:
    long = "very-long-" * 10
    names = model_names("srv", ["get-sum", "get_sum", "a.b/c", long, long + "x"])
    assert names[0] == "srv_get_sum"
    assert names[1] != names[0] and names[1].startswith("srv_get_sum_")
    assert names[2] == "srv_a_b_c"
    assert all(len(n) <= 64 for n in names)
    assert len(set(names)) == 5
    assert model_names(None, ["get-sum"]) == ["get_sum"]


def test_flatten_every_block_kind() -> None:
    result = {
        "content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": "QUJD", "mimeType": "image/png"},
            {"type": "audio", "data": "QQ==", "mimeType": "audio/wav"},
            {"type": "resource_link", "name": "Doc", "uri": "demo://d/1"},
            {"type": "resource", "resource": {"uri": "demo://t", "text": "inline text"}},
            {
                "type": "resource",
                "resource": {"uri": "demo://b", "blob": "QUJD", "mimeType": "x/y"},
            },
        ]
    }
    text, is_error = flatten_call_result(result)
    assert text.split("\n") == [
        "one",
        "[image: image/png, 4 bytes base64]",
        "[audio: audio/wav, 4 bytes base64]",
        "[resource link: Doc demo://d/1]",
        "inline text",
        "[resource: demo://b (x/y, 4 bytes base64)]",
    ]
    assert not is_error
    assert flatten_call_result({"content": [], "structuredContent": {"a": 1}}) == (
        '{"a": 1}',
        False,
    )
    assert flatten_call_result({"content": [{"type": "text", "text": "bad"}], "isError": True}) == (
        "bad",
        True,
    )


def _catalog_tools() -> list[dict[str, Any]]:
    return [
        {"name": "read-file", "description": "Read", "inputSchema": {"type": "object"}, "x": 1},
        {"name": "write", "inputSchema": {"type": "object", "properties": {"p": {}}}},
        {"name": "boom"},
    ]


def test_bring_your_own_catalog_and_call() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def call(name: str, arguments: Any) -> Any:
        seen.append((name, dict(arguments)))
        if name == "boom":
            return {"content": [{"type": "text", "text": "exploded"}], "isError": True}
        if name == "write":
            return {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
        return f"read {arguments['path']}"

    definition = define_local_mcp(
        "fs", catalog=_catalog_tools(), call=call, server_info={"name": "mine", "version": "1"}
    )
    conn = definition.connect()
    assert isinstance(conn, ToolConnection)
    assert conn.tool_names() == ["fs_read_file", "fs_write", "fs_boom"]
    ref = conn.wire_ref()
    assert ref["kind"] == "mcp_local" and ref["name"] == "fs"
    assert ref["serverInfo"] == {"name": "mine", "version": "1"}
    # Verbatim tool dicts with only the name replaced.
    assert ref["tools"][0] == {**_catalog_tools()[0], "name": "fs_read_file"}
    assert conn.input_schema("fs_write") == {"type": "object", "properties": {"p": {}}}
    assert conn.input_schema("fs_boom") is None
    assert conn.call(tool_call("fs_read_file", {"path": "/x"}), timeout=1) == "read /x"
    # mcpToolName wins over name.
    assert conn.call(tool_call("ignored", mcp_tool_name="fs_write"), timeout=1) == "a\nb"
    with pytest.raises(ToolError, match="exploded"):
        conn.call(tool_call("fs_boom"), timeout=1)
    with pytest.raises(ToolError, match="unknown tool"):
        conn.call(tool_call("read_file"), timeout=1)
    assert [name for name, _ in seen] == ["read-file", "write", "boom"]
    conn.close()
    conn.close()


def test_catalog_without_prefix_and_with_filter() -> None:
    definition = define_local_mcp(
        "fs", catalog=_catalog_tools(), call=lambda n, a: n, prefix=False, tool_filter=["write"]
    )
    conn = definition.connect()
    assert conn.tool_names() == ["write"]
    assert conn.call(tool_call("write"), timeout=None) == "write"


def test_filter_matching_nothing_is_a_resolution_error() -> None:
    definition = define_local_mcp(
        "fs", catalog=_catalog_tools(), call=lambda n, a: n, tool_filter=["nope"]
    )
    with pytest.raises(ToolResolutionError, match="tool_filter"):
        definition.connect()
