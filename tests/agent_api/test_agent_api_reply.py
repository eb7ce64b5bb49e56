"""Folding an Agent API SSE stream into a reply (pure units, and one endpoint on
127.0.0.1 answering badly), and request texts."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server
from werkzeug.wrappers import Response

from mantyx_sync._peers.agent_api.client import (
    AgentApiClient,
    process_url,
    read_reply,
)
from mantyx_sync.serve._agent_api_wire import request_text


def _frames(*objects: dict[str, Any]) -> list[bytes]:
    return [f"data: {json.dumps(obj)}\n\n".encode() for obj in objects]


def _message(msg_type: str, role: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "object": "message",
        "status": "completed",
        "type": msg_type,
        "role": role,
        "content": content,
    }


def test_fold_text_calls_and_status() -> None:
    call = {"call_id": "c1", "name": "upper", "arguments": '{"text": "abc"}'}
    output = {"call_id": "c1", "name": "upper", "output": '[{"type": "text", "text": "ABC"}]'}
    lines = [
        b": keep-alive\n\n",
        *_frames(
            {"object": "response", "status": "created", "session_id": "s"},
            _message("plugin_call", "assistant", [{"type": "data", "data": call}]),
            _message("plugin_call_output", "tool", [{"type": "data", "data": output}]),
            {"object": "content", "type": "text", "delta": True, "text": "AB"},
            _message("message", "assistant", [{"type": "text", "text": "ABC"}]),
            {"object": "response", "status": "completed", "session_id": "s"},
        ),
    ]
    reply = read_reply(lines)
    assert reply.status == "completed" and reply.session_id == "s"
    assert reply.text == "ABC"
    assert reply.tool_lines == ('upper({"text": "abc"}) → ABC',)
    assert reply.as_tool_result() == 'ABC\n\n[remote tool calls]\n- upper({"text": "abc"}) → ABC'


def test_fold_failure_multiline_data_and_missing_final_blank_line() -> None:
    failed = {"object": "response", "status": "failed", "error": {"code": "E", "message": "bad"}}
    text = json.dumps(failed, indent=1).splitlines()
    lines = ["data: not json", "", *[f"data: {part}" for part in text]]
    # Split anywhere, even inside a CRLF, and no blank line after the last frame.
    wire = "\r\n".join(lines).encode()
    reply = read_reply([wire[:15], wire[15:16], wire[16:]])
    assert reply.status == "failed" and reply.error == "bad (E)"


def test_text_from_the_final_output_when_no_message_was_streamed() -> None:
    final = {
        "object": "response",
        "status": "completed",
        "output": [_message("message", "assistant", [{"type": "text", "text": "late"}])],
    }
    assert read_reply(_frames(final)).text == "late"


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[bytes]]]:
    """An Agent API endpoint that answers every request with the bytes in the list."""
    body: list[bytes] = []

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        return Response(list(body), content_type="text/event-stream")(environ, start_response)

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", body
    finally:
        server.shutdown()
        thread.join(5)
        server.server_close()


def test_a_frame_of_many_lines_is_read(
    endpoint: tuple[str, list[bytes]],
) -> None:
    url, body = endpoint
    done = {"object": "response", "status": "completed", "session_id": "s"}
    lines = json.dumps(done, indent=1).splitlines()
    body.append("".join(f"data: {line}\n" for line in lines).encode() + b": pad\n" * 70 + b"\n")
    client = AgentApiClient(url, None)
    try:
        # Pretty-printed JSON and a run of comments: more lines than sseclient-py
        # is handed at once, read as one event.
        assert client.send("hi", session_id="s", timeout=5).status == "completed"
    finally:
        client.close()


def test_process_url() -> None:
    assert process_url("http://h:1") == "http://h:1/process"
    assert process_url("http://h:1/agent/") == "http://h:1/agent/process"
    assert process_url("http://h:1/x/process?k=v") == "http://h:1/x/process?k=v"


def test_request_text_takes_the_last_user_message() -> None:
    body = {
        "input": [
            {"role": "user", "content": [{"type": "text", "text": "old"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "reply"}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "data", "data": {"k": 1}}],
            },
        ]
    }
    assert request_text(body) == 'a\n{"k": 1}'
    assert request_text({"input": [{"role": "user", "content": "plain"}]}) == "plain"
    assert (
        request_text({"input": [{"role": "user", "content": [{"type": "text", "text": " "}]}]})
        is None
    )
    assert request_text({"input": "nope"}) is None
