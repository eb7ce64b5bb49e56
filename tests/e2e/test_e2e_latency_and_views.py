"""A small event arrives as soon as it is sent; a user's own web view tested on the fixture."""

from __future__ import annotations

import json
import threading
from typing import Any

from werkzeug.test import Client as WsgiClient
from werkzeug.wrappers import Request, Response

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."


def test_small_event_is_delivered_without_waiting_for_more_bytes(
    mantyx_server: LocalMantyx,
) -> None:
    # The run sends one tiny delta, then blocks on a tool whose handler waits until
    # the caller has *seen* that delta. Any buffering in the reader deadlocks this.
    got_delta = threading.Event()

    @mantyx_sync.local_tool
    def gate() -> str:
        """Opens once the delta was read."""
        return "seen" if got_delta.wait(5) else "delta was buffered"

    mantyx_server.set_model(
        [
            Turn("hi", chunks=["hi"], tool_calls=[ToolCall("gate", {})]),
            Turn(lambda ctx: ctx.tool_results[-1]["result"]),
        ]
    )
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM, tools=[gate])
    with agent.stream("x") as run:
        for event in run:
            if event.type == "assistant_delta":
                got_delta.set()
    assert run.result is not None and run.result.text == "seen"


@mantyx_sync.local_tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look an order up in the shop database.

    Args:
        order_id: The order number.
    """
    return {"order_id": order_id, "status": "shipped"}


def make_app(client: mantyx_sync.Client) -> Any:
    """A user's WSGI view (as in Flask/Django) that asks an agent about an order."""
    agent = mantyx_sync.Agent(
        client, system_prompt="You answer order questions.", tools=[lookup_order]
    )

    @Request.application  # type: ignore[misc]
    def app(request: Request) -> Response:
        result = agent.run(f"Where is order {request.args['id']}?")
        return Response(json.dumps({"answer": result.text}), mimetype="application/json")

    return app


def test_user_view_with_a_local_tool(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("lookup_order", {"order_id": "A17"})]),
            Turn(
                lambda ctx: (
                    "Order A17 is " + json.loads(ctx.tool_results[0]["result"])["status"] + "."
                )
            ),
        ]
    )
    response = WsgiClient(make_app(mantyx_server.client())).get("/orders?id=A17")
    assert response.status_code == 200
    assert response.get_json() == {"answer": "Order A17 is shipped."}
