"""Server-side validation of request bodies and their files, written independently of the SDK.

The documented limits are read from ``_base.limits``, the one place both sides
state them; the checks are the emulator's own. A file is kept as its metadata
only (:func:`attachment_metadata`), never its bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Final, Literal

from .._base import limits
from ._catalog import resolve_model

__all__ = [
    "InvalidRequest",
    "attachment_metadata",
    "validate_message_body",
    "validate_spec",
    "validate_tool_result",
]

KINDS: Final = frozenset(
    {"mantyx", "mantyx_plugin", "local", "a2a", "a2a_local", "mcp", "mcp_local"}
)
REASONING_WORDS: Final = frozenset({"off", "low", "medium", "high"})
ROLES: Final = frozenset({"user", "assistant", "system"})
ATTACHMENT_TYPES: Final = frozenset({"input_file", "input_file_url"})
PLAN_WORDS: Final = ("auto", "required", "off")


class InvalidRequest(ValueError):
    """A body that fails validation: answered ``400 invalid_request``."""


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def validate_spec(body: Any, *, mode: Literal["run", "session"]) -> None:
    """Check an agent spec (``POST /agent-runs`` or ``POST /agent-sessions``).

    :raises InvalidRequest: a field breaks a documented rule (the message names it).
    :raises ModelNotFound: ``modelId`` cannot be resolved.
    """
    if not isinstance(body, dict):
        raise InvalidRequest("body must be a JSON object")
    if mode == "run":
        _check_input(body)
    elif "prompt" in body or "messages" in body:
        raise InvalidRequest("prompt/messages are not allowed when creating a session")
    for key in ("name", "systemPrompt", "agentId"):
        if key in body and not isinstance(body[key], str):
            raise InvalidRequest(f"{key}: must be a string")
    if "agentId" in body and not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", body["agentId"]):
        raise InvalidRequest("agentId: malformed agent id")
    if not body.get("systemPrompt") and "agentId" not in body:
        if mode == "session":
            raise InvalidRequest("systemPrompt: required unless agentId is set")
        if not _has_system_text(body.get("messages")):
            raise InvalidRequest(
                "systemPrompt: required unless agentId is set "
                "or messages include a non-empty system message"
            )
    _check_overrides(body)
    if "budgets" in body and not isinstance(body["budgets"], dict):
        raise InvalidRequest("budgets: must be an object")


def validate_message_body(body: Any) -> None:
    """Check a ``POST /agent-sessions/{id}/messages`` body (input + overrides) as
    :func:`validate_spec` does."""
    if not isinstance(body, dict):
        raise InvalidRequest("body must be a JSON object")
    _check_input(body)
    _check_overrides(body)


def validate_tool_result(body: Any) -> None:
    """Check a tool-result body (:class:`InvalidRequest` says which rule it breaks)."""
    if not isinstance(body, dict):
        raise InvalidRequest("body must be a JSON object")
    tool_use_id = body.get("toolUseId")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        raise InvalidRequest("toolUseId: required non-empty string")
    has_result, has_error = "result" in body, "error" in body
    if has_result == has_error:
        raise InvalidRequest("exactly one of result or error is required")
    key = "result" if has_result else "error"
    if not isinstance(body[key], str):
        raise InvalidRequest(f"{key}: must be a string (serialize structured output as JSON)")
    limit = limits.TOOL_RESULT_MAX_BYTES if has_result else limits.TOOL_ERROR_MAX_BYTES
    if len(body[key].encode("utf-8")) > limit:
        raise InvalidRequest(f"{key}: longer than {limit} bytes")
    if "files" in body and has_result:
        _check_tool_files(body["files"])


def _check_input(body: dict[str, Any]) -> None:
    has_prompt, has_messages = "prompt" in body, "messages" in body
    if has_prompt and has_messages:
        raise InvalidRequest("send either prompt or messages, not both")
    if not has_prompt and not has_messages:
        raise InvalidRequest("prompt or messages is required")
    if has_prompt:
        if not isinstance(body["prompt"], str) or not body["prompt"]:
            raise InvalidRequest("prompt: must be a non-empty string")
        if len(body["prompt"]) > limits.MESSAGE_CONTENT_MAX_CHARS:
            raise InvalidRequest("prompt: longer than 200000 characters")
        return
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages: must be a non-empty array")
    if len(messages) > limits.MESSAGES_MAX:
        raise InvalidRequest("messages: at most 200 entries")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InvalidRequest(f"messages[{i}]: must be an object")
        if message.get("role") not in ROLES:
            raise InvalidRequest(f"messages[{i}].role: must be one of user, assistant, system")
        if not isinstance(message.get("content"), str):
            raise InvalidRequest(f"messages[{i}].content: must be a string")
    non_system = [m for m in messages if m["role"] != "system"]
    if non_system and non_system[-1]["role"] != "user":
        raise InvalidRequest("messages: the last non-system message must be a user message")
    if not non_system and not _has_system_text(messages):
        raise InvalidRequest("messages: a run needs a user message or a non-empty system message")
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
            raise InvalidRequest("modelId: must be a non-empty string")
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
    _check_controls(body)


def int_in(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _check_controls(body: dict[str, Any]) -> None:
    """Check the newest spec fields of a run, session or message body."""
    if "fallbackModelId" in body:
        fallback = body["fallbackModelId"]
        if not isinstance(fallback, str) or not fallback:
            raise InvalidRequest("fallbackModelId: must be a non-empty string")
        if fallback == body.get("modelId"):
            raise InvalidRequest("fallbackModelId: must differ from modelId")
        resolve_model(fallback)
    if "supervisor" in body:
        _check_supervisor(body["supervisor"])
    if "plan" in body:
        _check_plan(body["plan"])
    schema = body.get("outputSchema")
    if isinstance(schema, dict) and schema.get("enforcement", "best_effort") not in (
        "best_effort",
        "strict",
    ):
        raise InvalidRequest("outputSchema.enforcement: must be best_effort or strict")
    for i, ref in enumerate(body.get("tools") or ()):
        for flag in ("readOnly", "retain"):
            if isinstance(ref, dict) and flag in ref and not isinstance(ref[flag], bool):
                raise InvalidRequest(f"tools[{i}].{flag}: must be a boolean")


def _check_supervisor(value: Any) -> None:
    if isinstance(value, bool):
        return
    if not isinstance(value, dict):
        raise InvalidRequest("supervisor: must be a boolean or an object")
    if "interval" in value and not int_in(value["interval"], 1, 100):
        raise InvalidRequest("supervisor.interval: integer 1-100")
    if "modelId" in value:
        if not isinstance(value["modelId"], str) or not value["modelId"]:
            raise InvalidRequest("supervisor.modelId: must be a non-empty string")
        resolve_model(value["modelId"])
    trigger = value.get("reasoningTrigger")
    if trigger is None or trigger is False:
        return
    if not isinstance(trigger, dict):
        raise InvalidRequest("supervisor.reasoningTrigger: must be false or an object")
    if "chars" in trigger and not int_in(trigger["chars"], 1, 50_000):
        raise InvalidRequest("supervisor.reasoningTrigger.chars: integer up to 50000")
    if "ms" in trigger and not int_in(trigger["ms"], 1, 600_000):
        raise InvalidRequest("supervisor.reasoningTrigger.ms: integer up to 600000")


def _check_plan(value: Any) -> None:
    if isinstance(value, bool) or value in PLAN_WORDS:
        return
    if not isinstance(value, dict):
        raise InvalidRequest("plan: must be true, false, auto, required, off or an object")
    if "mode" in value and value["mode"] not in PLAN_WORDS:
        raise InvalidRequest("plan.mode: must be auto, required or off")
    if "brief" in value and not isinstance(value["brief"], str):
        raise InvalidRequest("plan.brief: must be a string")
    steps = value.get("steps", [])
    if not isinstance(steps, list) or not all(isinstance(s, str) and s for s in steps):
        raise InvalidRequest("plan.steps: must be an array of non-empty strings")
    if "planOnly" in value and not isinstance(value["planOnly"], bool):
        raise InvalidRequest("plan.planOnly: must be a boolean")


def _check_reasoning(value: Any) -> None:
    if not ((isinstance(value, str) and value in REASONING_WORDS) or int_in(value, 0, 100)):
        raise InvalidRequest("reasoningLevel: must be off, low, medium, high or an integer 0-100")


def _check_headers(where: str, headers: Any) -> None:
    if not isinstance(headers, dict):
        raise InvalidRequest(f"{where}.headers: must be an object of strings")
    for name, value in headers.items():
        if not isinstance(value, str):
            raise InvalidRequest(f"{where}.headers.{name}: must be a string")
        if len(value.encode("utf-8")) > limits.HEADER_VALUE_MAX_BYTES:
            raise InvalidRequest(f"{where}.headers.{name}: value longer than 8 KB")


def _check_name(where: str, ref: dict[str, Any]) -> str:
    name = ref.get("name")
    if not isinstance(name, str) or not limits.TOOL_NAME_RE.match(name):
        raise InvalidRequest(f"{where}.name: must match ^[a-zA-Z0-9_]{{1,64}}$")
    return name


def _check_tools(tools: Any) -> None:
    if not isinstance(tools, list):
        raise InvalidRequest("tools: must be an array")
    model_names: set[str] = set()
    server_labels: set[str] = set()

    def claim(where: str, name: str, names: set[str]) -> None:
        if name in names:
            raise InvalidRequest(f"{where}: duplicate tool name '{name}'")
        names.add(name)

    for i, ref in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(ref, dict):
            raise InvalidRequest(f"{where}: must be an object")
        kind = ref.get("kind")
        if kind not in KINDS:
            raise InvalidRequest(f"{where}.kind: unknown kind {kind!r}")
        if kind == "mantyx":
            if not isinstance(ref.get("id"), str) or not ref["id"]:
                raise InvalidRequest(f"{where}.id: required")
            continue
        name = _check_name(where, ref)
        if "description" in ref and not isinstance(ref["description"], str):
            raise InvalidRequest(f"{where}.description: must be a string")
        if "headers" in ref:
            _check_headers(where, ref["headers"])
        # An MCP server's name is its label; the names the model sees are its tools'.
        claim(f"{where}.name", name, server_labels if kind in ("mcp", "mcp_local") else model_names)
        if kind == "local" and "parameters" in ref and not isinstance(ref["parameters"], dict):
            raise InvalidRequest(f"{where}.parameters: must be a JSON Schema object")
        elif kind == "a2a" and not isinstance(ref.get("agentCardUrl"), str):
            raise InvalidRequest(f"{where}.agentCardUrl: required")
        elif kind == "a2a_local" and not isinstance(ref.get("agentCard"), dict):
            raise InvalidRequest(f"{where}.agentCard: required object")
        elif kind == "mcp":
            if not isinstance(ref.get("url"), str):
                raise InvalidRequest(f"{where}.url: required")
            if "toolFilter" in ref and not (
                isinstance(ref["toolFilter"], list)
                and all(isinstance(t, str) for t in ref["toolFilter"])
            ):
                raise InvalidRequest(f"{where}.toolFilter: must be an array of strings")
        elif kind == "mcp_local":
            _check_mcp_local(where, ref, lambda w, n: claim(w, n, model_names))


def _check_mcp_local(where: str, ref: dict[str, Any], claim: Any) -> None:
    if "serverInfo" in ref and not isinstance(ref["serverInfo"], dict):
        raise InvalidRequest(f"{where}.serverInfo: must be an object")
    tools = ref.get("tools")
    if not isinstance(tools, list) or not 1 <= len(tools) <= limits.MCP_LOCAL_TOOLS_MAX:
        raise InvalidRequest(f"{where}.tools: must hold 1 to 64 tools")
    for j, tool in enumerate(tools):
        tool_where = f"{where}.tools[{j}]"
        if not isinstance(tool, dict):
            raise InvalidRequest(f"{tool_where}: must be an object")
        claim(f"{tool_where}.name", _check_name(tool_where, tool))
        if "inputSchema" in tool and not isinstance(tool["inputSchema"], dict):
            raise InvalidRequest(f"{tool_where}.inputSchema: must be an object")


def _check_output_schema(value: Any) -> None:
    if not isinstance(value, dict):
        raise InvalidRequest("outputSchema: must be an object")
    if _size(value) > limits.OUTPUT_SCHEMA_MAX_BYTES:
        raise InvalidRequest("outputSchema: serialized size over 32 KB")
    if "name" in value and (
        not isinstance(value["name"], str) or not limits.OUTPUT_SCHEMA_NAME_RE.match(value["name"])
    ):
        raise InvalidRequest("outputSchema.name: must match ^[a-zA-Z0-9_-]{1,64}$")
    if not isinstance(value.get("schema"), dict):
        raise InvalidRequest("outputSchema.schema: must be a JSON object")


def _check_metadata(value: Any) -> None:
    if not isinstance(value, dict):
        raise InvalidRequest("metadata: must be an object of strings")
    if len(value) > limits.METADATA_MAX_ENTRIES:
        raise InvalidRequest("metadata: at most 16 entries")
    for key, item in value.items():
        if not limits.METADATA_KEY_RE.match(key):
            raise InvalidRequest(f"metadata.{key}: key must match ^[A-Za-z0-9._-]{{1,64}}$")
        if not isinstance(item, str):
            raise InvalidRequest(f"metadata.{key}: value must be a string")
        if len(item) > limits.METADATA_VALUE_MAX_CHARS:
            raise InvalidRequest(f"metadata.{key}: value longer than 256 characters")
    if _size(value) > limits.METADATA_MAX_BYTES:
        raise InvalidRequest("metadata: serialized size over 4 KB")


def _check_loop_detection(value: Any) -> None:
    if value is False:
        return
    if not isinstance(value, dict):
        raise InvalidRequest("loopDetection: must be false or an object")
    soft = value.get("consecutiveThreshold", 3)
    hard = value.get("hardCutoffThreshold", 6)
    if not int_in(soft, 2, limits.LOOP_THRESHOLD_MAX):
        raise InvalidRequest("loopDetection.consecutiveThreshold: integer 2-100")
    if not int_in(hard, 3, limits.LOOP_THRESHOLD_MAX):
        raise InvalidRequest("loopDetection.hardCutoffThreshold: integer 3-100")
    if hard <= soft:
        raise InvalidRequest(
            "loopDetection.hardCutoffThreshold: must be greater than consecutiveThreshold"
        )


def _check_tool_budgets(value: Any) -> None:
    if not isinstance(value, dict):
        raise InvalidRequest("toolBudgets: must be an object")
    if len(value) > limits.TOOL_BUDGETS_MAX_ENTRIES:
        raise InvalidRequest("toolBudgets: at most 32 entries")
    for key, budget in value.items():
        if not 1 <= len(key) <= limits.TOOL_BUDGET_KEY_MAX:
            raise InvalidRequest("toolBudgets: keys must be 1-120 characters")
        if not isinstance(budget, dict):
            raise InvalidRequest(f"toolBudgets.{key}: must be an object with maxCalls")
        calls = budget.get("maxCalls")
        if not int_in(calls, 0, limits.TOOL_BUDGET_MAX_CALLS):
            raise InvalidRequest(f"toolBudgets.{key}.maxCalls: integer 0-1000")


def _mime_allowed(mime: str) -> bool:
    """Whether files of this MIME type are accepted."""
    base = mime.split(";")[0].strip().lower()
    return (base.startswith("text/") and len(base) > 5) or base in limits.ATTACHMENT_MIME_TYPES


def _decoded_len(data: Any, where: str) -> int:
    if not isinstance(data, str) or data.startswith("data:"):
        raise InvalidRequest(f"{where}.data: must be base64 without a data: prefix")
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise InvalidRequest(f"{where}.data: not valid base64") from exc


def _check_attachments(messages: list[dict[str, Any]]) -> None:
    """Check content lengths and every message's ``attachments``."""
    user_indexes = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    last_user = user_indexes[-1] if user_indexes else None
    total = 0
    for i, message in enumerate(messages):
        if len(message["content"]) > limits.MESSAGE_CONTENT_MAX_CHARS:
            raise InvalidRequest(
                f"messages[{i}].content: longer than {limits.MESSAGE_CONTENT_MAX_CHARS} characters"
            )
        if "attachments" not in message:
            continue
        files = message["attachments"]
        if not isinstance(files, list):
            raise InvalidRequest(f"messages[{i}].attachments: must be an array")
        if files and i != last_user:
            raise InvalidRequest(
                f"messages[{i}].attachments: only allowed on the last user message"
            )
        if len(files) > limits.ATTACHMENTS_MAX:
            raise InvalidRequest(
                f"messages[{i}].attachments: at most {limits.ATTACHMENTS_MAX} files"
            )
        for j, item in enumerate(files):
            where = f"messages[{i}].attachments[{j}]"
            if not isinstance(item, dict) or item.get("type") not in ATTACHMENT_TYPES:
                raise InvalidRequest(f"{where}.type: must be input_file or input_file_url")
            mime = item.get("mimeType")
            if item["type"] == "input_file_url":
                url = item.get("url")
                if not isinstance(url, str) or not url.lower().startswith("https://"):
                    raise InvalidRequest(f"{where}.url: must be an https URL")
                if mime is not None and (not isinstance(mime, str) or not _mime_allowed(mime)):
                    raise InvalidRequest(f"{where}.mimeType: unsupported file type {mime!r}")
                continue
            if not isinstance(mime, str) or not _mime_allowed(mime):
                raise InvalidRequest(f"{where}.mimeType: unsupported file type {mime!r}")
            if not isinstance(item.get("filename"), str) or not item["filename"]:
                raise InvalidRequest(f"{where}.filename: required")
            total += _decoded_len(item.get("data"), where)
            if total > limits.INLINE_FILES_MAX_BYTES:
                limit = limits.INLINE_FILES_MAX_BYTES
                raise InvalidRequest(f"attachments: inline files over {limit} bytes in total")


def _check_tool_files(files: Any) -> None:
    """Check a tool result's ``files``: at most 20, 5 MB decoded in total."""
    if not isinstance(files, list):
        raise InvalidRequest("files: must be an array")
    if len(files) > limits.TOOL_FILES_MAX:
        raise InvalidRequest(f"files: at most {limits.TOOL_FILES_MAX} files")
    total = 0
    for j, item in enumerate(files):
        where = f"files[{j}]"
        if not isinstance(item, dict):
            raise InvalidRequest(f"{where}: must be an object")
        if not isinstance(item.get("filename"), str) or not item["filename"]:
            raise InvalidRequest(f"{where}.filename: required")
        mime = item.get("mimeType")
        if not isinstance(mime, str) or not mime:
            raise InvalidRequest(f"{where}.mimeType: required")
        total += _decoded_len(item.get("data"), where)
        if total > limits.TOOL_FILES_MAX_BYTES:
            raise InvalidRequest(
                f"files: over {limits.TOOL_FILES_MAX_BYTES} bytes decoded in total"
            )


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
