"""a2a_local against a real a2a-sdk 0.3 peer (message/send, kind-tagged shapes).

Needs tests/peers/.venv-a2a03 (build it with tests/peers/make_a2a03_venv.sh);
skipped otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator

import peerkit
import pytest
from peerkit import tool_call

from mantyx_sync.a2a import A2AConnection, define_local_a2a
from mantyx_sync.errors import ToolError

pytestmark = pytest.mark.skipif(
    not peerkit.A2A03_PYTHON.exists(),
    reason="a2a-sdk 0.3 venv missing (run tests/peers/make_a2a03_venv.sh)",
)


@pytest.fixture(scope="module")
def conn03() -> Iterator[A2AConnection]:
    port = peerkit.free_port()
    script = str(peerkit.PEERS / "a2a03_peer.py")
    with peerkit.http_peer([script, str(port)], port, python=str(peerkit.A2A03_PYTHON)):
        conn = define_local_a2a("old", url=f"http://127.0.0.1:{port}").connect()
        yield conn
        conn.close()


def _ask(conn: A2AConnection, text: str) -> str:
    return conn.call(tool_call("old", {"message": text}), timeout=10)


def test_card_is_0_3(conn03: A2AConnection) -> None:
    card = conn03.agent_card
    assert card["protocolVersion"] == "0.3.0" and card["url"].endswith("/a2a/jsonrpc")


def test_message_task_failure_and_context(conn03: A2AConnection) -> None:
    assert _ask(conn03, "hello peer") == "HELLO PEER"
    assert _ask(conn03, "task:abc") == "ABC"
    with pytest.raises(ToolError, match="A2A task failed: broken"):
        _ask(conn03, "fail:broken")
    first = _ask(conn03, "ctx?")
    assert first.startswith("ctx=") and _ask(conn03, "ctx?") == first
