"""The emulator's run/session lists and session replay, over raw HTTP (NEWER.md 10, 12, 13)."""

from __future__ import annotations

from typing import Any

from mantyx_sync.testing import LocalMantyx


def test_run_list_cursor_filters_and_errors(api: Any, srv: LocalMantyx) -> None:
    ids = [api.create_run(metadata={"k": str(i % 2)}) for i in range(5)]
    for run_id in ids:
        srv.wait_for_run(run_id)
    first = api.get("/agent-runs", params={"limit": 2, "includeTotal": 1}).json()
    assert first["total"] == 5 and first["limit"] == 2
    assert [r["id"] for r in first["runs"]] == ids[::-1][:2]
    second = api.get("/agent-runs", params={"limit": 2, "cursor": first["nextCursor"]}).json()
    assert [r["id"] for r in second["runs"]] == ids[::-1][2:4]
    assert second["total"] is None
    odd = api.get("/agent-runs", params=[("metadata", "k:1"), ("status", "succeeded")]).json()
    assert [r["id"] for r in odd["runs"]] == [ids[3], ids[1]] and odd["nextCursor"] is None
    item = odd["runs"][0]
    assert set(item) >= {
        "id",
        "sessionId",
        "status",
        "inputPreview",
        "outputPreview",
        "tokens",
        "turns",
        "durationMs",
        "toolCallCount",
        "metadata",
        "createdAt",
        "completedAt",
        "specName",
        "agentId",
        "modelId",
        "error",
    }
    assert api.get("/agent-runs", params={"cursor": "nope"}).status_code == 400
    assert api.get("/agent-runs", params={"limit": 0}).status_code == 400
    assert api.get("/agent-runs", params={"metadata": "nocolon"}).status_code == 400
    assert api.get("/agent-runs", params={"limit": 999}).json()["limit"] == 200


def test_session_list_offset_and_replay_pages(api: Any, srv: LocalMantyx) -> None:
    created = api.post("/agent-sessions", {"systemPrompt": "s", "metadata": {"t": "x"}})
    session_id = created.json()["sessionId"]
    for i in range(3):
        reply = api.post(f"/agent-sessions/{session_id}/messages", {"prompt": f"m{i}"})
        srv.wait_for_run(reply.json()["runId"])
    api.post("/agent-sessions", {"systemPrompt": "s"})
    listed = api.get("/agent-sessions", params={"offset": 1}).json()
    assert listed["total"] == 2 and [s["sessionId"] for s in listed["sessions"]] == [session_id]
    assert listed["sessions"][0]["summary"] == "m0"
    page = api.get(f"/agent-sessions/{session_id}/events", params={"lastMessages": 4}).json()
    assert [e["seq"] for e in page["events"]] == [3, 4, 5, 6]
    assert page["nextBeforeSeq"] == 3 and page["total"] == 6
    older = api.get(
        f"/agent-sessions/{session_id}/events", params={"lastMessages": 4, "beforeSeq": 3}
    ).json()
    assert [e["type"] for e in older["events"]] == ["user_message", "assistant_message"]
    assert older["nextBeforeSeq"] is None
    bad = api.get(f"/agent-sessions/{session_id}/events", params={"lastMessages": 501})
    assert bad.status_code == 400
    assert api.get("/agent-sessions/nope/events").status_code == 404
