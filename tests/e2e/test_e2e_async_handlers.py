"""``async def`` tool handlers run to completion on their worker, in an event loop of its own."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
from tool_support import final_with_results, posted_results

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."


def _agent(server: LocalMantyx, *tools: Any) -> mantyx_sync.Agent:
    return mantyx_sync.Agent(server.client(), system_prompt=SYSTEM, tools=list(tools))


def test_async_handlers_are_awaited_and_their_values_sent(mantyx_server: LocalMantyx) -> None:
    main_thread = threading.get_ident()
    loops: list[tuple[int, asyncio.AbstractEventLoop]] = []

    @mantyx_sync.local_tool
    async def fetch(key: str, times: int = 1) -> dict[str, Any]:
        """Fetch a value (asynchronously)."""
        await asyncio.sleep(0)
        loops.append((threading.get_ident(), asyncio.get_running_loop()))
        return {"key": key * times}

    @attrs.define
    class Query:
        text: str

    async def shout(query: Query) -> str:
        await asyncio.sleep(0)
        return query.text.upper()

    loud = mantyx_sync.define_local_tool(name="shout", parameters=Query, execute=shout)
    lazily = mantyx_sync.define_local_tool(
        name="lazily", execute=lambda args: shout(Query(text="made by a lambda"))
    )
    mantyx_server.set_model(
        [
            Turn(
                tool_calls=[
                    ToolCall("fetch", {"key": "ab", "times": 2}),
                    ToolCall("shout", {"text": "hi"}),
                    ToolCall("lazily", {}),
                ]
            ),
            Turn(final_with_results),
        ]
    )
    result = _agent(mantyx_server, fetch, loud, lazily).run("x")
    assert sorted(result.text.split(" | ")) == [
        'fetch={"key": "abab"}',
        "lazily=MADE BY A LAMBDA",
        "shout=HI",
    ]
    ((thread, loop),) = loops
    assert thread != main_thread and loop.is_closed()
    # The decorated function is still the coroutine function it was.
    assert asyncio.run(fetch("x")) == {"key": "x"}


def test_async_errors_are_answered_like_sync_ones(mantyx_server: LocalMantyx) -> None:
    @mantyx_sync.local_tool
    async def explain() -> str:
        """Refuse, with a message for the model."""
        await asyncio.sleep(0)
        raise mantyx_sync.ToolError("try again tomorrow")

    @mantyx_sync.local_tool
    async def crash() -> str:
        """Break."""
        raise ValueError("bad value")

    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("explain", {}), ToolCall("crash", {})]),
            Turn(final_with_results),
        ]
    )
    result = _agent(mantyx_server, explain, crash).run("x")
    assert sorted(result.text.split(" | ")) == [
        "crash=ERR:ValueError: bad value",
        "explain=ERR:try again tomorrow",
    ]
    posted = posted_results(mantyx_server, result.run_id)
    assert all("coroutine" not in str(body) for body in posted)


def test_async_calls_of_one_turn_run_at_once(mantyx_server: LocalMantyx) -> None:
    barrier = threading.Barrier(4, timeout=10)

    @mantyx_sync.local_tool
    async def meet(i: int) -> int:
        """Wait until all four calls are running."""
        await asyncio.to_thread(barrier.wait)
        return i

    mantyx_server.set_model(
        [Turn(tool_calls=[ToolCall("meet", {"i": i}) for i in range(4)]), Turn(final_with_results)]
    )
    result = _agent(mantyx_server, meet).run("x")
    assert sorted(result.text.split(" | ")) == [f"meet={i}" for i in range(4)]


def test_async_generators_are_refused_where_the_tool_is_defined() -> None:
    async def stream_rows(query: str) -> AsyncIterator[str]:
        yield query

    with pytest.raises(mantyx_sync.SpecError, match="async generator"):
        mantyx_sync.local_tool(stream_rows)
    with pytest.raises(mantyx_sync.SpecError, match="async generator"):
        mantyx_sync.define_local_tool(name="rows", execute=stream_rows)
