"""A2A 0.3 cards: ``preferredTransport`` / ``additionalInterfaces``, and safe error text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import peerkit
import pytest
import requests
from peerkit import tool_call

from mantyx_sync._base.redact import redact_text
from mantyx_sync._peers.a2a.client import A2AError, select_interface
from mantyx_sync.a2a import define_local_a2a
from mantyx_sync.errors import SpecError, ToolResolutionError


def _card03(**extra: Any) -> dict[str, Any]:
    return {"name": "peer", "protocolVersion": "0.3.0", "url": "http://peer/grpc", **extra}


def test_url_is_used_when_preferred_transport_is_missing_or_jsonrpc() -> None:
    assert select_interface(_card03()) == ("0.3", "http://peer/grpc")
    card = _card03(preferredTransport="jsonrpc")
    assert select_interface(card) == ("0.3", "http://peer/grpc")


def test_additional_jsonrpc_interface_is_chosen_over_a_grpc_url() -> None:
    card = _card03(
        preferredTransport="GRPC",
        additionalInterfaces=[
            {"url": "http://peer/grpc", "transport": "GRPC"},
            {"url": "http://peer/rest", "transport": "HTTP+JSON"},
            {"url": "http://peer/rpc", "transport": "JSONRPC"},
        ],
    )
    assert select_interface(card) == ("0.3", "http://peer/rpc")


def test_card_without_jsonrpc_is_refused_at_connect() -> None:
    card = _card03(
        preferredTransport="GRPC",
        additionalInterfaces=[{"url": "http://peer/rest", "transport": "HTTP+JSON"}],
    )
    with pytest.raises(A2AError, match="no JSON-RPC interface"):
        select_interface(card)
    with pytest.raises(ToolResolutionError, match="no JSON-RPC interface"):
        define_local_a2a("grpc_only", agent_card=card).connect()


@pytest.fixture(scope="module")
def peer03_base() -> Iterator[str]:
    if not peerkit.A2A03_PYTHON.exists():
        pytest.skip("a2a-sdk 0.3 venv missing (run tests/peers/make_a2a03_venv.sh)")
    port = peerkit.free_port()
    script = str(peerkit.PEERS / "a2a03_peer.py")
    with peerkit.http_peer([script, str(port)], port, python=str(peerkit.A2A03_PYTHON)):
        yield f"http://127.0.0.1:{port}"


def test_real_03_peer_reached_through_additional_interfaces(peer03_base: str) -> None:
    card = requests.get(f"{peer03_base}/.well-known/agent-card.json", timeout=10).json()
    jsonrpc_url = card["url"]
    card["url"] = f"{peer03_base}/grpc-not-here"
    card["preferredTransport"] = "GRPC"
    card["additionalInterfaces"] = [
        {"url": card["url"], "transport": "GRPC"},
        {"url": jsonrpc_url, "transport": "JSONRPC"},
    ]
    conn = define_local_a2a("old", agent_card=card).connect()
    try:
        assert conn.call(tool_call("old", {"message": "hello"}), timeout=10) == "HELLO"
    finally:
        conn.close()


def test_card_fetch_error_hides_userinfo_and_query() -> None:
    port = peerkit.free_port()  # nothing listens there
    url = f"http://alice:pw-s3cret@127.0.0.1:{port}/agent?token=tok-s3cret"
    with pytest.raises(ToolResolutionError) as info:
        define_local_a2a("nope", url=url, timeout=2).connect()
    text = str(info.value)
    assert f"127.0.0.1:{port}/agent/.well-known/agent-card.json" in text
    assert "s3cret" not in text and "alice" not in text and "token" not in text


def test_header_values_are_registered_as_secrets() -> None:
    define_local_a2a("h", url="http://h", headers={"X-Api": "a2a-hdr-value-123"})
    assert redact_text("sent a2a-hdr-value-123 to h") == "sent *** to h"


def test_name_with_trailing_newline_is_rejected() -> None:
    with pytest.raises(SpecError):
        define_local_a2a("peer\n", url="http://h")
