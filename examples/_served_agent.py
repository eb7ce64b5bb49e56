"""The agent both serve examples serve, and the check that talks to it once.

:func:`word_counter` is an agent with one local tool, :func:`word_count`;
:func:`count_words_model` is the emulator's scripted stand-in for the model
(count the words of the message, then say how many). :func:`check_served`
serves a WSGI server in a thread and talks to the agent once over A2A and once
over the Agent API protocol, as a remote system would, then stops it.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import requests

import mantyx_sync

__all__ = ["check_served", "count_words_model", "word_count", "word_counter"]


@mantyx_sync.local_tool
def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


def word_counter(client: mantyx_sync.Client) -> mantyx_sync.Agent:
    """The served agent: it counts words with :func:`word_count`."""
    return mantyx_sync.Agent(
        client, name="word_counter", system_prompt="Count words.", tools=[word_count]
    )


def count_words_model(ctx: Any) -> Any:
    """The emulator's model: count the words of the message, then say how many."""
    from mantyx_sync.testing import ToolCall, Turn

    if ctx.turn == 0:
        return Turn("", tool_calls=[ToolCall("word_count", {"text": ctx.prompt})])
    return Turn(f"{ctx.tool_results[-1]['result']} words.")


def check_served(httpd: Any) -> None:
    """Serve ``httpd`` (a werkzeug server on a free port) in a thread, talk to it once, stop."""
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        print(requests.get(f"http://127.0.0.1:{httpd.server_port}/", timeout=10).text)
        check(f"http://127.0.0.1:{httpd.server_port}")
    finally:
        httpd.shutdown()
        thread.join(10)


def check(base: str) -> None:
    """Talk to the served agent once over each protocol, as a remote system would."""
    card = requests.get(f"{base}/a2a/.well-known/agent-card.json", timeout=10).json()
    print(f"A2A card: {card['name']} at {card['url']}")
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "one two three"}]}
    reply = requests.post(
        card["url"],
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
        timeout=60,
    ).json()
    task = reply["result"]["task"]
    print(f"A2A task {task['status']['state']}: {task['artifacts'][0]['parts'][0]['text']!r}")
    body = {
        "input": [{"role": "user", "content": [{"type": "text", "text": "four five"}]}],
        "session_id": "demo",
    }
    with requests.post(f"{base}/agent-api/process", json=body, stream=True, timeout=60) as resp:
        objects = [json.loads(line[6:]) for line in resp.iter_lines() if line.startswith(b"data: ")]
    final = objects[-1]
    print(f"Agent API response {final['status']} after {len(objects)} streamed objects")
    print(f"Agent API answer: {final['output'][-1]['content'][0]['text']!r}")
