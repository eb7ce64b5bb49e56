"""The same deterministic peer as a2a_peer.py, built with the a2a-sdk 0.3 line.

It runs in a separate virtualenv (make_a2a03_venv.sh) because the 0.3 and 1.x
SDKs cannot be installed side by side. Usage: ``python a2a03_peer.py PORT``.
Replies: ``task:<x>`` completed Task with artifact ``<X>``; ``fail:<x>`` failed
Task; ``ctx?`` Message ``ctx=<contextId>``; else Message upper-cased.
"""

from __future__ import annotations

import sys

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TextPart
from a2a.utils import new_agent_text_message, new_task


class UpperEcho(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        if text == "ctx?":
            reply = new_agent_text_message(f"ctx={context.context_id}", context.context_id)
            await event_queue.enqueue_event(reply)
            return
        verb, _, rest = text.partition(":")
        if verb not in ("task", "fail") or not rest:
            await event_queue.enqueue_event(
                new_agent_text_message(text.upper(), context.context_id)
            )
            return
        task = context.current_task or new_task(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if verb == "task":
            await updater.add_artifact([Part(root=TextPart(text=rest.upper()))], name="echo")
            await updater.complete()
        else:
            await updater.failed(new_agent_text_message(rest, task.context_id, task.id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def main() -> None:
    port = int(sys.argv[1])
    card = AgentCard(
        name="Upper Echo Agent",
        description="Deterministic test peer: replies with your text upper-cased.",
        url=f"http://127.0.0.1:{port}/a2a/jsonrpc",
        version="1.0.0",
        protocol_version="0.3.0",
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="upper_echo", name="Upper echo", description="Upper-cases.", tags=["test"]
            )
        ],
    )
    handler = DefaultRequestHandler(agent_executor=UpperEcho(), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build(
        rpc_url="/a2a/jsonrpc"
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
