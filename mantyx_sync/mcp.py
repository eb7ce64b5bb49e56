"""``mcp_local`` tools: a whole MCP server that only this process can reach.

Calls are routed only through the connection's own map from model-facing name to
upstream name: a sanitised name (:func:`model_names`) cannot be turned back.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final

import attrs

from ._base.argcheck import checked, checked_init
from ._base.limits import MCP_LOCAL_TOOLS_MAX
from ._base.redact import display_url, register_secret
from ._peers.definition import call_limit, check_headers, check_name, pairs
from ._peers.jsonrpc import JsonRpcError, PeerGoneError, RequestTimeout
from ._peers.mcp.client import McpClient, McpProtocolError, describe_error, flatten_call_result
from ._peers.mcp.http import HttpTransport
from ._peers.mcp.stdio import StdioTransport
from .errors import ArgumentTypeError, SpecError, ToolError, ToolResolutionError
from .events import LocalToolCall

__all__ = ["LocalMcp", "McpConnection", "define_local_mcp"]

logger: logging.Logger = logging.getLogger(__name__)

McpCallable = Callable[[str, Mapping[str, Any]], str | Mapping[str, Any]]
"""Bring-your-own dispatcher: ``call(upstream_tool_name, arguments)`` returns the
text for the model or an MCP ``CallToolResult``-shaped dict."""

_MAX_NAME: Final = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")
_CANNOT_CONNECT: Final = (OSError, PeerGoneError, RequestTimeout, JsonRpcError, McpProtocolError)
_SECRET_ENV_NAME: Final = re.compile(r"KEY|TOKEN|SECRET|PASS|AUTH|CRED|COOKIE|SESSION", re.I)


def _str_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _opt_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def _catalog(value: Iterable[Mapping[str, Any]] | None) -> tuple[dict[str, Any], ...] | None:
    return None if value is None else tuple(dict(tool) for tool in value)


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True, eq=False)
class LocalMcp:
    """An ``mcp_local`` definition; see :func:`define_local_mcp`.

    Immutable and safe to share; :meth:`connect` may be called once per run or
    session. ``env`` and ``headers`` values never appear in the repr.
    """

    kind: ClassVar[str] = "mcp_local"
    name: str
    command: str | None = None
    args: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    env: tuple[tuple[str, str], ...] | None = attrs.field(default=None, converter=pairs, repr=False)
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] | None = attrs.field(
        default=None, converter=pairs, repr=False
    )
    tool_filter: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    prefix: bool = True
    timeout: float = 30.0
    catalog: tuple[dict[str, Any], ...] | None = attrs.field(
        default=None, converter=_catalog, repr=False
    )
    call: McpCallable | None = attrs.field(default=None, repr=False)
    server_info: dict[str, Any] | None = attrs.field(default=None, repr=False)

    def connect(self) -> McpConnection:
        """Start or reach the server, handshake, list and name its tools.

        :raises ToolResolutionError: the server could not be started, reached,
            initialised or listed, or it has no usable tools; everything started
            is cleaned up first.
        """
        if self.catalog is not None:
            assert self.call is not None
            return McpConnection(self, list(self.catalog), self.server_info, client=None)
        if self.cwd is not None and not os.path.isdir(self.cwd):
            raise ToolResolutionError(
                f"mcp_local {self.name!r}: working directory {self.cwd!r} does not exist"
            )
        client = McpClient(self._transport(), label=self.name, timeout=self.timeout)
        try:
            client.open()
            return McpConnection(self, client.list_tools(), client.server_info, client=client)
        except BaseException as exc:
            client.close()
            if isinstance(exc, FileNotFoundError):
                # Popen names the program (or the working directory, gone since the check).
                gone = "command" if exc.filename in (None, self.command) else repr(exc.filename)
                problem = f"cannot start {self.command!r}: {gone} not found"
            elif isinstance(exc, _CANNOT_CONNECT):
                where = f"url {display_url(self.url)}" if self.url else f"command {self.command!r}"
                problem = f"cannot connect to the MCP server ({where}): {describe_error(exc)}"
            else:
                raise
            raise ToolResolutionError(f"mcp_local {self.name!r}: {problem}") from exc

    def _transport(self) -> StdioTransport | HttpTransport:
        if self.command is not None:
            return StdioTransport(
                self.command,
                self.args,
                env=dict(self.env) if self.env else None,
                cwd=self.cwd,
                label=self.name,
            )
        assert self.url is not None
        return HttpTransport(
            self.url,
            dict(self.headers) if self.headers else None,
            read_timeout=self.timeout + 5.0,
            label=self.name,
        )


@checked(ArgumentTypeError)
def define_local_mcp(
    name: str,
    *,
    command: str | Sequence[str] | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    tool_filter: Iterable[str] | None = None,
    prefix: bool = True,
    timeout: float = 30.0,
    catalog: Iterable[Mapping[str, Any]] | None = None,
    call: McpCallable | None = None,
    server_info: Mapping[str, Any] | None = None,
) -> LocalMcp:
    """Define an MCP server whose tools the model may call, run by this process.

    Give exactly one of ``command`` (a stdio server started as a subprocess:
    the program with ``args`` its extra argv, or the whole argv as a list, the
    way MCP client configurations write it; ``env`` is added to this process's
    environment),
    ``url`` (a Streamable HTTP endpoint, ``headers`` sent on every request) or
    ``catalog`` + ``call`` (tools you already listed with your own MCP client).

    ::

        fs = define_local_mcp(
            "fs",
            command="npx",
            args=["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"],
            tool_filter=["read_text_file", "list_directory"],
        )
        # the same server, its argv as one list
        fs = define_local_mcp(
            "fs", command=["npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]
        )

    :param name: the server label (``mcpServer`` on calls) and, with ``prefix``,
        the model-facing prefix. Must match ``^[a-zA-Z0-9_]{1,64}$``.
    :param tool_filter: upstream tool names to keep (others are dropped).
    :param prefix: prefix model-facing names with ``<name>_``.
    :param timeout: seconds for start-up, the handshake, listing, and each call
        (a call also honours the executor's timeout; the smaller wins).
    :param server_info: the ``serverInfo`` to declare with a ``catalog``.
    :raises SpecError: a bad name, header, or combination of sources.

    .. versionadded:: 0.1
    """
    check_name("mcp_local", name)
    if command is not None and not isinstance(command, str):
        # The whole argv as a list (or tuple): program first, then its arguments.
        argv = list(command)
        if args:
            raise SpecError(
                f"mcp_local {name!r}: command= is already the whole argv list; "
                "put every argument in it and leave args= out (or pass command= as a str)",
                path="command",
            )
        if not argv or not argv[0]:
            raise SpecError(
                f"mcp_local {name!r}: command= as a list must be a non-empty list of "
                "strings, the program first",
                path="command",
            )
        command, args = argv[0], tuple(argv[1:])
    if cwd is not None:
        cwd = os.fspath(cwd)
    sources = [s for s, v in (("command", command), ("url", url), ("catalog", catalog)) if v]
    if len(sources) != 1:
        raise SpecError(
            f"mcp_local {name!r}: give exactly one of command=, url= or catalog= "
            f"(got {', '.join(sources) or 'none'})"
        )
    if catalog is not None and call is None:
        raise SpecError(f"mcp_local {name!r}: catalog= needs call= to run the tools")
    if call is not None and catalog is None:
        raise SpecError(f"mcp_local {name!r}: call= is only used with catalog=")
    if url is not None and not re.match(r"^https?://", url):
        raise SpecError(f"mcp_local {name!r}: url must be http:// or https://", path="url")
    if headers and command is not None:
        raise SpecError(f"mcp_local {name!r}: headers= apply to url= servers only")
    if env and command is None:
        raise SpecError(f"mcp_local {name!r}: env= applies to command= servers only")
    check_headers("mcp_local", name, headers)
    for key, value in (env or {}).items():
        # Only values whose names say they are credentials: masking every env
        # value (paths, flags) would blank ordinary words out of every log line.
        if _SECRET_ENV_NAME.search(key):
            register_secret(value)
    if timeout <= 0:
        raise SpecError(f"mcp_local {name!r}: timeout must be positive")
    return LocalMcp(
        name=name,
        command=command,
        args=tuple(args),
        env=env,
        cwd=cwd,
        url=url,
        headers=headers,
        tool_filter=tool_filter,
        prefix=prefix,
        timeout=float(timeout),
        catalog=catalog,
        call=call,
        server_info=dict(server_info) if server_info is not None else None,
    )


def model_names(label: str | None, upstream: Sequence[str]) -> list[str]:
    """Model-facing names for ``upstream`` tool names, in the same order, all unique.

    Sanitised to ``[a-zA-Z0-9_]``, prefixed ``<label>_`` when ``label`` is given,
    and capped at 64 characters with a short hash suffix when too long or clashing.
    """
    out: list[str] = []
    taken: set[str] = set()
    for original in upstream:
        base = _UNSAFE.sub("_", original) or "tool"
        if label:
            base = f"{label}_{base}"
        candidate = base
        if len(candidate) > _MAX_NAME or candidate in taken:
            digest = hashlib.sha1(original.encode("utf-8")).hexdigest()
            salt = 0
            while True:
                tag = digest[:8] if salt == 0 else f"{digest[:6]}{salt:02d}"
                candidate = f"{base[: _MAX_NAME - len(tag) - 1]}_{tag}"
                if candidate not in taken:
                    break
                salt += 1
        taken.add(candidate)
        out.append(candidate)
    return out


class McpConnection:
    """A live ``mcp_local`` toolset (implements :class:`~mantyx_sync.tools.ToolConnection`).

    Thread-safe: :meth:`call` may run on many threads at once over one MCP session.
    """

    kind: str = "mcp_local"

    def __init__(
        self,
        definition: LocalMcp,
        tools: list[dict[str, Any]],
        server_info: Mapping[str, Any] | None,
        *,
        client: McpClient | None,
    ) -> None:
        self.name: str = definition.name
        self._definition = definition
        self._client = client
        self._server_info = dict(server_info) if server_info is not None else None
        kept = [t for t in tools if isinstance(t.get("name"), str) and t["name"]]
        if definition.tool_filter is not None:
            wanted = set(definition.tool_filter)
            missing = wanted - {t["name"] for t in kept}
            if missing:
                logger.warning(
                    "mcp_local %r: tool_filter names not offered by the server: %s",
                    self.name,
                    ", ".join(sorted(missing)),
                )
            kept = [t for t in kept if t["name"] in wanted]
        if not kept:
            raise ToolResolutionError(
                f"mcp_local {self.name!r}: the server offers no tools"
                + (" matching tool_filter" if definition.tool_filter is not None else "")
                + f" ({len(tools)} listed); check tool_filter or the server"
            )
        if len(kept) > MCP_LOCAL_TOOLS_MAX:
            raise ToolResolutionError(
                f"mcp_local {self.name!r}: the server offers {len(kept)} tools, more than "
                f"the {MCP_LOCAL_TOOLS_MAX} allowed; pass tool_filter=[...] with the "
                "upstream names you need"
            )
        names = model_names(self.name if definition.prefix else None, [t["name"] for t in kept])
        # By model-facing name, in server order: the listed tool renamed, and its upstream name.
        self._tools = {name: {**tool, "name": name} for name, tool in zip(names, kept, strict=True)}
        self._upstream = {name: tool["name"] for name, tool in zip(names, kept, strict=True)}

    def wire_ref(self) -> dict[str, Any]:
        """The ``tools[]`` entry: ``{"kind", "name", "serverInfo"?, "tools"}``."""
        ref: dict[str, Any] = {"kind": self.kind, "name": self.name}
        if self._server_info is not None:
            ref["serverInfo"] = self._server_info
        ref["tools"] = [dict(tool) for tool in self._tools.values()]
        return ref

    def tool_names(self) -> Sequence[str]:
        """The model-facing names, in server order."""
        return list(self._upstream)

    def upstream_name(self, tool_name: str) -> str | None:
        """The server's own name for a model-facing name (``None`` if unknown)."""
        return self._upstream.get(tool_name)

    def input_schema(self, tool_name: str) -> Mapping[str, Any] | None:
        """The tool's ``inputSchema`` as the server listed it."""
        schema = self._tools.get(tool_name, {}).get("inputSchema")
        return schema if isinstance(schema, dict) else None

    def call(self, call: LocalToolCall, *, timeout: float | None) -> str:
        """Run one ``local_tool_call``; returns the flattened text.

        :raises ToolError: unknown tool, ``isError`` result, JSON-RPC error,
            timeout, or a dead server.
        """
        model_name = call.mcp_tool_name or call.name
        upstream = self._upstream.get(model_name)
        if upstream is None:
            raise ToolError(f"unknown tool {model_name!r} on MCP server {self.name!r}")
        if self._client is None:
            assert self._definition.call is not None
            reply = self._definition.call(upstream, dict(call.args))
            if isinstance(reply, str):
                return reply
            text, is_error = flatten_call_result(reply)
        else:
            limit = call_limit(self._definition.timeout, timeout)
            try:
                result = self._client.call_tool(upstream, call.args, timeout=limit)
            except (JsonRpcError, RequestTimeout, PeerGoneError, McpProtocolError) as exc:
                raise ToolError(describe_error(exc)) from exc
            text, is_error = flatten_call_result(result)
        if is_error:
            raise ToolError(text or f"MCP tool {upstream!r} failed")
        return text

    def close(self) -> None:
        """Stop the subprocess / end the HTTP session. Idempotent."""
        if self._client is not None:
            self._client.close()

    def __repr__(self) -> str:
        return f"McpConnection(name={self.name!r}, tools={len(self._tools)})"
