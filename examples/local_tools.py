"""Local tools three ways: decorated functions and one attrs-typed tool.

    python examples/local_tools.py

``convert_temperature`` is read-only (no side effects: several of its calls
may be outstanding at once); ``receipt`` returns a file with its result
(``ToolOutput``). Uses MANTYX when MANTYX_API_KEY is set, otherwise the local
emulator with a scripted model that calls all four tools in one turn (they run
in parallel).
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


@mantyx_sync.local_tool(read_only=True)
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


@mantyx_sync.local_tool
def receipt(sku: str) -> mantyx_sync.ToolOutput:
    """Write the receipt of an order, as a text file.

    Args:
        sku: The product ordered.
    """
    text = f"RECEIPT\n1 x {sku}\n".encode()
    return mantyx_sync.ToolOutput(
        "receipt attached",
        files=[mantyx_sync.Attachment.from_bytes(text, filename=f"receipt-{sku}.txt")],
    )


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
                            ToolCall("receipt", {"sku": "A-1"}),
                        ],
                    ),
                    Turn(
                        lambda ctx: (
                            "Results: "
                            + "; ".join(
                                f"{r['name']} -> {r.get('result', r.get('error'))}"
                                + "".join(f" [{f['filename']}]" for f in r.get("files", ()))
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
            tools=[convert_temperature, shout, price, receipt],
        )
        result = agent.run(
            "Convert 21.5C to F, shout hello twice, price 3 of A-1 and write its receipt."
        )
        print(result.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
