"""The Agent API protocol's objects, built from a MANTYX run's events by
:class:`ResponseBuilder` (one per response, used by one thread): assistant text is
one message per model turn that said something (its deltas, then the whole text
completed); a tool call is a ``plugin_call`` message, its result a
``plugin_call_output`` one.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from .._display.steps import ToolStep, tool_step
from ..events import RunEvent
from ..results import RunResult
from ._wsgi import parts_text

__all__ = ["ResponseBuilder", "request_text"]


def request_text(body: Mapping[str, Any]) -> str | None:
    """The text of the last user message of an ``AgentRequest``'s ``input``."""
    messages = body.get("input")
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if not isinstance(message, Mapping) or message.get("role", "user") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content if content.strip() else None
        text = parts_text(content, files=False)
        if text is not None:
            return text
    return None


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class ResponseBuilder:
    """Builds one Agent API response, object by object."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.id = f"response_{uuid.uuid4()}"
        self.created_at = int(time.time())
        self.output: list[dict[str, Any]] = []
        self._seq = 0
        self._text_msg: dict[str, Any] | None = None
        self._text: list[str] = []
        self._pending: dict[str, str] = {}

    @property
    def tool_pending(self) -> bool:
        """Whether a tool call is waiting for its output."""
        return bool(self._pending)

    def _stamp(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj["sequence_number"] = self._seq
        self._seq += 1
        return obj

    def response(
        self,
        status: str,
        *,
        error: dict[str, str] | None = None,
        usage: dict[str, int] | None = None,
    ) -> dict[str, Any]:
        """The response object in ``status``."""
        done = status in ("completed", "failed", "canceled")
        return self._stamp(
            {
                "object": "response",
                "status": status,
                "error": error,
                "id": self.id,
                "created_at": self.created_at,
                "completed_at": int(time.time()) if done else None,
                "output": [dict(m) for m in self.output] if done else None,
                "usage": usage,
                "session_id": self.session_id,
            }
        )

    def _message(self, msg_type: str, role: str) -> dict[str, Any]:
        return {
            "object": "message",
            "status": "in_progress",
            "error": None,
            "id": f"msg_{uuid.uuid4()}",
            "type": msg_type,
            "role": role,
            "content": None,
            "code": None,
            "message": None,
            "usage": None,
            "metadata": {},
        }

    def _content(
        self, msg_id: str, kind: str, status: str, delta: bool, **fields: Any
    ) -> dict[str, Any]:
        return {
            "object": "content",
            "status": status,
            "error": None,
            "type": kind,
            "index": 0,
            "delta": delta,
            "msg_id": msg_id,
            **fields,
        }

    def on_event(self, event: RunEvent) -> list[dict[str, Any]]:
        """The protocol objects ``event`` produces (often none)."""
        kind = event.type
        if kind == "assistant_delta" and event.text:
            return self._delta(event.text)
        if kind == "assistant_message":
            return self._close_text(event.text)
        step = tool_step(event)
        if step is None:
            return []
        if not step.done:
            return self._close_text(None) + self._tool_call(step)
        return self._tool_output(step)

    def heartbeat(self) -> dict[str, Any]:
        """A ``heartbeat`` message: still working (a tool is running)."""
        return self._stamp(self._message("heartbeat", "assistant"))

    def _delta(self, text: str) -> list[dict[str, Any]]:
        out = []
        if self._text_msg is None:
            self._text_msg = self._message("message", "assistant")
            self._text = []
            out.append(self._stamp(dict(self._text_msg)))
        self._text.append(text)
        out.append(
            self._stamp(self._content(self._text_msg["id"], "text", "in_progress", True, text=text))
        )
        return out

    def _close_text(self, full: str | None) -> list[dict[str, Any]]:
        msg = self._text_msg
        if msg is None and not full:
            return []
        text = full if full else "".join(self._text)
        self._text_msg, self._text = None, []
        if msg is None:
            return self._complete(self._message("message", "assistant"), True, text=text)
        return self._complete(msg, False, text=text)

    def _complete(self, msg: dict[str, Any], opening: bool, **fields: Any) -> list[dict[str, Any]]:
        """``msg`` completed with one content (``text=`` or ``data=``), opened first if asked."""
        opened = [self._stamp(dict(msg))] if opening else []
        kind = "text" if "text" in fields else "data"
        content = self._stamp(self._content(msg["id"], kind, "completed", False, **fields))
        msg.update(status="completed", content=[dict(content)])
        done = self._stamp(dict(msg))
        self.output.append(done)
        return [*opened, content, done]

    def _tool_call(self, step: ToolStep) -> list[dict[str, Any]]:
        name = step.name or "tool"
        self._pending[step.tool_use_id] = name
        arguments = _json_text(step.args if step.args is not None else {})
        data = {"call_id": step.tool_use_id, "name": name, "arguments": arguments}
        return self._complete(self._message("plugin_call", "assistant"), True, data=data)

    def _tool_output(self, step: ToolStep) -> list[dict[str, Any]]:
        name = self._pending.pop(step.tool_use_id, None) or step.name or "tool"
        output = step.outcome if step.ok else f"error: {_json_text(step.outcome)}"
        data = {
            "call_id": step.tool_use_id,
            "name": name,
            "output": _json_text(output if output is not None else ""),
        }
        return self._complete(self._message("plugin_call_output", "tool"), True, data=data)

    def finish(
        self, outcome: str, result: RunResult | None, error: str | None
    ) -> list[dict[str, Any]]:
        """The closing objects: any open text, then the final response object."""
        out = self._close_text(None)
        said = any(msg["type"] == "message" for msg in self.output)  # each with its text
        if outcome == "completed" and result is not None and result.text and not said:
            out += self._close_text(result.text)  # the answer, said by no streamed turn
        usage = None
        if result is not None and result.tokens is not None:
            usage = {
                "input_tokens": result.tokens.input_tokens,
                "output_tokens": result.tokens.output_tokens,
            }
        failure = None
        if outcome == "failed":
            failure = {"code": "run_failed", "message": error or "the run failed"}
        out.append(self.response(outcome, error=failure, usage=usage))
        return out
