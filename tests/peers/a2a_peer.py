"""A deterministic A2A peer built with the installed ``a2a-sdk`` 1.x (no LLM).

Usage: ``python a2a_peer.py PORT [--v10-only] [--card-path PATH]``

The reply depends on the text sent:
  ``task:<x>``   a Task, completed, with an artifact holding ``<X>`` (upper-cased)
  ``fail:<x>``   a Task that fails, its status message ``<x>``
  ``input:<x>``  a Task that stops in input-required, asking ``<x>``
  ``ctx?``       a Message ``ctx=<contextId the peer sees>``
  anything else  a Message with the text upper-cased

By default the JSON-RPC endpoint also speaks A2A 0.3 (the SDK's compat layer),
so the card advertises both generations; ``--v10-only`` turns that off.
"""

from __future__ import annotations

import sys

import uvicorn
from a2a.helpers.proto_helpers import (
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette


class UpperEcho(AgentExecutor):
    """Answers deterministically from the request text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        if text == "ctx?":
            await event_queue.enqueue_event(
                new_text_message(f"ctx={context.context_id}", context_id=context.context_id)
            )
            return
        verb, _, rest = text.partition(":")
        if verb not in ("task", "fail", "input") or not rest:
            await event_queue.enqueue_event(
                new_text_message(text.upper(), context_id=context.context_id)
            )
            return
        assert context.message is not None
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if verb == "task":
            await updater.add_artifact([new_text_part(rest.upper())], name="echo")
            await updater.complete()
        elif verb == "fail":
            await updater.failed(
                message=new_text_message(rest, context_id=task.context_id, task_id=task.id)
            )
        else:
            await updater.requires_input(
                message=new_text_message(rest, context_id=task.context_id, task_id=task.id)
            )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def build_app(port: int, *, compat: bool, card_path: str) -> Starlette:
    rpc_path = "/a2a/jsonrpc"
    url = f"http://127.0.0.1:{port}{rpc_path}"
    interfaces = [AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")]
    if compat:
        interfaces.append(
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3")
        )
    card = AgentCard(
        name="Upper Echo Agent",
        description="Deterministic test peer: replies with your text upper-cased.",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="upper_echo",
                name="Upper echo",
                description="Replies with the message text upper-cased.",
                tags=["test"],
                examples=["hello -> HELLO"],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=UpperEcho(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card, card_url=card_path)
    routes += create_jsonrpc_routes(handler, rpc_path, enable_v0_3_compat=compat)
    return Starlette(routes=routes)


def main() -> None:
    port = int(sys.argv[1])
    card_path = "/.well-known/agent-card.json"
    if "--card-path" in sys.argv:
        card_path = sys.argv[sys.argv.index("--card-path") + 1]
    app = build_app(port, compat="--v10-only" not in sys.argv, card_path=card_path)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
