"""a2a_local against a real a2a-sdk 1.x peer, in both protocol generations."""

from __future__ import annotations

from typing import Any

import peerkit
import pytest
import requests
from peerkit import tool_call

from mantyx_sync._peers.a2a.client import A2AError, extract_reply, select_interface
from mantyx_sync.a2a import INPUT_SCHEMA, LocalA2A, define_local_a2a
from mantyx_sync.errors import SpecError, ToolError, ToolResolutionError
from mantyx_sync.tools import ClientResolvedTool, ToolConnection


def _ask(conn: ToolConnection, text: str) -> str:
    return conn.call(tool_call(conn.name, {"message": text}, kind="a2a_local"), timeout=10)


def _card(base: str) -> dict[str, Any]:
    resp = requests.get(f"{base}/.well-known/agent-card.json", timeout=10)
    resp.raise_for_status()
    return dict(resp.json())


def test_define_validation_and_repr() -> None:
    with pytest.raises(SpecError):
        define_local_a2a("bad-name", url="http://h")
    with pytest.raises(SpecError):
        define_local_a2a("ok")
    with pytest.raises(SpecError):
        define_local_a2a("ok", url="h:1")
    with pytest.raises(SpecError):
        define_local_a2a("ok", url="http://h", headers={"X": "v" * 9000})
    definition = define_local_a2a(
        "ok", url="http://h", headers={"Authorization": "Bearer zzsecretzz"}
    )
    assert isinstance(definition, LocalA2A) and isinstance(definition, ClientResolvedTool)
    assert definition.kind == "a2a_local" and "zzsecretzz" not in repr(definition)


def test_v10_peer_message_task_and_failures(a2a_base: str) -> None:
    conn = define_local_a2a("hr", url=a2a_base, description="HR questions").connect()
    try:
        card = conn.agent_card
        assert select_interface(card)[0] == "1.0"
        assert conn.wire_ref() == {
            "kind": "a2a_local",
            "name": "hr",
            "agentCard": card,
            "description": "HR questions",
        }
        assert conn.tool_names() == ["hr"]
        assert conn.input_schema("hr") == INPUT_SCHEMA
        assert _ask(conn, "hello peer") == "HELLO PEER"
        assert _ask(conn, "task:abc") == "ABC"  # from the artifact, not the history
        with pytest.raises(ToolError, match="A2A task failed: no budget"):
            _ask(conn, "fail:no budget")
        with pytest.raises(ToolError, match="A2A task input-required: which one"):
            _ask(conn, "input:which one?")
        with pytest.raises(ToolError, match="message"):
            conn.call(tool_call("hr"), timeout=5)
    finally:
        conn.close()


def test_v03_generation_against_the_compat_endpoint(a2a_base: str) -> None:
    card = _card(a2a_base)
    card.pop("supportedInterfaces")  # what a 0.3-only card looks like: protocolVersion + url
    assert select_interface(card)[0] == "0.3"
    conn = define_local_a2a("legacy", agent_card=card).connect()
    try:
        assert conn.wire_ref()["agentCard"] == card
        assert _ask(conn, "hello peer") == "HELLO PEER"
        assert _ask(conn, "task:xyz") == "XYZ"
        with pytest.raises(ToolError, match="A2A task failed: nope"):
            _ask(conn, "fail:nope")
    finally:
        conn.close()


@pytest.mark.parametrize("strip_interfaces", [False, True])
def test_context_id_threads_later_calls(a2a_base: str, strip_interfaces: bool) -> None:
    card = _card(a2a_base)
    if strip_interfaces:
        card.pop("supportedInterfaces")
    conn = define_local_a2a("ctx", agent_card=card).connect()
    try:
        first = _ask(conn, "ctx?")
        assert first.startswith("ctx=")
        assert _ask(conn, "ctx?") == first
        assert conn.context_id == first[len("ctx=") :]  # type: ignore[attr-defined]
    finally:
        conn.close()


