"""Limit checks for an agent spec's values, its turn input and its resolved tool refs:
each raises :class:`~mantyx_sync.errors.SpecError` naming the argument to fix and the
documented limit, before anything is sent."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from .._base.limits import (
    HEADER_VALUE_MAX_BYTES,
    MCP_LOCAL_TOOLS_MAX,
    METADATA_KEY_RE,
    METADATA_MAX_BYTES,
    METADATA_MAX_ENTRIES,
    METADATA_VALUE_MAX_CHARS,
    TOOL_NAME_RE,
)
from ..errors import ArgumentTypeError, SpecError

__all__ = [
    "check_choice",
    "check_int",
    "check_text",
    "coerce_budgets",
    "coerce_metadata",
    "coerce_reasoning_level",
    "coerce_text",
    "is_int",
    "json_size",
    "validate_tool_refs",
]

REASONING_LEVELS: Final = frozenset({"off", "low", "medium", "high"})
"""The string forms of ``reasoning_level``; integers 0-100 also work."""


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def json_size(value: Any, path: str) -> int:
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"is not JSON-serializable ({exc})", path=path) from exc
    return len(text.encode("utf-8"))


def check_choice(value: Any, choices: Collection[str], path: str, expected: str) -> str:
    """``value`` when it is one of ``choices``; else :class:`SpecError`: "must be ``expected``"."""
    if value not in choices:
        raise SpecError(f"must be {expected}, got {value!r}", path=path)
    return str(value)


def check_int(value: Any, path: str, *, low: int, high: int | None = None) -> int:
    if not is_int(value):
        raise ArgumentTypeError(f"must be an integer, got {type(value).__name__}", path=path)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise SpecError(f"must be {bound}, got {value}", path=path)
    return int(value)


def coerce_metadata(value: Any, path: str = "metadata") -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(
            f"must be a mapping of str to str, got {type(value).__name__}", path=path
        )
    if len(value) > METADATA_MAX_ENTRIES:
        raise SpecError(f"has {len(value)} entries; the limit is {METADATA_MAX_ENTRIES}", path=path)
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not METADATA_KEY_RE.match(key):
            raise SpecError(
                f"key {key!r} must be 1-64 characters from A-Z, a-z, 0-9, '.', '_' and '-'",
                path=path,
            )
        where = f"{path}[{key!r}]"
        if not isinstance(item, str):
            raise SpecError(f"must be a string, got {type(item).__name__}", path=where)
        if len(item) > METADATA_VALUE_MAX_CHARS:
            raise SpecError(
                f"is {len(item)} characters; the limit is {METADATA_VALUE_MAX_CHARS}", path=where
            )
        out[key] = item
    size = json_size(out, path)
    if size > METADATA_MAX_BYTES:
        raise SpecError(f"serializes to {size} bytes; the limit is {METADATA_MAX_BYTES}", path=path)
    return out


def coerce_reasoning_level(value: Any, path: str = "reasoning_level") -> str | int:
    if isinstance(value, str):
        words = "one of 'off', 'low', 'medium', 'high' or an integer 0-100"
        return check_choice(value, REASONING_LEVELS, path, words)
    if not is_int(value):
        raise ArgumentTypeError(
            "must be 'off', 'low', 'medium', 'high' or an integer 0-100, "
            f"got {type(value).__name__}",
            path=path,
        )
    return check_int(value, path, low=0, high=100)


def coerce_budgets(value: Any, path: str = "budgets") -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(f"must be a mapping, got {type(value).__name__}", path=path)
    out = dict(value)
    if "maxToolTurns" in out:
        check_int(out["maxToolTurns"], f"{path}['maxToolTurns']", low=1)
    json_size(out, path)
    return out


def check_text(value: Any, path: str) -> str:
    """``value`` when it is a non-empty string (an id, a filter); else :class:`SpecError`."""
    if not isinstance(value, str) or not value:
        raise SpecError(f"must be a non-empty string, got {value!r}", path=path)
    return value


def coerce_text(value: Any, path: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArgumentTypeError(f"must be a string, got {type(value).__name__}", path=path)
    if not value:
        raise SpecError("must be a non-empty string", path=path)
    return value


def _check_name(name: Any, path: str) -> str:
    if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
        shown = repr(name) if isinstance(name, str) else type(name).__name__
        raise SpecError(
            f"tool name {shown} must be 1-64 characters from a-z, A-Z, 0-9 and '_'", path=path
        )
    return name


def _check_headers(headers: Any, path: str) -> None:
    if headers is None:
        return
    if not isinstance(headers, Mapping):
        raise SpecError(f"must be a mapping of str to str, got {type(headers).__name__}", path=path)
    for key, value in headers.items():
        if not isinstance(key, str):
            raise SpecError("header names must be strings", path=path)
        # The value is a secret more often than not: describe it, never show it.
        if not isinstance(value, str):
            raise SpecError(
                f"header {key!r} must have a string value, got {type(value).__name__}", path=path
            )
        size = len(value.encode("utf-8"))
        if size > HEADER_VALUE_MAX_BYTES:
            raise SpecError(
                f"header {key!r} value is {size} bytes; the limit is {HEADER_VALUE_MAX_BYTES}",
                path=path,
            )


def validate_tool_refs(refs: Sequence[Mapping[str, Any]], *, connected: bool = True) -> None:
    """Check resolved ``tools[]`` entries before they are sent.

    Every model-facing name must match ``^[a-zA-Z0-9_]{1,64}$`` and be unique
    across the spec (``local``, ``a2a``, ``a2a_local`` names and each
    ``mcp_local`` ``tools[].name``; the server prefixes remote ``mcp`` tools).
    ``mcp_local`` refs carry 1-64 tools and distinct labels; ``a2a``/``mcp``
    header values are strings of at most 8 KB. With ``connected=False`` (before
    the MCP servers are reached) an ``mcp_local`` ref is only its label.
    """
    seen: dict[str, str] = {}
    mcp_labels: dict[str, str] = {}

    def claim(name: str, path: str) -> None:
        if name in seen:
            raise SpecError(
                f"tool name {name!r} is already used by {seen[name]}; "
                "model-facing names must be unique",
                path=path,
            )
        seen[name] = path

    for index, ref in enumerate(refs):
        where = f"tools[{index}]"
        if not isinstance(ref, Mapping):
            raise SpecError(f"must be an object, got {type(ref).__name__}", path=where)
        kind = ref.get("kind")
        if kind in ("local", "a2a", "a2a_local"):
            claim(_check_name(ref.get("name"), f"{where}.name"), f"{where}.name")
        elif kind == "mcp":
            _check_name(ref.get("name"), f"{where}.name")
        elif kind == "mcp_local":
            label = _check_name(ref.get("name"), f"{where}.name")
            if label in mcp_labels:
                raise SpecError(
                    f"MCP server label {label!r} is already used by {mcp_labels[label]}",
                    path=f"{where}.name",
                )
            mcp_labels[label] = f"{where}.name"
            if not connected:
                continue
            tools = ref.get("tools")
            if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
                raise SpecError("must be a list of MCP tools", path=f"{where}.tools")
            if not 1 <= len(tools) <= MCP_LOCAL_TOOLS_MAX:
                raise SpecError(
                    f"has {len(tools)} tools; an mcp_local ref needs 1-{MCP_LOCAL_TOOLS_MAX}",
                    path=f"{where}.tools",
                )
            for position, tool in enumerate(tools):
                tool_path = f"{where}.tools[{position}].name"
                name = tool.get("name") if isinstance(tool, Mapping) else None
                claim(_check_name(name, tool_path), tool_path)
        if kind in ("a2a", "mcp"):
            _check_headers(ref.get("headers"), f"{where}.headers")
