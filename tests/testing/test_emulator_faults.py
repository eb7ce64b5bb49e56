"""Emulator fault injection: every Faults field, and fail_next (status, headers, drop)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests

from mantyx_sync.testing import Faults, ToolCall, Turn

LOCAL = {"kind": "local", "name": "calc"}
BROKEN = (requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError)
SIX_CHUNKS = [Turn("a b c d e f", chunks=["a", "b", "c", "d", "e", "f"])]  # 8 events


def _read_seqs(api: Any, run_id: str, **kw: Any) -> tuple[list[int], bool]:
    """Seqs received on one connection, and whether it broke (vs. ended cleanly)."""
    seqs: list[int] = []
    response = api.get(f"/agent-runs/{run_id}/stream", stream=True, **kw)
    assert response.status_code == 200
    try:
        for line in response.iter_lines(decode_unicode=True):
            if line.startswith("data: "):
                seqs.append(json.loads(line[6:])["seq"])
    except BROKEN:
        return seqs, True
    finally:
        response.close()
    return seqs, False


def _tool_run(api: Any, faults: Faults) -> tuple[str, dict[str, Any]]:
    api.server.inject(faults)
    api.server.queue_script([Turn("", tool_calls=[ToolCall("calc")]), Turn("done")])
    run_id = api.create_run(tools=[LOCAL])
    return run_id, api.server.wait_for_tool_call()


def test_drop_after_cuts_the_connection_once(api: Any) -> None:
    api.server.set_model(SIX_CHUNKS)
    api.server.inject(Faults(drop_after=3))
    run_id = api.create_run()
    api.server.wait_for_run(run_id)
    assert _read_seqs(api, run_id) == ([1, 2, 3], True)
    assert _read_seqs(api, run_id, params={"lastSeq": 3}) == ([4, 5, 6, 7, 8], False)
    assert _read_seqs(api, run_id) == (list(range(1, 9)), False)
    assert api.server.runs[run_id].stream_connections == 3


def test_drop_times_cuts_several_connections_with_progress(api: Any) -> None:
    api.server.set_model(SIX_CHUNKS)
    api.server.inject(Faults(drop_after=2, drop_times=2))
    run_id = api.create_run()
    api.server.wait_for_run(run_id)
    assert _read_seqs(api, run_id) == ([1, 2], True)
    assert _read_seqs(api, run_id, headers={"Last-Event-ID": "2"}) == ([3], True)
    assert _read_seqs(api, run_id, headers={"Last-Event-ID": "3"}) == ([4, 5, 6, 7, 8], False)


def test_drop_on_a_live_stream(api: Any) -> None:
    run_id, call = _tool_run(api, Faults(drop_after=2))
    assert _read_seqs(api, run_id) == ([1, 2], True)
    api.tool_result(run_id, call["toolUseId"], result="r")
    seqs, broke = _read_seqs(api, run_id, params={"lastSeq": 2})
    assert not broke and seqs[0] == 3
    assert api.server.runs[run_id].status == "succeeded"


def test_stall_after_pauses_then_resumes(make_api: Any) -> None:
    api = make_api(keepalive=0.02, model=SIX_CHUNKS)
    api.server.inject(Faults(stall_after=2, stall_seconds=0.3))
    run_id = api.create_run()
    api.server.wait_for_run(run_id)
    response = api.get(f"/agent-runs/{run_id}/stream", stream=True)
    arrivals: dict[int, float] = {}
    pings_during_stall = 0
    for line in response.iter_lines(decode_unicode=True):
        if line.startswith("data: "):
            arrivals[json.loads(line[6:])["seq"]] = time.monotonic()
        elif line.startswith(":") and 2 in arrivals and 3 not in arrivals:
            pings_during_stall += 1
    assert sorted(arrivals) == list(range(1, 9))
    assert arrivals[3] - arrivals[2] >= 0.25
    assert pings_during_stall == 0
    assert _read_seqs(api, run_id) == (list(range(1, 9)), False)


def test_stall_ends_when_client_leaves_and_is_once(api: Any) -> None:
    api.server.set_model(SIX_CHUNKS)
    api.server.inject(Faults(stall_after=1, stall_seconds=30))
    run_id = api.create_run()
    api.server.wait_for_run(run_id)
    response = api.get(f"/agent-runs/{run_id}/stream", stream=True, timeout=0.3)
    lines = response.iter_lines(decode_unicode=True)
    first = next(line for line in lines if line.startswith("data: "))
    assert json.loads(first[6:])["seq"] == 1
    with pytest.raises(BROKEN):
        next(line for line in lines if line.startswith("data: "))
    response.close()
    started = time.monotonic()
    assert _read_seqs(api, run_id, params={"lastSeq": 1}) == ([2, 3, 4, 5, 6, 7, 8], False)
    assert time.monotonic() - started < 2


def test_replay_overlap_resends_before_resume_point(api: Any) -> None:
    api.server.set_model(SIX_CHUNKS)
    api.server.inject(Faults(replay_overlap=2))
    run_id = api.create_run()
    api.server.wait_for_run(run_id)
    assert _read_seqs(api, run_id, params={"lastSeq": 4}) == ([3, 4, 5, 6, 7, 8], False)
    assert _read_seqs(api, run_id) == (list(range(1, 9)), False)


def test_duplicate_tool_calls(api: Any) -> None:
    run_id, call = _tool_run(api, Faults(duplicate_tool_calls=True))
    calls = [e for e in api.server.runs[run_id].events if e["type"] == "local_tool_call"]
    assert len(calls) == 2
    assert calls[0]["data"] == calls[1]["data"]
    assert calls[0]["seq"] != calls[1]["seq"]
    assert api.tool_result(run_id, call["toolUseId"], result="r").status_code == 200
    assert api.tool_result(run_id, call["toolUseId"], result="r").status_code in (404, 409)
    with pytest.raises(TimeoutError):
        api.server.wait_for_tool_call(timeout=0.05)
    api.server.wait_for_run(run_id, status="succeeded")


def test_tool_result_errors_are_not_accepted(api: Any) -> None:
    run_id, call = _tool_run(api, Faults(tool_result_errors=2, tool_result_error_status=502))
    for _ in range(2):
        response = api.tool_result(run_id, call["toolUseId"], result="r")
        assert response.status_code == 502
        assert "error" in response.json()
    assert api.server.runs[run_id].tool_results == {}
    assert api.server.runs[run_id].status == "running"
    assert api.tool_result(run_id, call["toolUseId"], result="r").status_code == 200
    api.server.wait_for_run(run_id, status="succeeded")


def test_tool_result_rate_limited(api: Any) -> None:
    run_id, call = _tool_run(api, Faults(tool_result_rate_limited=1, retry_after=1.5))
    response = api.tool_result(run_id, call["toolUseId"], result="r")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1.5"
    assert response.json()["error"] == "rate_limited"
    assert api.server.runs[run_id].tool_results == {}
    assert api.tool_result(run_id, call["toolUseId"], result="r").status_code == 200


def test_tool_result_accept_then_drop(api: Any) -> None:
    run_id, call = _tool_run(api, Faults(tool_result_accept_then_drop=1))
    with pytest.raises(requests.exceptions.ConnectionError):
        api.tool_result(run_id, call["toolUseId"], result="r")
    run = api.server.wait_for_run(run_id, status="succeeded")
    assert run.tool_results[call["toolUseId"]]["result"] == "r"
    retry = api.tool_result(run_id, call["toolUseId"], result="r")
    assert retry.status_code == 409
    posts = [r for r in api.server.requests if r.path.endswith("/tool-results")]
    assert [r.status for r in posts] == [0, 409]


def test_stream_open_errors(api: Any) -> None:
    api.server.inject(Faults(stream_open_errors=2, stream_open_status=502))
    run_id = api.create_run()
    for _ in range(2):
        response = api.get(f"/agent-runs/{run_id}/stream")
        assert response.status_code == 502
        assert "error" in response.json()
    assert api.events(run_id)[-1]["type"] == "result"
    assert api.server.runs[run_id].stream_connections == 1


def test_strip_event_lines(api: Any) -> None:
    api.server.inject(Faults(strip_event_lines=True))
    frames = api.parse_sse(api.stream_text(api.create_run()))
    assert frames and all(set(f) == {"id", "data"} for f in frames)
    assert json.loads(frames[-1]["data"])["type"] == "result"


def test_no_event_field_in_data(api: Any) -> None:
    api.server.inject(Faults(no_event_field_in_data=True))
    run_id = api.create_run()
    frames = api.parse_sse(api.stream_text(run_id))
    for frame in frames:
        envelope = json.loads(frame["data"])
        assert "type" not in envelope
        assert set(envelope) == {"seq", "data"}
    assert frames[-1]["event"] == "result"
    assert api.server.runs[run_id].events[-1]["type"] == "result"


def test_malformed_frame_after(api: Any) -> None:
    api.server.set_model(SIX_CHUNKS)
    api.server.inject(Faults(malformed_frame_after=2))
    run_id = api.create_run()
    api.server.wait_for_run(run_id)
    frames = api.parse_sse(api.stream_text(run_id))
    assert len(frames) == 9
    bad = frames[2]
    assert "id" not in bad
    with pytest.raises(ValueError):
        json.loads(bad["data"])
    good = [json.loads(f["data"]) for i, f in enumerate(frames) if i != 2]
    assert [e["seq"] for e in good] == list(range(1, 9))
    again = api.parse_sse(api.stream_text(run_id))
    assert len(again) == 8


def test_unknown_event_after(api: Any) -> None:
    api.server.inject(Faults(unknown_event_after=1))
    events = api.events(api.create_run())
    assert events[1] == {"seq": 2, "type": "mystery_event", "data": {"x": 1}}
    assert events[-1]["type"] == "result"


def test_fault_plans_apply_to_one_run_each_fifo(api: Any) -> None:
    api.server.inject(Faults(unknown_event_after=1))
    api.server.inject(Faults(strip_event_lines=True))
    first, second, third = api.create_run(), api.create_run(), api.create_run()
    assert "mystery_event" in api.types(api.events(first))
    assert "mystery_event" not in api.types(api.events(second))
    assert "event" not in api.parse_sse(api.stream_text(second))[0]
    assert "event" in api.parse_sse(api.stream_text(third))[0]


def test_faults_reject_negative_counts() -> None:
    with pytest.raises(ValueError):
        Faults(tool_result_errors=-1)


def test_fail_next_status_headers_and_times(api: Any) -> None:
    api.server.fail_next("POST", r"/agent-runs$", 429, headers={"Retry-After": "0"})
    api.server.fail_next("get", r"/models$", 503, times=2)
    limited = api.post("/agent-runs", {"systemPrompt": "s", "prompt": "p"})
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "0"
    assert limited.json()["error"] == "rate_limited"
    assert api.post("/agent-runs", {"systemPrompt": "s", "prompt": "p"}).status_code == 202
    assert [api.get("/models").status_code for _ in range(3)] == [503, 503, 200]
    assert len(api.server.runs) == 1


def test_fail_next_custom_body_any_method_and_before_auth(api: Any) -> None:
    api.server.fail_next("*", r"/agent-sessions", 500, json={"error": "boom", "message": "m"})
    response = requests.post(api.url("/agent-sessions"), json={}, timeout=5)
    assert response.status_code == 500
    assert response.json() == {"error": "boom", "message": "m"}
    assert requests.post(api.url("/agent-sessions"), json={}, timeout=5).status_code == 401


def test_fail_next_drop(api: Any) -> None:
    api.server.fail_next("GET", r"/models", 0, drop=True)
    with pytest.raises(requests.exceptions.ConnectionError):
        api.get("/models")
    assert api.get("/models").status_code == 200
    assert [r.status for r in api.server.requests] == [0, 200]
    with pytest.raises(ValueError):
        api.server.fail_next("GET", r"/models", 500, times=0)
