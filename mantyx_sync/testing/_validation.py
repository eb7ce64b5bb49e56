"""Server-side validation of request bodies and their files, written independently of the SDK.

The limits are the documented ones, restated here rather than imported so that
a wrong limit in the SDK cannot also hide in the emulator. A file is kept as
its metadata only (:func:`attachment_metadata`), never its bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Final, Literal

from ._catalog import resolve_model
from ._controls import check_controls, int_in

__all__ = [
    "InvalidRequest",
    "attachment_metadata",
    "validate_message_body",
    "validate_spec",
    "validate_tool_result",
]

TOOL_NAME: Final = re.compile(r"^[a-zA-Z0-9_]{1,64}$")
SCHEMA_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
METADATA_KEY: Final = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
KINDS: Final = frozenset(
    {"mantyx", "mantyx_plugin", "local", "a2a", "a2a_local", "mcp", "mcp_local"}
)
REASONING_WORDS: Final = frozenset({"off", "low", "medium", "high"})
ROLES: Final = frozenset({"user", "assistant", "system"})
MAX_CONTENT: Final = 200_000
MAX_FILES: Final = 20
MAX_INLINE_BYTES: Final = 5_000_000
ATTACHMENT_TYPES: Final = frozenset({"input_file", "input_file_url"})
_EXACT: Final = frozenset(
    {
        "audio/mp4",
        "audio/mpeg",
        "audio/wav",
        "audio/webm",
        "image/jpeg",
        "image/png",
        "image/webp",
        "image/gif",
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/json",
        "application/xml",
    }
)


class InvalidRequest(ValueError):
    """A body that fails validation: answered ``400 invalid_request``."""


def _fail(message: str) -> InvalidRequest:
    return InvalidRequest(message)


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def validate_spec(body: Any, *, mode: Literal["run", "session"]) -> None:
    """Check an agent spec (``POST /agent-runs`` or ``POST /agent-sessions``).

    :raises InvalidRequest: a field breaks a documented rule (the message names it).
    :raises ModelNotFound: ``modelId`` cannot be resolved.
    """
    if not isinstance(body, dict):
        raise _fail("body must be a JSON object")
    if mode == "run":
        _check_input(body)
    elif "prompt" in body or "messages" in body:
        raise _fail("prompt/messages are not allowed when creating a session")
    for key in ("name", "systemPrompt", "agentId"):
        if key in body and not isinstance(body[key], str):
            raise _fail(f"{key}: must be a string")
    if "agentId" in body and not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", body["agentId"]):
        raise _fail("agentId: malformed agent id")
    if not body.get("systemPrompt") and "agentId" not in body:
        if mode == "session":
            raise _fail("systemPrompt: required unless agentId is set")
        if not _has_system_text(body.get("messages")):
            raise _fail(
                "systemPrompt: required unless agentId is set "
                "or messages include a non-empty system message"
            )
    _check_overrides(body)
    if "budgets" in body and not isinstance(body["budgets"], dict):
        raise _fail("budgets: must be an object")


def validate_message_body(body: Any) -> None:
    """Check a ``POST /agent-sessions/{id}/messages`` body (input + overrides).

    :raises InvalidRequest: a field breaks a documented rule.
    :raises ModelNotFound: ``modelId`` cannot be resolved.
    """
    if not isinstance(body, dict):
        raise _fail("body must be a JSON object")
    _check_input(body)
    _check_overrides(body)


def validate_tool_result(body: Any) -> None:
    """Check a tool-result body.

    :raises InvalidRequest: missing ``toolUseId``, both/neither of result/error,
        or a non-string value.
    """
    if not isinstance(body, dict):
        raise _fail("body must be a JSON object")
    tool_use_id = body.get("toolUseId")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        raise _fail("toolUseId: required non-empty string")
    has_result, has_error = "result" in body, "error" in body
    if has_result == has_error:
        raise _fail("exactly one of result or error is required")
    key = "result" if has_result else "error"
    if not isinstance(body[key], str):
        raise _fail(f"{key}: must be a string (serialize structured output as JSON)")
    limit = 2_000_000 if has_result else 8_000
    if len(body[key].encode("utf-8")) > limit:
        raise _fail(f"{key}: longer than {limit} bytes")
    if "files" in body and has_result:
        _check_tool_files(body["files"])


def _check_input(body: dict[str, Any]) -> None:
    has_prompt, has_messages = "prompt" in body, "messages" in body
    if has_prompt and has_messages:
        raise _fail("send either prompt or messages, not both")
    if not has_prompt and not has_messages:
        raise _fail("prompt or messages is required")
    if has_prompt:
        if not isinstance(body["prompt"], str) or not body["prompt"]:
            raise _fail("prompt: must be a non-empty string")
        if len(body["prompt"]) > 200_000:
            raise _fail("prompt: longer than 200000 characters")
        return
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise _fail("messages: must be a non-empty array")
    if len(messages) > 200:
        raise _fail("messages: at most 200 entries")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _fail(f"messages[{i}]: must be an object")
        if message.get("role") not in ROLES:
            raise _fail(f"messages[{i}].role: must be one of user, assistant, system")
        if not isinstance(message.get("content"), str):
            raise _fail(f"messages[{i}].content: must be a string")
    non_system = [m for m in messages if m["role"] != "system"]
    if non_system and non_system[-1]["role"] != "user":
        raise _fail("messages: the last non-system message must be a user message")
    if not non_system and not _has_system_text(messages):
        raise _fail("messages: a run needs a user message or a non-empty system message")
    _check_attachments(messages)


def _has_system_text(messages: Any) -> bool:
    # A system message counts only when it has text; blank space is none.
    return isinstance(messages, list) and any(
        isinstance(m, dict)
        and m.get("role") == "system"
        and isinstance(m.get("content"), str)
        and m["content"].strip()
        for m in messages
    )


def _check_overrides(body: dict[str, Any]) -> None:
    if "modelId" in body:
        if not isinstance(body["modelId"], str) or not body["modelId"]:
            raise _fail("modelId: must be a non-empty string")
        resolve_model(body["modelId"])
    if "reasoningLevel" in body:
        _check_reasoning(body["reasoningLevel"])
    if "tools" in body:
        _check_tools(body["tools"])
    if "outputSchema" in body:
        _check_output_schema(body["outputSchema"])
    if "metadata" in body:
        _check_metadata(body["metadata"])
    if "loopDetection" in body:
        _check_loop_detection(body["loopDetection"])
    if "toolBudgets" in body:
        _check_tool_budgets(body["toolBudgets"])
    check_controls(body, InvalidRequest)


def _check_reasoning(value: Any) -> None:
    if not ((isinstance(value, str) and value in REASONING_WORDS) or int_in(value, 0, 100)):
        raise _fail("reasoningLevel: must be off, low, medium, high or an integer 0-100")


def _check_headers(where: str, headers: Any) -> None:
    if not isinstance(headers, dict):
        raise _fail(f"{where}.headers: must be an object of strings")
    for name, value in headers.items():
        if not isinstance(value, str):
            raise _fail(f"{where}.headers.{name}: must be a string")
        if len(value.encode("utf-8")) > 8 * 1024:
            raise _fail(f"{where}.headers.{name}: value longer than 8 KB")


def _check_name(where: str, ref: dict[str, Any]) -> str:
    name = ref.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise _fail(f"{where}.name: must match ^[a-zA-Z0-9_]{{1,64}}$")
    return name


def _check_tools(tools: Any) -> None:
    if not isinstance(tools, list):
        raise _fail("tools: must be an array")
    model_names: set[str] = set()
    server_labels: set[str] = set()

    def claim(where: str, name: str, names: set[str]) -> None:
        if name in names:
            raise _fail(f"{where}: duplicate tool name '{name}'")
        names.add(name)

    for i, ref in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(ref, dict):
            raise _fail(f"{where}: must be an object")
        kind = ref.get("kind")
        if kind not in KINDS:
            raise _fail(f"{where}.kind: unknown kind {kind!r}")
        if kind == "mantyx":
            if not isinstance(ref.get("id"), str) or not ref["id"]:
                raise _fail(f"{where}.id: required")
            continue
        name = _check_name(where, ref)
        if "description" in ref and not isinstance(ref["description"], str):
            raise _fail(f"{where}.description: must be a string")
        if "headers" in ref:
            _check_headers(where, ref["headers"])
        # An MCP server's name is its label; the names the model sees are its tools'.
        claim(f"{where}.name", name, server_labels if kind in ("mcp", "mcp_local") else model_names)
        if kind == "local" and "parameters" in ref and not isinstance(ref["parameters"], dict):
            raise _fail(f"{where}.parameters: must be a JSON Schema object")
        elif kind == "a2a" and not isinstance(ref.get("agentCardUrl"), str):
            raise _fail(f"{where}.agentCardUrl: required")
        elif kind == "a2a_local" and not isinstance(ref.get("agentCard"), dict):
            raise _fail(f"{where}.agentCard: required object")
        elif kind == "mcp":
            if not isinstance(ref.get("url"), str):
                raise _fail(f"{where}.url: required")
            if "toolFilter" in ref and not (
                isinstance(ref["toolFilter"], list)
                and all(isinstance(t, str) for t in ref["toolFilter"])
            ):
                raise _fail(f"{where}.toolFilter: must be an array of strings")
        elif kind == "mcp_local":
            _check_mcp_local(where, ref, lambda w, n: claim(w, n, model_names))


def _check_mcp_local(where: str, ref: dict[str, Any], claim: Any) -> None:
    if "serverInfo" in ref and not isinstance(ref["serverInfo"], dict):
        raise _fail(f"{where}.serverInfo: must be an object")
    tools = ref.get("tools")
    if not isinstance(tools, list) or not 1 <= len(tools) <= 64:
        raise _fail(f"{where}.tools: must hold 1 to 64 tools")
    for j, tool in enumerate(tools):
        tool_where = f"{where}.tools[{j}]"
        if not isinstance(tool, dict):
            raise _fail(f"{tool_where}: must be an object")
        claim(f"{tool_where}.name", _check_name(tool_where, tool))
        if "inputSchema" in tool and not isinstance(tool["inputSchema"], dict):
            raise _fail(f"{tool_where}.inputSchema: must be an object")


def _check_output_schema(value: Any) -> None:
    if not isinstance(value, dict):
        raise _fail("outputSchema: must be an object")
    if _size(value) > 32 * 1024:
        raise _fail("outputSchema: serialized size over 32 KB")
    if "name" in value and (
        not isinstance(value["name"], str) or not SCHEMA_NAME.match(value["name"])
    ):
        raise _fail("outputSchema.name: must match ^[a-zA-Z0-9_-]{1,64}$")
    if not isinstance(value.get("schema"), dict):
        raise _fail("outputSchema.schema: must be a JSON object")


def _check_metadata(value: Any) -> None:
    if not isinstance(value, dict):
        raise _fail("metadata: must be an object of strings")
    if len(value) > 16:
        raise _fail("metadata: at most 16 entries")
    for key, item in value.items():
        if not METADATA_KEY.match(key):
            raise _fail(f"metadata.{key}: key must match ^[A-Za-z0-9._-]{{1,64}}$")
        if not isinstance(item, str):
            raise _fail(f"metadata.{key}: value must be a string")
        if len(item) > 256:
            raise _fail(f"metadata.{key}: value longer than 256 characters")
    if _size(value) > 4 * 1024:
        raise _fail("metadata: serialized size over 4 KB")


def _check_loop_detection(value: Any) -> None:
    if value is False:
        return
    if not isinstance(value, dict):
        raise _fail("loopDetection: must be false or an object")
    soft = value.get("consecutiveThreshold", 3)
    hard = value.get("hardCutoffThreshold", 6)
    if not int_in(soft, 2, 100):
        raise _fail("loopDetection.consecutiveThreshold: integer 2-100")
    if not int_in(hard, 3, 100):
        raise _fail("loopDetection.hardCutoffThreshold: integer 3-100")
    if hard <= soft:
        raise _fail("loopDetection.hardCutoffThreshold: must be greater than consecutiveThreshold")


def _check_tool_budgets(value: Any) -> None:
    if not isinstance(value, dict):
        raise _fail("toolBudgets: must be an object")
    if len(value) > 32:
        raise _fail("toolBudgets: at most 32 entries")
    for key, budget in value.items():
        if not 1 <= len(key) <= 120:
            raise _fail("toolBudgets: keys must be 1-120 characters")
        if not isinstance(budget, dict):
            raise _fail(f"toolBudgets.{key}: must be an object with maxCalls")
        calls = budget.get("maxCalls")
        if not int_in(calls, 0, 1000):
            raise _fail(f"toolBudgets.{key}.maxCalls: integer 0-1000")


def _mime_allowed(mime: str) -> bool:
    """Whether files of this MIME type are accepted."""
    base = mime.split(";")[0].strip().lower()
    return (base.startswith("text/") and len(base) > 5) or base in _EXACT


def _decoded_len(data: Any, where: str) -> int:
    if not isinstance(data, str) or data.startswith("data:"):
        raise _fail(f"{where}.data: must be base64 without a data: prefix")
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise _fail(f"{where}.data: not valid base64") from exc


def _check_attachments(messages: list[dict[str, Any]]) -> None:
    """Check content lengths and every message's ``attachments``."""
    user_indexes = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    last_user = user_indexes[-1] if user_indexes else None
    total = 0
    for i, message in enumerate(messages):
        if len(message["content"]) > MAX_CONTENT:
            raise _fail(f"messages[{i}].content: longer than {MAX_CONTENT} characters")
        if "attachments" not in message:
            continue
        files = message["attachments"]
        if not isinstance(files, list):
            raise _fail(f"messages[{i}].attachments: must be an array")
        if files and i != last_user:
            raise _fail(f"messages[{i}].attachments: only allowed on the last user message")
        if len(files) > MAX_FILES:
            raise _fail(f"messages[{i}].attachments: at most {MAX_FILES} files")
        for j, item in enumerate(files):
            where = f"messages[{i}].attachments[{j}]"
            if not isinstance(item, dict) or item.get("type") not in ATTACHMENT_TYPES:
                raise _fail(f"{where}.type: must be input_file or input_file_url")
            mime = item.get("mimeType")
            if item["type"] == "input_file_url":
                url = item.get("url")
                if not isinstance(url, str) or not url.lower().startswith("https://"):
                    raise _fail(f"{where}.url: must be an https URL")
                if mime is not None and (not isinstance(mime, str) or not _mime_allowed(mime)):
                    raise _fail(f"{where}.mimeType: unsupported file type {mime!r}")
                continue
            if not isinstance(mime, str) or not _mime_allowed(mime):
                raise _fail(f"{where}.mimeType: unsupported file type {mime!r}")
            if not isinstance(item.get("filename"), str) or not item["filename"]:
                raise _fail(f"{where}.filename: required")
            total += _decoded_len(item.get("data"), where)
            if total > MAX_INLINE_BYTES:
                raise _fail(f"attachments: inline files over {MAX_INLINE_BYTES} bytes in total")


