"""Pure units: folding an Agent API SSE stream into a reply, and request texts."""

from __future__ import annotations

import json
from typing import Any

from mantyx_sync._peers.agent_api.client import process_url, read_reply
from mantyx_sync.serve._agent_api_wire import request_text


def _frames(*objects: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for obj in objects:
        lines += [f"data: {json.dumps(obj)}", ""]
    return lines


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
        ": keep-alive",
        "",
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
    reply = read_reply(lines)
    assert reply.status == "failed" and reply.error == "bad (E)"


def test_text_from_the_final_output_when_no_message_was_streamed() -> None:
    final = {
        "object": "response",
        "status": "completed",
        "output": [_message("message", "assistant", [{"type": "text", "text": "late"}])],
    }
    assert read_reply(_frames(final)).text == "late"


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
