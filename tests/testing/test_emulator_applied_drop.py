"""``fail_next(..., drop=True, applied=True)``: the server acts, then the answer is lost."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from mantyx_sync.testing import LocalMantyx, ToolCall, Turn


def test_a_run_is_created_but_its_answer_is_lost(api: Any) -> None:
    api.server.fail_next("POST", r"/agent-runs$", drop=True, applied=True)
    with pytest.raises(requests.exceptions.ConnectionError):
        api.post("/agent-runs", {"prompt": "hi", "systemPrompt": "s"})
    assert len(api.server.runs) == 1  # applied
    recorded = [r for r in api.server.requests if r.path.endswith("/agent-runs")]
    assert [r.status for r in recorded] == [0]  # but never answered
    # Only the next matching request: the one after is answered normally.
    assert api.post("/agent-runs", {"prompt": "hi", "systemPrompt": "s"}).status_code in (201, 202)


def test_a_tool_result_is_accepted_but_its_answer_is_lost(api: Any) -> None:
    api.server.queue_script([Turn("", tool_calls=[ToolCall("calc")]), Turn("done")])
    run_id = api.create_run(tools=[{"kind": "local", "name": "calc"}])
    call = api.server.wait_for_tool_call()
    api.server.fail_next("POST", r"/tool-results$", drop=True, applied=True)
    with pytest.raises(requests.exceptions.ConnectionError):
        api.tool_result(run_id, call["toolUseId"], result="4")
    assert api.server.wait_for_run(run_id).status == "succeeded"
    assert api.server.runs[run_id].tool_results[call["toolUseId"]]["result"] == "4"


def test_applied_needs_drop() -> None:
    with pytest.raises(ValueError, match="applied=True needs drop=True"):
        LocalMantyx().fail_next("POST", "x", applied=True)
