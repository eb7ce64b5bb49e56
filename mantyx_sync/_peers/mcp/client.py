"""A synchronous MCP client over one :class:`~mantyx_sync._peers.jsonrpc.Endpoint`:
handshake, tool listing, tool calls, result flattening. It declares no client
capabilities (roots, sampling, elicitation): the SDK has nothing to offer there.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any, Final

from ..._version import __version__
from ..jsonrpc import Endpoint, JsonRpcError, RequestTimeout, SessionExpired
from .http import HttpTransport
from .stdio import StdioTransport

__all__ = ["McpClient", "McpProtocolError", "describe_error", "flatten_call_result"]

logger = logging.getLogger(__name__)

SUPPORTED_PROTOCOL_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""Handshake versions we accept, newest (the one we offer) first."""

_MAX_PAGES: Final = 100


class McpProtocolError(Exception):
    """The server broke the MCP handshake or listing contract."""


class McpClient:
    """One MCP session; after :meth:`open`, :meth:`call_tool` may run on many threads.

    :param transport: a not-yet-started transport.
    :param label: the definition's name (for logs and thread names).
    :param timeout: bound for the handshake and listing requests, in seconds.
    """

    def __init__(
        self, transport: StdioTransport | HttpTransport, *, label: str, timeout: float
    ) -> None:
        self._transport = transport
        self._label = label
        self._timeout = timeout
        self._endpoint = Endpoint(transport.send, label=f"mcp:{label}")
        self._reinit_lock = threading.Lock()
        self._generation = 0
        self.server_info: dict[str, Any] | None = None
        """The ``serverInfo`` block from ``initialize``, verbatim."""

    def open(self) -> None:
        """Start the transport and run ``initialize`` + ``notifications/initialized``.

        :raises McpProtocolError: unsupported protocol version or malformed reply.
        :raises PeerGoneError, RequestTimeout, JsonRpcError, OSError: as raised below.
        """
        self._transport.start(self._endpoint)
        self._handshake()

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool of the server, following ``nextCursor`` until the last page."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            result = self._request("tools/list", params, timeout=self._timeout)
            if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                raise McpProtocolError("tools/list returned no 'tools' array")
            tools.extend(t for t in result["tools"] if isinstance(t, dict))
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor:
                return tools
            if next_cursor in seen:
                raise McpProtocolError("tools/list repeated a cursor")
            seen.add(next_cursor)
            cursor = next_cursor
        raise McpProtocolError(f"tools/list did not end after {_MAX_PAGES} pages")

    def call_tool(
        self, name: str, arguments: Mapping[str, Any], *, timeout: float | None
    ) -> dict[str, Any]:
        """Run ``tools/call``; returns the ``CallToolResult`` object.

        :raises JsonRpcError: the server answered with a JSON-RPC error.
        :raises RequestTimeout: no answer in time (a cancellation was sent).
        :raises PeerGoneError: the server went away.
        """
        result = self._request(
            "tools/call", {"name": name, "arguments": dict(arguments)}, timeout=timeout
        )
        if not isinstance(result, dict):
            raise McpProtocolError("tools/call returned a non-object result")
        return result

    def close(self) -> None:
        """Close the transport (stops the process / ends the HTTP session). Idempotent."""
        self._transport.close()

    def _request(self, method: str, params: Mapping[str, Any], *, timeout: float | None) -> Any:
        generation = self._generation
        try:
            return self._endpoint.request(method, params, timeout=timeout)
        except SessionExpired:
            logger.info("MCP server %r lost our session; re-initialising", self._label)
            self._reinitialize(generation)
        try:
            return self._endpoint.request(method, params, timeout=timeout)
        except SessionExpired as exc:
            raise SessionExpired(
                f"MCP server {self._label!r} lost the session again right after re-initialising"
            ) from exc

    def _reinitialize(self, generation: int) -> None:
        # The transport keeps the old session id until the new initialize
        # answers, so concurrent calls never go out without one; those that hit
        # the old session's 404 wait here and then retry in the new session.
        with self._reinit_lock:
            if generation != self._generation:
                return  # another thread already did it
            self._handshake()
            self._generation += 1

    def _handshake(self) -> None:
        offered = SUPPORTED_PROTOCOL_VERSIONS[0]
        result = self._endpoint.request(
            "initialize",
            {
                "protocolVersion": offered,
                "capabilities": {},
                "clientInfo": {"name": "mantyx-sync", "version": __version__},
            },
            timeout=self._timeout,
            cancel_on_timeout=False,
        )
        if not isinstance(result, dict):
            raise McpProtocolError("initialize returned a non-object result")
        version = result.get("protocolVersion")
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise McpProtocolError(
                f"server wants MCP protocol version {version!r}; this client supports "
                + ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
            )
        info = result.get("serverInfo")
        self.server_info = dict(info) if isinstance(info, dict) else None
        if isinstance(self._transport, HttpTransport):
            self._transport.protocol_version = version
        self._endpoint.notify("notifications/initialized")
        if isinstance(self._transport, HttpTransport):
            self._transport.listen()
        logger.debug("MCP server %r initialised (protocol %s)", self._label, version)


def _block_text(block: Mapping[str, Any]) -> str | None:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else None
    if kind in ("image", "audio"):
        data = block.get("data")
        size = len(data) if isinstance(data, str) else 0
        return f"[{kind}: {block.get('mimeType', 'unknown type')}, {size} bytes base64]"
    if kind == "resource_link":
        name = block.get("name") or block.get("title") or ""
        return f"[resource link: {name} {block.get('uri', '')}]".replace("  ", " ")
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, dict):
            if isinstance(resource.get("text"), str):
                return str(resource["text"])
            blob = resource.get("blob")
            size = len(blob) if isinstance(blob, str) else 0
            return (
                f"[resource: {resource.get('uri', '')} "
                f"({resource.get('mimeType', 'unknown type')}, {size} bytes base64)]"
            )
        return "[resource]"
    return f"[{kind} content]" if isinstance(kind, str) else None


def flatten_call_result(result: Mapping[str, Any]) -> tuple[str, bool]:
    """The model-facing text of a ``CallToolResult`` and its ``isError`` flag.

    Text blocks are joined with newlines; non-text blocks become short
    bracketed lines; ``structuredContent`` (as JSON) stands in when there is no
    content at all.
    """
    lines: list[str] = []
    content = result.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                text = _block_text(block)
                if text is not None:
                    lines.append(text)
    if not lines and "structuredContent" in result:
        lines.append(json.dumps(result["structuredContent"], ensure_ascii=False))
    return "\n".join(lines), bool(result.get("isError"))


def describe_error(exc: BaseException) -> str:
    """A model-facing message for a failed call (never contains header values)."""
    if isinstance(exc, JsonRpcError):
        return f"MCP error {exc.code}: {exc.message}"
    if isinstance(exc, RequestTimeout):
        return f"MCP tool call timed out: {exc}"
    return str(exc) or type(exc).__name__
