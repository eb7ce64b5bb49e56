"""Drive every operation a served agent's card advertises with the official a2a-sdk 0.3
client (runs in .venv-a2a03).

Usage: ``python a2a03_ops.py BASE_URL ops|resubscribe``

``ops``: send, get, a second message in the same ``contextId``, then the errors for
a finished task (a message naming it, resubscribing, cancelling). ``resubscribe``:
a non-blocking send, then ``tasks/resubscribe`` to it. Prints one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import Message, Part, Role, Task, TaskIdParams, TaskQueryParams, TextPart


def _message(text: str, **ids: str) -> Message:
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[Part(root=TextPart(text=text))],
        **ids,
    )


def _text(parts: list[Part]) -> str:
    return "".join(p.root.text for p in parts if isinstance(p.root, TextPart))


async def _last_task(client: Client, message: Message) -> Task:
    task: Task | None = None
    async for item in client.send_message(message):
        assert not isinstance(item, Message), "expected a task"
        task = item[0]
    assert task is not None
    return task


async def _code(call: Awaitable[Any]) -> int | None:
    try:
        await call
    except A2AClientJSONRPCError as exc:
        return int(exc.error.code)
    return None


async def _drain(client: Client, task_id: str) -> list[Any]:
    return [item async for item in client.resubscribe(TaskIdParams(id=task_id))]


async def ops(client: Client, streaming: Client) -> dict[str, Any]:
    first = await _last_task(client, _message("first turn"))
    got = await client.get_task(TaskQueryParams(id=first.id))
    second = await _last_task(client, _message("second turn", context_id=first.context_id))
    return {
        "first_state": first.status.state.value,
        "got_state": got.status.state.value,
        "got_history": [(m.role.value, _text(m.parts)) for m in got.history or []],
        "second_context_same": second.context_id == first.context_id,
        "second_answer": _text(second.artifacts[0].parts) if second.artifacts else None,
        "message_to_finished": await _code(
            _last_task(client, _message("more", task_id=first.id, context_id=first.context_id))
        ),
        "message_to_unknown": await _code(_last_task(client, _message("x", task_id="nope"))),
        "resubscribe_finished": await _code(_drain(streaming, first.id)),
        "resubscribe_unknown": await _code(_drain(streaming, "nope")),
        "cancel_finished": await _code(client.cancel_task(TaskIdParams(id=first.id))),
    }


async def resubscribe(client: Client, streaming: Client) -> dict[str, Any]:
    started = await _last_task(client, _message("long job"))
    kinds: list[str] = []
    answer, state = "", None
    async for task, update in streaming.resubscribe(TaskIdParams(id=started.id)):
        state = task.status.state.value
        kinds.append(update.kind if update is not None else "task")
        if update is not None and update.kind == "artifact-update":
            chunk = _text(update.artifact.parts)
            answer = answer + chunk if update.append else chunk
    return {
        "started_state": started.status.state.value,
        "kinds": kinds,
        "state": state,
        "answer": answer,
    }


async def main() -> None:
    url, mode = sys.argv[1], sys.argv[2]
    async with httpx.AsyncClient(timeout=30) as http:
        # polling: sends do not wait for the task's end (configuration.blocking false).
        config = ClientConfig(streaming=False, polling=mode == "resubscribe", httpx_client=http)
        client = await ClientFactory.connect(url, client_config=config)
        streaming = await ClientFactory.connect(
            url, client_config=ClientConfig(streaming=True, httpx_client=http)
        )
        out = await (ops if mode == "ops" else resubscribe)(client, streaming)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
