"""What every peer tool does alike: check its definition (the tool name; header
values, which become secrets), freeze its mappings, bound a call's time and, for
the peers the model sees as one tool (A2A, Agent API), answer as that tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .._base.limits import HEADER_VALUE_MAX_BYTES, TOOL_NAME_RE
from .._base.redact import register_secret
from ..errors import SpecError

__all__ = ["OneTool", "call_limit", "check_headers", "check_name", "pairs"]


def check_name(kind: str, name: object) -> None:
    """:raises SpecError: ``name`` is not a tool name (``^[a-zA-Z0-9_]{1,64}$``)."""
    if not (isinstance(name, str) and TOOL_NAME_RE.match(name)):
        raise SpecError(f"{kind} name {name!r} must match ^[a-zA-Z0-9_]{{1,64}}$", path="name")


def check_headers(kind: str, name: str, headers: Mapping[str, str] | None) -> None:
    """Check header values (strings, as the argument check made sure) and register
    them as secrets (never logged).

    :raises SpecError: a value longer than the server accepts.
    """
    for key, value in (headers or {}).items():
        if len(value.encode("utf-8")) > HEADER_VALUE_MAX_BYTES:
            raise SpecError(
                f"{kind} {name!r}: header {key!r} is longer than {HEADER_VALUE_MAX_BYTES} bytes"
            )
        register_secret(value)


def pairs(value: Mapping[str, str] | None) -> tuple[tuple[str, str], ...] | None:
    """A mapping frozen as key/value pairs, for an immutable definition."""
    return None if value is None else tuple((str(k), str(v)) for k, v in value.items())


def call_limit(own: float, given: float | None) -> float:
    """Seconds one call may take: the definition's ``timeout``, or the caller's if smaller."""
    return own if given is None else min(own, given)


class OneTool:
    """A connection the model sees as one tool, named ``name``, taking :attr:`INPUT_SCHEMA`."""

    INPUT_SCHEMA: ClassVar[Mapping[str, Any]]
    name: str

    def tool_names(self) -> Sequence[str]:
        """The one model-facing name."""
        return [self.name]

    def input_schema(self, tool_name: str) -> Mapping[str, Any] | None:
        """:attr:`INPUT_SCHEMA` for the one name."""
        return self.INPUT_SCHEMA if tool_name == self.name else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
