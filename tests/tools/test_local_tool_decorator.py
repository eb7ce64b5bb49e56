"""@local_tool with and without arguments; the decorated function stays callable."""

from __future__ import annotations

import enum
import inspect
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated

import attrs
import pytest

from mantyx_sync.errors import SpecError
from mantyx_sync.local_tools import LocalTool, local_tool


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


@attrs.frozen
class Ticket:
    title: str
    priority: Priority = Priority.LOW


@local_tool
def add(a: int, b: int = 2) -> int:
    """Add two integers.

    :param a: the first.
    :param b: the second.
    """
    return a + b


@local_tool(name="file_ticket", description="File a ticket.", long_running=True, timeout=5)
def create_ticket(ticket: Ticket, urgent: Annotated[bool, "page someone"] = False) -> str:
    """Ignored: the explicit description wins."""
    return f"{ticket.title}/{ticket.priority.value}/{urgent}"


def test_bare_decorator() -> None:
    assert isinstance(add, LocalTool)
    assert add.name == "add"
    assert add.description == "Add two integers."
    assert add.parameters == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "the first."},
            "b": {"type": "integer", "description": "the second.", "default": 2},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert add.timeout is None and add.long_running is False


def test_decorated_function_is_still_callable() -> None:
    assert add(1) == 3
    assert add(1, b=5) == 6
    assert create_ticket(Ticket("t"), urgent=True) == "t/low/True"
    assert inspect.signature(add).parameters.keys() == {"a", "b"}


def test_decorator_with_arguments() -> None:
    assert create_ticket.name == "file_ticket"
    assert create_ticket.description == "File a ticket."
    assert create_ticket.timeout == 5
    wire = create_ticket.to_wire()
    assert wire["longRunning"] is True
    assert wire["parameters"]["properties"]["urgent"] == {
        "type": "boolean",
        "description": "page someone",
        "default": False,
    }
    assert wire["parameters"]["properties"]["ticket"]["properties"]["priority"]["enum"] == [
        "low",
        "high",
    ]


def test_invoke_validates_then_structures() -> None:
    args = {"ticket": {"title": "disk full", "priority": "high"}}
    assert create_ticket.validate_args(args) is None
    assert create_ticket.invoke(args) == "disk full/high/False"
    assert create_ticket.validate_args({"ticket": {"title": "x", "priority": "mid"}}) == (
        "invalid arguments: data.ticket.priority must be one of ['low', 'high']"
    )
    assert add.validate_args({"a": 1, "c": 2}) is not None
    assert add.invoke({"a": 40}) == 42


def test_empty_parentheses_work() -> None:
    @local_tool()
    def noop() -> str:
        return "ok"

    assert noop.name == "noop" and noop.description is None
    assert noop.parameters == {"type": "object", "properties": {}, "additionalProperties": False}
    assert noop.invoke({}) == "ok"


def test_invalid_function_names_and_shapes() -> None:
    with pytest.raises(SpecError, match="is invalid"):
        local_tool(lambda x: x)
    with pytest.raises(SpecError, match="is invalid"):

        @local_tool(name="bad name")
        def fine() -> None: ...

    with pytest.raises(SpecError, match=r"\*args"):

        @local_tool
        def star(*args: int) -> None: ...

    with pytest.raises(SpecError, match="timeout"):

        @local_tool(timeout=0)
        def zero() -> None: ...

    with pytest.raises(SpecError, match="needs a function"):
        local_tool(Ticket)


def test_concurrent_invocations_share_one_tool() -> None:
    barrier = threading.Barrier(4, timeout=5)

    @local_tool
    def slow_add(a: int, b: int) -> int:
        barrier.wait()  # all four calls are in flight at once
        return a + b

    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(slow_add.invoke, {"a": i, "b": 1}) for i in range(4)]
        results = [f.result(timeout=5) for f in futures]
    assert results == [1, 2, 3, 4]
