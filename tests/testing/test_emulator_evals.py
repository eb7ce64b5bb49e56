"""The emulator's evaluation routes over raw HTTP (EVALS.md)."""

from __future__ import annotations

import json
from typing import Any

from mantyx_sync.testing import LocalMantyx


def test_eval_routes_validate_and_stream_flat_frames(api: Any, srv: LocalMantyx) -> None:
    dataset_id = srv.add_eval_dataset("d", [{"input": {"prompt": "hi"}, "name": "one"}])
    assert api.get("/eval-datasets").json()["datasets"][0]["caseCount"] == 1
    assert api.get(f"/eval-datasets/{dataset_id}").json()["cases"][0]["name"] == "one"
    assert api.get("/eval-datasets/nope").status_code == 404
    both = {"datasetId": dataset_id, "dataset": {"cases": []}, "agentId": "a"}
    assert api.post("/eval-runs", both).status_code == 400
    assert api.post("/eval-runs", {"datasetId": dataset_id}).status_code == 400
    assert api.post("/eval-runs", {"datasetId": "ds_x", "agentId": "a"}).status_code == 404
    bad_case = {"dataset": {"cases": [{"input": {}}]}, "agentId": "a"}
    assert api.post("/eval-runs", bad_case).status_code == 400

    started = api.post("/eval-runs", {"datasetId": dataset_id, "agent": {"systemPrompt": "s"}})
    assert started.status_code == 201
    eval_id = started.json()["runId"]
    assert started.json()["streamUrl"].endswith(f"/eval-runs/{eval_id}/stream")
    text = api.get(f"/eval-runs/{eval_id}/stream").text
    frames = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert [f["type"] for f in frames] == ["case_started", "case_completed", "run_completed"]
    assert all("seq" not in f for f in frames)
    assert frames[0]["agentRunId"] in srv.runs
    detail = api.get(f"/eval-runs/{eval_id}").json()
    assert detail["status"] == "succeeded" and detail["results"][0]["passed"] is True
    again = api.get(f"/eval-runs/{eval_id}/stream").text
    assert again == text, "every connection replays the whole log"
    assert api.post(f"/eval-runs/{eval_id}/cancel").json() == {"ok": False}
    assert api.get("/eval-runs/compare", params={"a": eval_id}).status_code == 400
