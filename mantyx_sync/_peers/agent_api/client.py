"""A synchronous Agent API protocol client: one streaming ``POST /process`` per call.

The reply is an SSE stream of ``data:`` JSON objects:
``response`` objects (``created`` → ``in_progress`` → ``completed`` /
``failed`` / ``canceled`` / ``rejected``), ``message`` objects and
``content`` deltas, folded into an :class:`AgentApiReply`: the last completed
assistant message's text, the tools the remote agent called, the final status.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.parse
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import requests

from ..._base.bounded import decode_json
from ..._base.redact import display_url
from ..._base.sse import FrameError, read_events

__all__ = ["AgentApiClient", "AgentApiError"]

logger = logging.getLogger(__name__)

_CONNECT_TIMEOUT_S: Final = 10.0
_SUMMARY_MAX: Final = 160
_CALL_TYPES: Final = frozenset({"plugin_call", "function_call", "mcp_call", "component_call"})
_OUTPUT_TYPES: Final = frozenset(
    {"plugin_call_output", "function_call_output", "mcp_call_output", "component_call_output"}
)


class AgentApiError(Exception):
    """The endpoint could not be reached, failed the request, or answered badly; safe to show."""


def process_url(url: str) -> str:
    """``url`` itself if its path ends in ``/process``, else ``<url>/process``."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path.rstrip("/")
    if not path.endswith("/process"):
        path = f"{path}/process"
    return urllib.parse.urlunsplit(parts._replace(path=path))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SUMMARY_MAX else text[: _SUMMARY_MAX - 1] + "…"


def _output_text(raw: Any) -> str:
    """A tool output as text: agentscope sends a JSON list of ``{type, text}`` blocks."""
    value = raw
    if isinstance(raw, str):
        try:
            value = decode_json(raw)
        except ValueError:
            return raw
    if isinstance(value, list):
        texts = [b.get("text") for b in value if isinstance(b, Mapping)]
        if texts and all(isinstance(t, str) for t in texts):
            return "".join(t for t in texts if isinstance(t, str))
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)


class AgentApiReply:
    """What one ``/process`` call came back with, folded from its stream by :meth:`add`."""

    def __init__(self) -> None:
        self.status = "unknown"
        self.error: str | None = None
        self.session_id: str | None = None
        self.text = ""
        self._calls: dict[str, dict[str, str]] = {}  # in the order they were first seen

    @property
    def tool_lines(self) -> tuple[str, ...]:
        """One short line per remote tool call: its name, arguments and output."""
        out = []
        for entry in self._calls.values():
            line = f"{entry['name']}({entry.get('arguments', '')})"
            if "output" in entry:
                line += f" → {entry['output']}"
            out.append(_short(line))
        return tuple(out)

    def as_tool_result(self) -> str:
        """The final text, then one line per remote tool call."""
        if not self.tool_lines:
            return self.text
        lines = "\n".join(f"- {line}" for line in self.tool_lines)
        return f"{self.text}\n\n[remote tool calls]\n{lines}" if self.text else lines

    def add(self, obj: Mapping[str, Any]) -> None:
        kind = obj.get("object")
        if kind == "response":
            self._response(obj)
        elif kind == "message" and obj.get("status") == "completed":
            self._message(obj)

    def _response(self, obj: Mapping[str, Any]) -> None:
        if isinstance(obj.get("status"), str):
            self.status = obj["status"]
        if isinstance(obj.get("session_id"), str):
            self.session_id = obj["session_id"]
        error = obj.get("error")
        if isinstance(error, Mapping):
            code, message = error.get("code"), error.get("message")
            self.error = f"{message} ({code})" if code and message else str(message or code)
        if self.status == "completed" and not self.text:
            for message in obj.get("output") or ():
                if isinstance(message, Mapping):
                    self._message(message)

    def _message(self, obj: Mapping[str, Any]) -> None:
        msg_type = obj.get("type", "message")
        contents = [c for c in obj.get("content") or () if isinstance(c, Mapping)]
        if msg_type == "message" and obj.get("role", "assistant") == "assistant":
            text = "".join(c["text"] for c in contents if isinstance(c.get("text"), str))
            if text:
                self.text = text
            return
        for content in contents:
            data = content.get("data")
            if not isinstance(data, Mapping):
                continue
            call_id = str(data.get("call_id") or len(self._calls))
            entry = self._calls.setdefault(call_id, {"name": str(data.get("name") or "tool")})
            if msg_type in _CALL_TYPES:
                entry["arguments"] = str(data.get("arguments") or "")
            elif msg_type in _OUTPUT_TYPES:
                entry["output"] = _output_text(data.get("output", ""))


def read_reply(chunks: Iterable[bytes], *, deadline: float | None = None) -> AgentApiReply:
    """Fold an SSE stream's bytes into the reply.

    :raises AgentApiError: ``deadline`` (a ``time.monotonic`` value) passed.
    :raises FrameError: an event frame is too large, has too many lines or is
        not UTF-8.
    """
    reply = AgentApiReply()
    for event in read_events(_until(deadline, chunks), flush=True):
        try:
            obj = decode_json(event.data)
        except ValueError:
            logger.debug("skipping a non-JSON Agent API frame")
            continue
        if isinstance(obj, Mapping):
            reply.add(obj)
    return reply


def _until(deadline: float | None, chunks: Iterable[bytes]) -> Iterator[bytes]:
    for chunk in chunks:
        if deadline is not None and time.monotonic() > deadline:
            raise AgentApiError("the Agent API endpoint did not finish in time")
        yield chunk


class AgentApiClient:
    """Sends user messages to one ``/process`` endpoint.

    Thread-safe: one :class:`requests.Session` (a connection pool) shared by calls.
    """

    def __init__(self, url: str, headers: Mapping[str, str] | None) -> None:
        self.url = process_url(url)
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            **dict(headers or {}),
        }
        self._http = requests.Session()

    def send(self, text: str, *, session_id: str, timeout: float) -> AgentApiReply:
        """Send ``text`` as a user message in ``session_id`` and read the whole reply.

        :raises AgentApiError: unreachable, HTTP error, timeout, or no final response.
        """
        body = {
            "input": [
                {
                    "id": f"msg_{uuid.uuid4()}",
                    "role": "user",
                    "type": "message",
                    "content": [{"type": "text", "text": text}],
                }
            ],
            "session_id": session_id,
            "stream": True,
        }
        deadline = time.monotonic() + timeout
        where = display_url(self.url)
        try:
            with self._http.post(
                self.url,
                json=body,
                headers=self._headers,
                stream=True,
                timeout=(_CONNECT_TIMEOUT_S, timeout),
            ) as reply:
                if reply.status_code >= 400:
                    raise AgentApiError(
                        f"the Agent API endpoint {where} answered HTTP {reply.status_code}: "
                        f"{_short(reply.text)}"
                    )
                result = read_reply(reply.iter_content(chunk_size=None), deadline=deadline)
        except FrameError as exc:
            raise AgentApiError(f"the Agent API endpoint {where} answered badly: {exc}") from None
        except requests.Timeout as exc:
            raise AgentApiError(
                f"the Agent API endpoint did not answer within {timeout} s"
            ) from exc
        except requests.RequestException as exc:
            raise AgentApiError(
                f"cannot reach the Agent API endpoint {where}: {type(exc).__name__}"
            ) from exc
        return result

    def close(self) -> None:
        """Release the connection pool. Idempotent."""
        self._http.close()
