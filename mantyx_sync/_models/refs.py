"""Server-resolved tool references: MANTYX runs these tools itself.

Loaded with the first ``mantyx_sync.MantyxTool`` (or ``PluginTool``, ``A2ATool``,
``McpTool``): no code of the package needs them until a caller names one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import attrs

from .._base.argcheck import checked_init
from ..errors import ArgumentTypeError

__all__ = ["A2ATool", "MantyxTool", "McpTool", "PluginTool"]


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
