"""A small Agent2Agent peer that echoes (used by examples/a2a_local.py). No LLM.

Built with ``a2a-sdk`` 1.x (``pip install "a2a-sdk[http-server]>=1" uvicorn``).

    python examples/servers/echo_a2a_peer.py [PORT]

Listens on 127.0.0.1 (PORT 0 or none: any free port) and prints one line,
``listening on http://127.0.0.1:<port>``, once the socket is bound. Its Agent
Card is at ``/.well-known/agent-card.json``; it speaks A2A 1.0 and, through the
SDK's compatibility layer, 0.3. Each reply says how many messages this
conversation (``contextId``) has had, so you can see a caller continue one.
"""

from __future__ import annotations

import socket
import sys
from collections import Counter

try:
    import uvicorn
    from a2a.helpers.proto_helpers import new_text_message
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from starlette.applications import Starlette
except ImportError as exc:
    sys.stderr.write(
        f"echo_a2a_peer.py needs a2a-sdk 1.x with its HTTP server ({exc}):\n"
        '    pip install "a2a-sdk[http-server]>=1" uvicorn\n'
    )
    sys.exit(2)

RPC_PATH = "/a2a/jsonrpc"


class EchoExecutor(AgentExecutor):
    """Replies ``echo #<n>: <text>``, counting messages per conversation."""

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        conversation = context.context_id or ""
        self._seen[conversation] += 1
        reply = f"echo #{self._seen[conversation]}: {context.get_user_input()}"
        await event_queue.enqueue_event(new_text_message(reply, context_id=context.context_id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("echo replies at once; there is nothing to cancel")


def build_app(port: int) -> Starlette:
    """The Starlette app: the Agent Card route plus the JSON-RPC endpoint."""
    url = f"http://127.0.0.1:{port}{RPC_PATH}"
    card = AgentCard(
        name="Echo Agent",
        description="Repeats what you send it, numbering the messages of each conversation.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Repeats the message, with its number in the conversation.",
                tags=["example"],
                examples=["hello -> echo #1: hello"],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card)
    routes += create_jsonrpc_routes(handler, RPC_PATH, enable_v0_3_compat=True)
    return Starlette(routes=routes)


def main() -> None:
    # Bind first so the port is ours before anyone is told about it.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0))
    port = sock.getsockname()[1]
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    config = uvicorn.Config(build_app(port), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
