"""Tools the CLI tests pass as ``--tool cli_tools:NAME``."""

from __future__ import annotations

import mantyx_sync


# Read-only, so the emulator's stand-in model calls it unscripted.
@mantyx_sync.local_tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@mantyx_sync.local_tool(read_only=True)
def broken(text: str) -> str:
    """A tool that always fails.

    Args:
        text: Anything.
    """
    raise RuntimeError("the tool broke")


not_a_function = 42


def wait_for(path: str) -> str:
    """Wait until a line is written to the named pipe ``path``; return it.

    Args:
        path: A named pipe (FIFO) the test writes to when the tool may finish.
    """
    with open(path, encoding="utf-8") as pipe:
        return pipe.readline().strip()