def test_card_fallback_to_agent_json_and_direct_card_url(a2a_legacy_card_base: str) -> None:
    conn = define_local_a2a("old", url=a2a_legacy_card_base).connect()
    try:
        assert conn.agent_card["name"] == "Upper Echo Agent"
        assert _ask(conn, "hi") == "HI"
    finally:
        conn.close()
    direct = define_local_a2a("direct", url=f"{a2a_legacy_card_base}/.well-known/agent.json")
    conn = direct.connect()
    try:
        assert _ask(conn, "task:q") == "Q"
    finally:
        conn.close()


def test_unreachable_peer_is_a_resolution_error() -> None:
    port = peerkit.free_port()
    with pytest.raises(ToolResolutionError, match="no Agent Card found") as info:
        define_local_a2a("gone", url=f"http://127.0.0.1:{port}", timeout=5).connect()
    assert "agent-card.json" in str(info.value) and "agent.json" in str(info.value)


def test_card_without_endpoint_is_a_resolution_error() -> None:
    with pytest.raises(ToolResolutionError, match="no JSON-RPC endpoint"):
        define_local_a2a("x", agent_card={"name": "n"}).connect()


def test_peer_dying_after_connect_is_a_tool_error(a2a_base: str) -> None:
    card = _card(a2a_base)
    port = peerkit.free_port()
    card["supportedInterfaces"] = [
        {
            "url": f"http://127.0.0.1:{port}/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ]
    conn = define_local_a2a("dead", agent_card=card, timeout=5).connect()
    with pytest.raises(ToolError, match="unreachable"):
        _ask(conn, "anyone?")
    conn.close()


def test_send_callable_replaces_the_client() -> None:
    card = {"name": "Mine", "url": "http://unused.invalid/a2a", "protocolVersion": "0.3.0"}
    seen: list[tuple[str, Any]] = []

    def send(message: str, agent_card: Any) -> str:
        seen.append((message, agent_card))
        return message[::-1]

    conn = define_local_a2a("own", agent_card=card, send=send).connect()
    assert _ask(conn, "abc") == "cba"
    assert seen == [("abc", card)]
    conn.close()


def test_reply_extraction_shapes() -> None:
    v03_task = {
        "kind": "task",
        "contextId": "c1",
        "status": {"state": "completed"},
        "history": [{"kind": "message", "role": "user", "parts": [{"kind": "text", "text": "Q"}]}],
        "artifacts": [
            {"parts": [{"kind": "text", "text": "A1"}, {"kind": "data", "data": {"k": 1}}]}
        ],
    }
    assert extract_reply(v03_task) == ('A1\n{"k": 1}', "c1")
    status_only = {
        "task": {"status": {"state": "TASK_STATE_COMPLETED", "message": {"parts": [{"text": "S"}]}}}
    }
    assert extract_reply(status_only) == ("S", None)
    with pytest.raises(A2AError, match="A2A task rejected: not mine"):
        extract_reply(
            {
                "task": {
                    "status": {
                        "state": "TASK_STATE_REJECTED",
                        "message": {"parts": [{"text": "not mine"}]},
                    }
                }
            }
        )
    with pytest.raises(A2AError, match="A2A task canceled"):
        extract_reply({"kind": "task", "status": {"state": "canceled"}})
    with pytest.raises(A2AError, match="A2A task working"):
        extract_reply({"kind": "task", "status": {"state": "working"}})
    with pytest.raises(A2AError, match="neither"):
        extract_reply({"weird": 1})


def test_jsonrpc_error_is_a_tool_error(a2a_legacy_card_base: str) -> None:
    # The 1.0-only peer does not know the 0.3 method: a real JSON-RPC error.
    endpoint = f"{a2a_legacy_card_base}/a2a/jsonrpc"
    card = {"name": "Pretend 0.3", "url": endpoint, "protocolVersion": "0.3.0"}
    conn = define_local_a2a("wrong", agent_card=card).connect()
    try:
        with pytest.raises(ToolError, match=r"^A2A error -32\d+: "):
            _ask(conn, "hello")
    finally:
        conn.close()
