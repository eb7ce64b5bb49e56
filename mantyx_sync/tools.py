"""The contract client-resolved tools fulfil, and what a local tool may return.

Server-resolved tools (MANTYX runs them; the SDK only sees ``tool_result``
events) are references: :class:`MantyxTool`, :class:`PluginTool`,
:class:`A2ATool`, :class:`McpTool`. Client-resolved tools run in this
process: ``local`` tools, and ``mcp_local``/``a2a_local``
*definitions* (any :class:`ClientResolvedTool`) that open a live
:class:`ToolConnection` before a run is created.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, Union, runtime_checkable

import attrs

from ._base.argcheck import checked_init
from ._base.lazy import load_lazily
from .errors import ArgumentTypeError
from .messages import Attachment

if TYPE_CHECKING:
    from .events import LocalToolCall

__all__ = [
    "A2ATool",
    "ClientResolvedTool",
    "LocalToolCall",
    "MantyxTool",
    "McpTool",
    "PluginTool",
    "ServerResolvedTool",
    "ToolActivity",
    "ToolConnection",
    "ToolLike",
    "ToolOutput",
]


def __getattr__(name: str) -> Any:
    # LocalToolCall, for a ToolConnection's authors, loads with the event classes
    # on first use: the imports of a plain run need none of them.
    return load_lazily(name, {"LocalToolCall": "mantyx_sync.events"}, __name__, globals())


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


@attrs.frozen(kw_only=True)
class ToolActivity:
    """One step of a local tool call, for progress output and metrics.

    ``phase`` is ``"start"`` when a handler is about to run and ``"end"`` once
    its answer was handed to the server; ``duration`` (seconds, handler time),
    ``ok``, ``error`` and ``delivery`` are set on ``"end"``. ``delivery`` says
    what became of the answer: ``"delivered"``, ``"run_terminal"`` (the run had
    ended: dropped), ``"answered_elsewhere"``, ``"rejected"`` or ``"failed"``.
    Every ``"end"`` of a call the run was answered for comes before ``run()`` returns.
    """

    phase: Literal["start", "end"]
    tool_use_id: str
    name: str
    kind: str
    duration: float | None = None
    ok: bool | None = None
    error: str | None = None
    delivery: str | None = None


def _headers_tuple(value: Mapping[str, str] | None) -> tuple[tuple[str, str], ...] | None:
    return None if value is None else tuple(value.items())


def _names_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


@checked_init(ArgumentTypeError)
@attrs.frozen
class MantyxTool:
    """A workspace tool (HTTP / Code / Plugin row) referenced by id; MANTYX runs it."""

    kind: ClassVar[str] = "mantyx"
    id: str

    def to_wire(self) -> dict[str, Any]:
        """The ``tools[]`` entry for this reference."""
        return {"kind": self.kind, "id": self.id}


@checked_init(ArgumentTypeError)
@attrs.frozen
class PluginTool:
    """A platform plugin tool referenced by name (e.g. ``web_search``); MANTYX runs it."""

    kind: ClassVar[str] = "mantyx_plugin"
    name: str

    def to_wire(self) -> dict[str, Any]:
        """The ``tools[]`` entry for this reference."""
        return {"kind": self.kind, "name": self.name}


@checked_init(ArgumentTypeError)
@attrs.frozen
class A2ATool:
    """A remote Agent2Agent peer MANTYX can reach itself.

    ``headers`` are sent by MANTYX on every A2A request; their values never
    appear in this object's repr.
    """

    kind: ClassVar[str] = "a2a"
    name: str
    agent_card_url: str
    description: str | None = attrs.field(default=None, kw_only=True)
    headers: tuple[tuple[str, str], ...] | None = attrs.field(
        default=None, kw_only=True, converter=_headers_tuple, repr=False
    )
    context_id: str | None = attrs.field(default=None, kw_only=True)

    def to_wire(self) -> dict[str, Any]:
        """The ``tools[]`` entry for this reference."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "name": self.name,
            "agentCardUrl": self.agent_card_url,
        }
        if self.description is not None:
            out["description"] = self.description
        if self.headers is not None:
            out["headers"] = dict(self.headers)
        if self.context_id is not None:
            out["contextId"] = self.context_id
        return out


@checked_init(ArgumentTypeError)
@attrs.frozen
class McpTool:
    """A remote MCP server (Streamable HTTP) MANTYX dials itself.

    MANTYX exposes each of its tools as ``<name>_<tool>``; ``tool_filter`` is an
    allowlist of un-prefixed tool names.
    """

    kind: ClassVar[str] = "mcp"
    name: str
    url: str
    headers: tuple[tuple[str, str], ...] | None = attrs.field(
        default=None, kw_only=True, converter=_headers_tuple, repr=False
    )
    tool_filter: tuple[str, ...] | None = attrs.field(
        default=None, kw_only=True, converter=_names_tuple
    )

    def to_wire(self) -> dict[str, Any]:
        """The ``tools[]`` entry for this reference."""
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "url": self.url}
        if self.headers is not None:
            out["headers"] = dict(self.headers)
        if self.tool_filter is not None:
            out["toolFilter"] = list(self.tool_filter)
        return out
