"""Local tools three ways: two decorated functions and one attrs-typed tool.

    python examples/local_tools.py

Uses MANTYX when MANTYX_API_KEY is set, otherwise the local emulator with a
scripted model that calls all three tools in one turn (they run in parallel).
"""

from __future__ import annotations

import contextlib
import enum
import os
import sys

import attrs

import mantyx_sync


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@mantyx_sync.local_tool
def convert_temperature(value: float, to: Unit) -> float:
    """Convert a temperature between Celsius and Fahrenheit.

    Args:
        value: The temperature to convert.
        to: The unit to convert to.
    """
    return round(value * 9 / 5 + 32, 2) if to is Unit.FAHRENHEIT else round((value - 32) * 5 / 9, 2)


@mantyx_sync.local_tool(long_running=False, timeout=5.0)
def shout(text: str, times: int = 1) -> str:
    """Upper-case some text.

    :param text: What to shout.
    :param times: How many times to repeat it.
    """
    return " ".join([text.upper()] * times)


@attrs.frozen
class Order:
    """An order to price."""

    sku: str
    quantity: int = 1


def price_order(order: Order) -> dict[str, object]:
    return {"sku": order.sku, "quantity": order.quantity, "total_usd": 9.5 * order.quantity}


price = mantyx_sync.define_local_tool(
    name="price_order",
    description="Price an order of a product.",
    parameters=Order,
    execute=price_order,
)


def main() -> int:
    with contextlib.ExitStack() as stack:
        if os.environ.get("MANTYX_API_KEY"):
            client = stack.enter_context(mantyx_sync.Client())
        else:
            from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

            server = stack.enter_context(LocalMantyx())
            server.set_model(
                [
                    Turn(
                        "Let me check.",
                        tool_calls=[
                            ToolCall("convert_temperature", {"value": 21.5, "to": "fahrenheit"}),
                            ToolCall("shout", {"text": "hello", "times": 2}),
                            ToolCall("price_order", {"sku": "A-1", "quantity": 3}),
                        ],
                    ),
                    Turn(
                        lambda ctx: (
                            "Results: "
                            + "; ".join(
                                f"{r['name']} -> {r.get('result', r.get('error'))}"
                                for r in ctx.tool_results
                            )
                        )
                    ),
                ]
            )
            client = stack.enter_context(server.client())
            print(f"(local MANTYX emulator at {server.base_url})")
        agent = mantyx_sync.Agent(
            client,
            system_prompt="Use the tools to answer.",
            tools=[convert_temperature, shout, price],
        )
        result = agent.run("Convert 21.5C to F, shout hello twice, and price 3 of A-1.")
        print(result.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