def _check_tool_files(files: Any) -> None:
    """Check a tool result's ``files``: at most 20, 5 MB decoded in total."""
    if not isinstance(files, list):
        raise _fail("files: must be an array")
    if len(files) > MAX_FILES:
        raise _fail(f"files: at most {MAX_FILES} files")
    total = 0
    for j, item in enumerate(files):
        where = f"files[{j}]"
        if not isinstance(item, dict):
            raise _fail(f"{where}: must be an object")
        if not isinstance(item.get("filename"), str) or not item["filename"]:
            raise _fail(f"{where}.filename: required")
        mime = item.get("mimeType")
        if not isinstance(mime, str) or not mime:
            raise _fail(f"{where}.mimeType: required")
        total += _decoded_len(item.get("data"), where)
        if total > MAX_INLINE_BYTES:
            raise _fail(f"files: over {MAX_INLINE_BYTES} bytes decoded in total")


def attachment_metadata(item: dict[str, Any]) -> dict[str, Any]:
    """What the emulator keeps of an attachment or file: never its bytes."""
    meta: dict[str, Any] = {"type": item.get("type", "input_file")}
    for key in ("filename", "mimeType", "url"):
        if key in item:
            meta[key] = item[key]
    if isinstance(item.get("data"), str):
        try:
            meta["sizeBytes"] = len(base64.b64decode(item["data"]))
        except (binascii.Error, ValueError):
            meta["sizeBytes"] = 0
    return meta
