"""a2a_app against the official a2a-sdk 1.x client, over HTTP (werkzeug).

The MANTYX side is the local emulator; local tools of the served agent run
in this (the serving) process.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2 as pb

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)


def _request(text: str, context_id: str | None = None) -> pb.SendMessageRequest:
    message = pb.Message(message_id=f"m-{text[:8]}", role=pb.ROLE_USER, parts=[pb.Part(text=text)])
    if context_id:
        message.context_id = context_id
    return pb.SendMessageRequest(message=message)


async def _collect(
    url: str,
    text: str,
    *,
    streaming: bool,
    context_id: str | None = None,
    headers: dict[str, str] | None = None,
) -> list[pb.StreamResponse]:
    async with httpx.AsyncClient(headers=headers or {}, timeout=30) as http:
        client = await create_client(url, ClientConfig(streaming=streaming, httpx_client=http))
        try:
            return [item async for item in client.send_message(_request(text, context_id))]
        finally:
            await client.close()


def _final_task(items: list[pb.StreamResponse]) -> tuple[str, str, str]:
    """(state, answer text, context id) from a streamed or single reply."""
    state, context, text = "", "", ""
    for item in items:
        if item.HasField("task"):
            state = pb.TaskState.Name(item.task.status.state)
            context = item.task.context_id
            for artifact in item.task.artifacts:
                text = "".join(p.text for p in artifact.parts)
        elif item.HasField("status_update"):
            state = pb.TaskState.Name(item.status_update.status.state)
        elif item.HasField("artifact_update"):
            chunk = "".join(p.text for p in item.artifact_update.artifact.parts)
            text = text + chunk if item.artifact_update.append else chunk
    return state, text, context


@pytest.fixture
def a2a_url(mantyx_server: LocalMantyx, serve_wsgi: Any) -> str:
    agent = mantyx_sync.Agent(mantyx_server.client(), name="echo_agent", system_prompt="Echo.")
    return str(serve_wsgi(serve.a2a_app(agent)).url)


def test_card_advertises_both_lines(a2a_url: str) -> None:
    card = httpx.get(f"{a2a_url}/.well-known/agent-card.json").json()
    versions = {i["protocolVersion"] for i in card["supportedInterfaces"]}
    assert versions == {"1.0", "0.3"}
    assert card["url"] == f"{a2a_url}/" and card["name"] == "echo_agent"
    assert card["capabilities"]["streaming"] is True
    assert httpx.get(f"{a2a_url}/.well-known/agent.json").json() == card
    assert httpx.get(f"{a2a_url}/health").json() == {"status": "ok"}


def test_send_non_streaming(a2a_url: str) -> None:
    items = asyncio.run(_collect(a2a_url, "hello there", streaming=False))
    state, text, context = _final_task(items)
    assert state == "TASK_STATE_COMPLETED"
    assert text == "You said: hello there"
    assert context


def test_send_streaming_writes_as_the_run_streams(a2a_url: str) -> None:
    items = asyncio.run(_collect(a2a_url, "stream this please now", streaming=True))
    kinds = [item.WhichOneof("payload") for item in items]
    assert kinds[0] == "task"
    assert kinds.count("artifact_update") >= 2  # deltas, then the whole answer
    state, text, _ = _final_task(items)
    assert state == "TASK_STATE_COMPLETED"
    assert text == "You said: stream this please now"


def test_context_id_continues_one_mantyx_session(a2a_url: str, mantyx_server: LocalMantyx) -> None:
    _, _, context = _final_task(asyncio.run(_collect(a2a_url, "first", streaming=False)))
    asyncio.run(_collect(a2a_url, "second", streaming=True, context_id=context))
    sessions = list(mantyx_server.sessions.values())
    assert len(sessions) == 1
    runs = list(mantyx_server.runs.values())
    assert len(runs) == 2 and all(r.session_id == sessions[0].id for r in runs)


def test_local_tool_runs_in_the_serving_process(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    seen: list[str] = []

    @mantyx_sync.local_tool(read_only=True)
    def shout(text: str) -> str:
        """Upper-case the text."""
        seen.append(threading.current_thread().name)
        return text.upper()

    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Use tools.", tools=[shout])
    url = serve_wsgi(serve.a2a_app(agent)).url
    state, text, _ = _final_task(asyncio.run(_collect(url, "go", streaming=True)))
    assert state == "TASK_STATE_COMPLETED"
    assert "shout → EXAMPLE" in text
    assert len(seen) == 1 and seen[0].startswith("mantyx-tool")
    assert len(mantyx_server.runs) == 1
    run = next(iter(mantyx_server.runs.values()))
    assert [b.get("result") for b in run.tool_results.values()] == ["EXAMPLE"]


def test_cancel_mid_run_cancels_the_mantyx_run(
    mantyx_server: LocalMantyx, serve_wsgi: Any, slow_agent: Any
) -> None:
    agent, started, release = slow_agent()
    url = serve_wsgi(serve.a2a_app(agent, heartbeat=0.2)).url

    async def scenario() -> tuple[list[pb.StreamResponse], pb.Task]:
        async with httpx.AsyncClient(timeout=30) as http:
            client = await create_client(url, ClientConfig(streaming=True, httpx_client=http))
            items: list[pb.StreamResponse] = []
            cancelled: pb.Task | None = None
            async for item in client.send_message(_request("long job")):
                items.append(item)
                if item.HasField("task") and cancelled is None:
                    await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
                    cancelled = await client.cancel_task(pb.CancelTaskRequest(id=item.task.id))
            await client.close()
            assert cancelled is not None
            return items, cancelled

    try:
        items, cancelled = asyncio.run(scenario())
    finally:
        release.set()
    assert pb.TaskState.Name(cancelled.status.state) == "TASK_STATE_CANCELED"
    assert _final_task(items)[0] == "TASK_STATE_CANCELED"
    run = mantyx_server.wait_for_run(status="cancelled", timeout=10)
    assert run.status == "cancelled"


def test_get_task_and_errors(a2a_url: str) -> None:
    send = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "x", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
    }
    task = httpx.post(f"{a2a_url}/", json=send, timeout=30).json()["result"]["task"]
    got = httpx.post(
        f"{a2a_url}/",
        json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}},
    ).json()["result"]
    assert got["status"]["state"] == "TASK_STATE_COMPLETED" and got["id"] == task["id"]

    def rpc(body: Any) -> dict[str, Any]:
        reply = httpx.post(f"{a2a_url}/", json=body, timeout=30)
        assert reply.status_code == 200
        return dict(reply.json()["error"])

    assert (
        rpc({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "nope"}})["code"]
        == -32001
    )
    assert (
        rpc({"jsonrpc": "2.0", "id": 4, "method": "CancelTask", "params": {"id": task["id"]}})[
            "code"
        ]
        == -32002
    )
    assert rpc({"jsonrpc": "2.0", "id": 5, "method": "Nope"})["code"] == -32601
    assert (
        rpc(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "SendMessage",
                "params": {"message": {"parts": []}},
            }
        )["code"]
        == -32602
    )
    assert rpc([1, 2])["code"] == -32600
