"""Emulator event stream: frames, replay, terminal close, flushing, keep-alives, snapshots."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import requests

from mantyx_sync.testing import Emit, ModelContext, ToolCall, Turn

LOCAL_TOOL = {
    "kind": "local",
    "name": "lookup",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
}


def _raw_get(api: Any, path: str, extra: str = "") -> socket.socket:
    sock = socket.create_connection((api.server.host, api.server.port), timeout=5)
    request = (
        f"GET /api/v1/workspaces/{api.server.workspace}{path} HTTP/1.1\r\n"
        f"Host: {api.server.host}\r\nAuthorization: Bearer {api.server.api_key}\r\n"
        f"Accept: text/event-stream\r\n{extra}\r\n"
    )
    sock.sendall(request.encode())
    return sock


def _read_until(sock: socket.socket, marker: bytes, deadline: float) -> bytes:
    data = b""
    while marker not in data:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_frames_have_id_event_and_envelope(api: Any) -> None:
    run_id = api.create_run()
    frames = api.parse_sse(api.stream_text(run_id))
    assert frames, "no frames"
    for index, frame in enumerate(frames, start=1):
        envelope = json.loads(frame["data"])
        assert frame["id"] == str(index) == str(envelope["seq"])
        assert frame["event"] == envelope["type"]
        assert set(envelope) == {"seq", "type", "data"}
    events = [json.loads(f["data"]) for f in frames]
    assert api.types(events)[-2:] == ["assistant_message", "result"]
    deltas = "".join(e["data"]["text"] for e in events if e["type"] == "assistant_delta")
    assert deltas == "You said: hello" == events[-1]["data"]["text"]
    assert events[-1]["data"]["subtype"] == "success"
    assert events[-2]["data"]["turn"] == 0


def test_snapshot_before_and_after_the_run(api: Any) -> None:
    api.server.set_model(
        [Turn("waiting", tool_calls=[ToolCall("lookup", {"q": "x"})]), Turn("done")]
    )
    run_id = api.create_run(tools=[LOCAL_TOOL], metadata={"env": "test"})
    call = api.server.wait_for_tool_call()
    running = api.get(f"/agent-runs/{run_id}").json()
    assert running["status"] == "running"
    assert running["id"] == running["runId"] == run_id
    assert running["tokens"] is None and running["turns"] is None and running["model"] is None
    assert running["metadata"] == {"env": "test"}
    assert running["spec"]["tools"] == [LOCAL_TOOL]
    assert running["sessionId"] is None
    api.tool_result(run_id, call["toolUseId"], result="ok")
    api.server.wait_for_run(run_id, status="succeeded")
    done = api.get(f"/agent-runs/{run_id}").json()
    assert done["finalText"] == "done"
    assert done["error"] is None and done["failureReason"] is None
    assert done["turns"] == 2
    assert done["model"] == {
        "id": "platform:cm6abc123",
        "provider": "anthropic",
        "vendorModelId": "claude-sonnet-4-5",
    }
    assert set(done["tokens"]) == {"inputTokens", "cachedTokens", "reasoningTokens", "outputTokens"}
    assert api.get("/agent-runs/run_nope").status_code == 404


def test_replay_with_last_event_id_and_last_seq(api: Any) -> None:
    run_id = api.create_run(prompt="one two three four five six seven eight nine ten")
    full = api.events(run_id)
    assert len(full) > 4
    by_header = api.events(run_id, headers={"Last-Event-ID": "3"})
    by_query = api.events(run_id, params={"lastSeq": 3})
    assert by_header == by_query == full[3:]
    assert [e["seq"] for e in by_header] == list(range(4, len(full) + 1))
    assert api.events(run_id, params={"lastSeq": len(full)}) == []
    assert api.get(f"/agent-runs/{run_id}/stream", params={"lastSeq": "x"}).status_code == 400


def test_stream_of_unknown_run_is_404(api: Any) -> None:
    response = api.get("/agent-runs/run_missing/stream")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_live_stream_closes_right_after_the_terminal_event(api: Any) -> None:
    api.server.set_model([Turn("", tool_calls=[ToolCall("lookup", {"q": "x"})]), Turn("bye")])
    run_id = api.create_run(tools=[LOCAL_TOOL])
    response = api.get(f"/agent-runs/{run_id}/stream", stream=True)
    lines = response.iter_lines(decode_unicode=True)
    seen: list[dict[str, Any]] = []
    for line in lines:
        if line.startswith("data: "):
            seen.append(json.loads(line[6:]))
            if seen[-1]["type"] == "local_tool_call":
                break
    api.tool_result(run_id, seen[-1]["data"]["toolUseId"], result="r")
    rest = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    assert rest[-1]["type"] == "result"
    assert api.types(rest) == [
        "local_tool_result_in",
        "assistant_delta",
        "assistant_message",
        "result",
    ]
    response.close()
    assert api.server.runs[run_id].stream_connections == 1


def test_single_small_event_arrives_immediately(api: Any) -> None:
    release = threading.Event()

    def model(ctx: ModelContext) -> Any:
        if ctx.turn == 0 and not release.is_set():
            release.set()
            return Emit("assistant_delta", {"text": "x"})
        # Hold the run open (no more events) until the test is done reading.
        hold.wait(5)
        return Turn("end")

    hold = threading.Event()
    api.server.set_model(model)
    run_id = api.create_run()
    sock = _raw_get(api, f"/agent-runs/{run_id}/stream")
    try:
        data = _read_until(sock, b'"text":"x"}}\n\n', time.monotonic() + 3)
        assert b"Transfer-Encoding: chunked" in data
        assert b'data: {"seq":1,"type":"assistant_delta","data":{"text":"x"}}' in data
        assert api.server.runs[run_id].status == "running"
    finally:
        hold.set()
        sock.close()
    api.server.wait_for_run(run_id, status="succeeded")


def test_headers_are_sent_before_any_event_exists(api: Any) -> None:
    hold = threading.Event()
    api.server.set_model(lambda ctx: (hold.wait(5), Turn("late"))[1])
    run_id = api.create_run()
    try:
        response = api.get(f"/agent-runs/{run_id}/stream", stream=True, timeout=3)
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
    finally:
        hold.set()
    assert api.envelopes(response.text)[-1]["type"] == "result"


def test_keepalive_comments_while_idle(make_api: Any) -> None:
    api = make_api(
        keepalive=0.05, model=[Turn("", tool_calls=[ToolCall("lookup", {"q": "x"})]), Turn("ok")]
    )
    run_id = api.create_run(tools=[LOCAL_TOOL])
    sock = _raw_get(api, f"/agent-runs/{run_id}/stream")
    try:
        data = _read_until(sock, b": ping\n\n", time.monotonic() + 3)
        assert b": ping\n\n" in data
        assert b"local_tool_call" in data
    finally:
        sock.close()


def test_result_shape_ok_and_usage_off(make_api: Any) -> None:
    api = make_api(result_shape="ok", usage=False)
    run_id = api.create_run()
    result = api.events(run_id)[-1]
    assert result["data"] == {"ok": True, "text": "You said: hello"}
    snapshot = api.get(f"/agent-runs/{run_id}").json()
    assert snapshot["status"] == "succeeded"
    assert snapshot["tokens"] is None and snapshot["model"] is None


def test_started_event_option(make_api: Any) -> None:
    api = make_api(started_event=True)
    events = api.events(api.create_run())
    assert events[0] == {"seq": 1, "type": "started", "data": {}}


def test_many_events_stream_quickly(api: Any) -> None:
    chunks = [f"c{i} " for i in range(5000)]
    api.server.set_model([Turn("".join(chunks), chunks=chunks)])
    run_id = api.create_run()
    started = time.monotonic()
    events = api.events(run_id)
    assert len(events) == 5002
    assert time.monotonic() - started < 5
    assert [e["seq"] for e in events] == list(range(1, 5003))


def test_messages_input_and_last_user_message_as_prompt(api: Any) -> None:
    body = {
        "systemPrompt": "s",
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "second"},
        ],
    }
    response = api.post("/agent-runs", body)
    run_id = response.json()["runId"]
    assert api.events(run_id)[-1]["data"]["text"] == "You said: second"
    bad = api.post(
        "/agent-runs",
        {
            "systemPrompt": "s",
            "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        },
    )
    assert bad.status_code == 400
    assert requests.get(api.url(f"/agent-runs/{run_id}"), timeout=5).status_code == 401
