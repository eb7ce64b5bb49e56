"""A scripted, LLM-free agentscope-runtime ``AgentApp`` (runs in .venv-agentscope).

Usage: ``python agentscope_app.py PORT``

It serves the Agent API protocol (``POST /process``) with agentscope-runtime's
own runner and agentscope message adapter. Replies depend on the text sent:

  ``upper:<x>``   calls a tool ``upper`` (a plugin_call / plugin_call_output pair),
                  then answers ``<X>``
  ``fail:<x>``    raises; the runtime answers a failed response with message ``<x>``
  ``history?``    the texts this ``session_id`` has sent so far, joined with " | "
  anything else   ``echo: <text>``, streamed in two chunks
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from agentscope.message import Msg, TextBlock, ToolResultBlock, ToolUseBlock
from agentscope_runtime.engine.app import AgentApp

app = AgentApp(app_name="scripted", app_description="Deterministic Agent API test peer")
HISTORY: dict[str, list[str]] = {}


def _text(msgs: Any) -> str:
    items = msgs if isinstance(msgs, list) else [msgs]
    for msg in reversed(items):
        text = msg.get_text_content() if hasattr(msg, "get_text_content") else None
        if text:
            return str(text)
    return ""


@app.query(framework="agentscope")
async def query(self: Any, msgs: Any, request: Any = None, **kwargs: Any) -> Any:
    text = _text(msgs)
    session = getattr(request, "session_id", None) or "-"
    history = HISTORY.setdefault(session, [])
    history.append(text)
    if text.startswith("fail:"):
        raise RuntimeError(text[5:])
    if text.startswith("upper:"):
        rest = text[6:]
        call = Msg(
            "scripted",
            [ToolUseBlock(type="tool_use", id="call_1", name="upper", input={"text": rest})],
            "assistant",
        )
        yield call, True
        result = Msg(
            "system",
            [
                ToolResultBlock(
                    type="tool_result",
                    id="call_1",
                    name="upper",
                    output=[TextBlock(type="text", text=rest.upper())],
                )
            ],
            "system",
        )
        yield result, True
        final = rest.upper()
    elif text == "history?":
        final = " | ".join(history)
    else:
        final = f"echo: {text}"
    answer = Msg("scripted", [TextBlock(type="text", text=final[:3])], "assistant")
    yield answer, False
    answer.content = [TextBlock(type="text", text=final)]
    yield answer, True


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
