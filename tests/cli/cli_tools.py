"""Tools the CLI tests pass as ``--tool cli_tools:NAME``."""

from __future__ import annotations


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def broken(text: str) -> str:
    """A tool that always fails.

    Args:
        text: Anything.
    """
    raise RuntimeError("the tool broke")


not_a_function = 42
