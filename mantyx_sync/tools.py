"""The contract client-resolved tools fulfil, and what a local tool may return.

Server-resolved tools (MANTYX runs them; the SDK only sees ``tool_result``
events) live in ``_models/refs``, loaded when first named. Client-resolved
tools run in this process: ``local`` tools, and ``mcp_local``/``a2a_local``
*definitions* (any :class:`ClientResolvedTool`) that open a live
:class:`ToolConnection` before a run is created.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, Union, runtime_checkable

import attrs

from ._base.argcheck import checked_init
from .errors import ArgumentTypeError
from .events import LocalToolCall
from .messages import Attachment

__all__ = [
    "ClientResolvedTool",
    "LocalToolCall",
    "ServerResolvedTool",
    "ToolConnection",
    "ToolLike",
    "ToolOutput",
]


@runtime_checkable
class ToolConnection(Protocol):
    """A live, resolved client-side toolset (an open MCP session, a resolved A2A peer).

    Implementations must be thread-safe: :meth:`call` runs on the tool pool,
    several calls at once.
    """

    kind: str
    """``"mcp_local"`` or ``"a2a_local"``."""
    name: str
    """The ref's ``name``: the MCP server label, or the A2A tool name."""

    def wire_ref(self) -> dict[str, Any]:
        """The resolved ``tools[]`` entry (``agentCard`` / ``serverInfo`` + ``tools``)."""
        ...

    def tool_names(self) -> Sequence[str]:
        """Every model-facing tool name this connection declares."""
        ...

    def input_schema(self, tool_name: str) -> Mapping[str, Any] | None:
        """The JSON Schema the args of ``tool_name`` are validated against, if any."""
        ...

    def call(self, call: LocalToolCall, *, timeout: float | None) -> str:
        """Answer one ``local_tool_call``; the text goes to the model.

        :raises ToolError: for a tool-level failure the model should see as an error.
        """
        ...

    def close(self) -> None:
        """Release the connection (stop the subprocess, end the HTTP session). Idempotent."""
        ...


@runtime_checkable
class ClientResolvedTool(Protocol):
    """A definition that resolves into a :class:`ToolConnection` before a run starts."""

    kind: str
    name: str

    def connect(self) -> ToolConnection:
        """Start or reach the resource and discover its tools.

        :raises ToolResolutionError: when it cannot, with what went wrong.
        """
        ...


class ServerResolvedTool(Protocol):
    """A reference MANTYX resolves itself (:class:`~mantyx_sync.MantyxTool`,
    :class:`~mantyx_sync.PluginTool`, ...): sent as its ``tools[]`` entry."""

    def to_wire(self) -> dict[str, Any]:
        """The ``tools[]`` entry."""
        ...


ToolLike = Union[ServerResolvedTool, ClientResolvedTool, Callable[..., Any]]  # noqa: UP007
"""What ``tools=`` takes: a server-resolved reference, a local MCP/A2A
definition, a :class:`~mantyx_sync.LocalTool` or a plain typed function. A
type checker flags anything else (a dict, a string) where the list is written."""


def _files_tuple(value: Iterable[Attachment | Path]) -> tuple[Attachment | Any, ...]:
    return tuple(value)


@checked_init(ArgumentTypeError)
@attrs.frozen
class ToolOutput:
    """What a local tool handler may return to send files along with its result.

    ``result`` is sent like any return value (a ``str`` as is, anything else as
    JSON); ``files`` (:class:`~mantyx_sync.Attachment` values or
    ``pathlib.Path`` files) go with it as the tool result's ``files[]``:
    at most 20, 5 MB decoded in total, inline only. A set that
    breaks a limit is answered to the model as a tool error instead.

    Example::

        @mantyx_sync.local_tool
        def chart(city: str) -> mantyx_sync.ToolOutput:
            \"\"\"Draw the weather chart of a city.\"\"\"
            png = render(city)
            return mantyx_sync.ToolOutput("chart attached",
                                          files=[Attachment.from_bytes(png, filename="chart.png")])
    """

    result: Any
    files: tuple[Attachment | Any, ...] = attrs.field(default=(), converter=_files_tuple)
