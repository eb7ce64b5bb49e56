"""Drive a served A2A agent with the official a2a-sdk 0.3 client (runs in .venv-a2a03).

Usage: ``python a2a03_client.py BASE_URL TEXT [--stream] [--cancel] [--token T]``

Prints one JSON object: the kinds of the items received, the final task
state, the answer text and the contextId. With ``--cancel`` the task is
cancelled (``tasks/cancel``) as soon as the first item arrives.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, Task, TaskIdParams, TextPart


def _text(parts: list[Part]) -> str:
    return "".join(p.root.text for p in parts if isinstance(p.root, TextPart))


async def main() -> None:
    url, text = sys.argv[1], sys.argv[2]
    stream, cancel = "--stream" in sys.argv, "--cancel" in sys.argv
    headers = {}
    if "--token" in sys.argv:
        headers["Authorization"] = "Bearer " + sys.argv[sys.argv.index("--token") + 1]
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        client = await ClientFactory.connect(
            url, client_config=ClientConfig(streaming=stream, httpx_client=http)
        )
        message = Message(
            role=Role.user, message_id=str(uuid.uuid4()), parts=[Part(root=TextPart(text=text))]
        )
        kinds: list[str] = []
        task: Task | None = None
        cancelled_state = None
        answer = ""
        async for item in client.send_message(message):
            if isinstance(item, Message):
                kinds.append("message")
                answer = _text(item.parts)
                continue
            task, update = item
            kinds.append(update.kind if update is not None else "task")
            if update is not None and update.kind == "artifact-update":
                chunk = _text(update.artifact.parts)
                answer = answer + chunk if update.append else chunk
            if cancel and cancelled_state is None:
                done = await client.cancel_task(TaskIdParams(id=task.id))
                cancelled_state = done.status.state.value
        if task is not None and not stream and task.artifacts:
            answer = _text(task.artifacts[0].parts)
        await client.close()
    print(
        json.dumps(
            {
                "kinds": kinds,
                "state": task.status.state.value if task else None,
                "answer": answer,
                "context": task.context_id if task else None,
                "cancelled_state": cancelled_state,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
