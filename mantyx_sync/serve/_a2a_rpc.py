"""JSON-RPC 2.0 for the served A2A app: the request envelope, the errors of both
protocol lines, the ``A2A-Version`` header, and 1.0 parameters read as ProtoJSON
parsers read them (lowerCamelCase or the original snake_case names).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from ._a2a_wire import Dialect

__all__ = [
    "METHODS",
    "STREAMING",
    "Request",
    "RpcError",
    "camel_keys",
    "error_reply",
    "read_request",
    "result_reply",
    "version_of",
]

CODES: Final[Mapping[str, int]] = {
    "PARSE_ERROR": -32700,
    "INVALID_REQUEST": -32600,
    "METHOD_NOT_FOUND": -32601,
    "INVALID_PARAMS": -32602,
    "INTERNAL_ERROR": -32603,
    "TASK_NOT_FOUND": -32001,
    "TASK_NOT_CANCELABLE": -32002,
    "PUSH_NOTIFICATION_NOT_SUPPORTED": -32003,
    "UNSUPPORTED_OPERATION": -32004,
    "CONTENT_TYPE_NOT_SUPPORTED": -32005,
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": -32007,
    "VERSION_NOT_SUPPORTED": -32009,
}
"""Each error this app answers, by its 1.0 ``ErrorInfo`` reason, and its JSON-RPC code."""

ERROR_INFO_TYPE: Final = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN: Final = "a2a-protocol.org"

METHODS: Final[Mapping[str, tuple[str, Dialect]]] = {
    "message/send": ("send", "0.3"),
    "message/stream": ("stream", "0.3"),
    "tasks/get": ("get", "0.3"),
    "tasks/cancel": ("cancel", "0.3"),
    "tasks/resubscribe": ("subscribe", "0.3"),
    "tasks/pushNotificationConfig/set": ("push", "0.3"),
    "tasks/pushNotificationConfig/get": ("push", "0.3"),
    "tasks/pushNotificationConfig/list": ("push", "0.3"),
    "tasks/pushNotificationConfig/delete": ("push", "0.3"),
    "agent/getAuthenticatedExtendedCard": ("extended_card", "0.3"),
    "SendMessage": ("send", "1.0"),
    "SendStreamingMessage": ("stream", "1.0"),
    "GetTask": ("get", "1.0"),
    "ListTasks": ("list", "1.0"),
    "CancelTask": ("cancel", "1.0"),
    "SubscribeToTask": ("subscribe", "1.0"),
    "SetTaskPushNotificationConfig": ("push", "1.0"),
    "CreateTaskPushNotificationConfig": ("push", "1.0"),
    "GetTaskPushNotificationConfig": ("push", "1.0"),
    "ListTaskPushNotificationConfig": ("push", "1.0"),
    "ListTaskPushNotificationConfigs": ("push", "1.0"),
    "DeleteTaskPushNotificationConfig": ("push", "1.0"),
    "GetExtendedAgentCard": ("extended_card", "1.0"),
}
"""JSON-RPC method → (operation, protocol line)."""

STREAMING: Final = frozenset({"stream", "subscribe"})
"""Operations answered with an SSE stream (their errors too)."""

_VERSION: Final = re.compile(r"\s*(\d+)\.(\d+)(?:\.\d+)?\s*")
_FREE_FORM: Final = frozenset({"metadata", "data"})
"""1.0 fields holding any JSON (``Struct``/``Value``): their keys are the caller's own."""


class RpcError(Exception):
    """A request answered with a JSON-RPC error; ``kind`` is a key of :data:`CODES`."""

    def __init__(self, kind: str, message: str, *, request_id: Any = None, **metadata: str):
        super().__init__(message)
        self.kind = kind
        self.code = CODES[kind]
        self.request_id = request_id
        """The id of the request, when it could be read before the error."""
        self.metadata = metadata
        """The ``ErrorInfo`` metadata (1.0)."""


class Request(NamedTuple):
    """A JSON-RPC request whose envelope is valid."""

    id: Any
    method: str
    params: dict[str, Any]


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool))


def read_request(body: Any) -> Request:
    """The request ``body`` holds.

    :raises RpcError: ``INVALID_REQUEST`` for an envelope JSON-RPC 2.0 refuses,
        ``INVALID_PARAMS`` for ``params`` that are not an object.
    """
    if not isinstance(body, dict):
        raise RpcError(
            "INVALID_REQUEST",
            "expected one JSON-RPC 2.0 request object (batches are not supported)",
        )
    request_id = body.get("id")
    if not _valid_id(request_id):
        raise RpcError("INVALID_REQUEST", "the request id must be a string, a number or null")
    if body.get("jsonrpc") != "2.0":
        raise RpcError(
            "INVALID_REQUEST", 'the request must say "jsonrpc": "2.0"', request_id=request_id
        )
    method = body.get("method")
    if not isinstance(method, str):
        raise RpcError(
            "INVALID_REQUEST", "the request must name its method (a string)", request_id=request_id
        )
    params = body.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError("INVALID_PARAMS", "params must be an object", request_id=request_id)
    return Request(request_id, method, params)


def version_of(environ: Mapping[str, Any]) -> Dialect | None:
    """The protocol line the ``A2A-Version`` header asks for; ``None`` without one.

    :raises RpcError: ``VERSION_NOT_SUPPORTED`` for a version other than 0.3 and 1.0
        (a patch number is ignored).
    """
    header = environ.get("HTTP_A2A_VERSION")
    if header is None or not header.strip():
        return None
    match = _VERSION.fullmatch(header)
    version = f"{match.group(1)}.{match.group(2)}" if match else None
    if version == "0.3":
        return "0.3"
    if version == "1.0":
        return "1.0"
    raise RpcError(
        "VERSION_NOT_SUPPORTED",
        f"A2A-Version {header.strip()[:20]!r} is not supported: this agent speaks 1.0 and 0.3",
        version=header.strip()[:20],
    )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def camel_keys(value: Any, path: str = "params") -> Any:
    """``value`` with each snake_case field name written in lowerCamelCase, as ProtoJSON
    parsers accept both (free-form ``metadata`` and ``data`` are left alone).

    :raises RpcError: ``INVALID_PARAMS`` for a field given under both names.
    """
    if isinstance(value, list):
        return [camel_keys(item, f"{path}[{index}]") for index, item in enumerate(value)]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = _camel(key) if "_" in key else key
        if name in out:
            raise RpcError("INVALID_PARAMS", f"{path}.{name} is given twice (as {key} too)")
        out[name] = item if name in _FREE_FORM else camel_keys(item, f"{path}.{name}")
    return out


def result_reply(request_id: Any, result: Any) -> dict[str, Any]:
    """A JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_reply(request_id: Any, error: RpcError, dialect: Dialect | None) -> dict[str, Any]:
    """A JSON-RPC error response; in 1.0 ``data`` carries the ``google.rpc.ErrorInfo``."""
    body: dict[str, Any] = {"code": error.code, "message": str(error)}
    if dialect == "1.0":
        info = {"@type": ERROR_INFO_TYPE, "reason": error.kind, "domain": ERROR_DOMAIN}
        body["data"] = [{**info, "metadata": dict(error.metadata)}]
    return {"jsonrpc": "2.0", "id": request_id, "error": body}
