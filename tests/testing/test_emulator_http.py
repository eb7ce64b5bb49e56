"""Emulator HTTP surface: auth, scopes, workspace slug, models, validation, recording."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest
import requests

from mantyx_sync.testing import LocalMantyx

BASE_SPEC = {"systemPrompt": "You are a test.", "prompt": "hi"}


def test_bearer_and_x_api_key_both_authenticate(api: Any) -> None:
    assert api.get("/models").status_code == 200
    response = requests.get(
        api.url("/models"), headers={"X-API-Key": api.server.api_key}, timeout=5
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer nope"}, {"X-API-Key": "wrong"}, {"Authorization": "Basic abc"}],
)
def test_missing_or_wrong_credential_is_401(api: Any, headers: dict[str, str]) -> None:
    response = requests.get(api.url("/models"), headers=headers, timeout=5)
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert "message" in response.json()


def test_wrong_workspace_slug_is_404_with_hint(api: Any) -> None:
    url = f"{api.server.base_url}/api/v1/workspaces/other-ws/models"
    response = requests.get(url, headers=api.headers, timeout=5)
    assert response.status_code == 404
    body = response.json()
    assert body["error"] == "not_found"
    assert body["hint"] == "test-ws"


def test_unknown_route_is_404(api: Any) -> None:
    assert api.get("/nothing-here").status_code == 404
    response = requests.get(f"{api.server.base_url}/elsewhere", headers=api.headers, timeout=5)
    assert response.status_code == 404


def test_oauth_token_scopes(make_api: Any) -> None:
    api = make_api(
        oauth_tokens={
            "mantyx_at_reader": ["models:read", "runs:read"],
            "mantyx_at_writer": ["runs:write", "runs:read"],
        }
    )
    reader = {"Authorization": "Bearer mantyx_at_reader"}
    assert requests.get(api.url("/models"), headers=reader, timeout=5).status_code == 200
    response = requests.post(api.url("/agent-runs"), json=BASE_SPEC, headers=reader, timeout=5)
    assert response.status_code == 403
    assert response.json()["error"] == "insufficient_scope"
    assert response.json()["required"] == "runs:write"
    assert response.headers["WWW-Authenticate"] == (
        'Bearer error="insufficient_scope", scope="runs:write"'
    )
    writer = {"Authorization": "Bearer mantyx_at_writer"}
    response = requests.post(api.url("/agent-runs"), json=BASE_SPEC, headers=writer, timeout=5)
    assert response.status_code == 202
    session = requests.post(
        api.url("/agent-sessions"), json={"systemPrompt": "s"}, headers=writer, timeout=5
    )
    assert session.status_code == 403
    assert session.json()["required"] == "sessions:write"
    assert requests.get(api.url("/models"), headers=writer, timeout=5).status_code == 403


def test_models_catalog(api: Any) -> None:
    body = api.get("/models").json()
    ids = [m["id"] for m in body["models"]]
    assert body["defaultModelId"] in ids
    assert any(m["pricing"] is None for m in body["models"])
    priced = [m for m in body["models"] if m["pricing"]]
    assert priced and "inputPer1MUsd" in priced[0]["pricing"]
    for model in body["models"]:
        assert {"id", "label", "provider", "vendorModelId", "source"} <= set(model)


def test_create_run_answers_202_with_stream_url(api: Any) -> None:
    response = api.post("/agent-runs", BASE_SPEC)
    assert response.status_code == 202
    body = response.json()
    assert body["runId"].startswith("run_")
    assert body["streamUrl"] == f"/api/v1/workspaces/test-ws/agent-runs/{body['runId']}/stream"


def test_create_status_201_option(make_api: Any) -> None:
    api = make_api(create_status=201)
    assert api.post("/agent-runs", BASE_SPEC).status_code == 201


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, "not both"),
        ({"prompt": None}, "prompt"),
        ({"systemPrompt": None}, "systemPrompt"),
        ({"tools": [{"kind": "weird", "name": "x"}]}, "tools[0].kind"),
        ({"tools": [{"kind": "local", "name": "bad name"}]}, "tools[0].name"),
        ({"tools": [{"kind": "local", "name": "a" * 65}]}, "tools[0].name"),
        (
            {
                "tools": [
                    {"kind": "local", "name": "dup"},
                    {"kind": "a2a_local", "name": "dup", "agentCard": {}},
                ]
            },
            "duplicate",
        ),
        ({"tools": [{"kind": "mcp_local", "name": "fs", "tools": []}]}, "tools[0].tools"),
        (
            {
                "tools": [
                    {
                        "kind": "mcp_local",
                        "name": "fs",
                        "tools": [{"name": f"t{i}"} for i in range(65)],
                    }
                ]
            },
            "tools[0].tools",
        ),
        (
            {
                "tools": [
                    {
                        "kind": "a2a",
                        "name": "peer",
                        "agentCardUrl": "https://x",
                        "headers": {"Authorization": "x" * 8193},
                    }
                ]
            },
            "headers",
        ),
        ({"tools": [{"kind": "a2a_local", "name": "peer"}]}, "agentCard"),
        ({"outputSchema": {"name": "bad name", "schema": {}}}, "outputSchema.name"),
        ({"outputSchema": {"schema": []}}, "outputSchema.schema"),
        ({"outputSchema": {"schema": {"description": "x" * 33000}}}, "32 KB"),
        ({"metadata": {f"k{i}": "v" for i in range(17)}}, "16"),
        ({"metadata": {"bad key!": "v"}}, "metadata"),
        ({"metadata": {"k": "v" * 257}}, "256"),
        ({"metadata": {"k": 1}}, "string"),
        ({"metadata": {f"k{i}": "v" * 250 for i in range(16)}}, "4 KB"),
        ({"loopDetection": {"consecutiveThreshold": 1}}, "consecutiveThreshold"),
        ({"loopDetection": {"consecutiveThreshold": 5, "hardCutoffThreshold": 5}}, "greater"),
        ({"loopDetection": {"hardCutoffThreshold": 101}}, "hardCutoffThreshold"),
        ({"loopDetection": True}, "loopDetection"),
        ({"toolBudgets": {f"t{i}": {"maxCalls": 1} for i in range(33)}}, "32"),
        ({"toolBudgets": {"x" * 121: {"maxCalls": 1}}}, "1-120"),
        ({"toolBudgets": {"t": {"maxCalls": 1001}}}, "maxCalls"),
        ({"reasoningLevel": "extreme"}, "reasoningLevel"),
        ({"reasoningLevel": 101}, "reasoningLevel"),
    ],
)
def test_invalid_specs_are_400_naming_the_field(
    api: Any, change: dict[str, Any], word: str
) -> None:
    body = {**BASE_SPEC, **change}
    body = {k: v for k, v in body.items() if v is not None}
    response = api.post("/agent-runs", body)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_request"
    assert word in response.json()["message"]


def test_neither_prompt_nor_messages_is_400(api: Any) -> None:
    response = api.post("/agent-runs", {"systemPrompt": "s"})
    assert response.status_code == 400
    assert "prompt or messages" in response.json()["message"]


def test_non_json_body_is_400(api: Any) -> None:
    response = requests.post(
        api.url("/agent-runs"),
        data=b"{nope",
        headers={**api.headers, "Content-Type": "application/json"},
        timeout=5,
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def test_valid_rich_spec_is_accepted(api: Any) -> None:
    body = {
        **BASE_SPEC,
        "modelId": "claude-sonnet-4-5",
        "reasoningLevel": 40,
        "agentId": "agent_cm6abc123",
        "loopDetection": False,
        "toolBudgets": {"recall": {"maxCalls": 0}},
        "metadata": {"customer": "acme", "trace.id": "t-1"},
        "outputSchema": {"name": "report", "schema": {"type": "object"}},
        "tools": [
            {"kind": "mantyx", "id": "tool_1"},
            {"kind": "mantyx_plugin", "name": "web_search"},
            {"kind": "mcp", "name": "github", "url": "https://mcp", "toolFilter": ["a"]},
            {"kind": "mcp_local", "name": "fs", "tools": [{"name": "fs_read"}]},
        ],
    }
    assert api.post("/agent-runs", body).status_code == 202


@pytest.mark.parametrize(
    "model_id",
    ["platform:cm6abc123", "provider:cm6def456:gpt-5.5-mini", "openai/gpt-5.5", "gemini-2.5-pro"],
)
def test_model_id_forms_are_accepted(api: Any, model_id: str) -> None:
    assert api.post("/agent-runs", {**BASE_SPEC, "modelId": model_id}).status_code == 202


@pytest.mark.parametrize("model_id", ["nope-model", "gpt-5.5"])
def test_unknown_or_ambiguous_model_is_invalid_model(api: Any, model_id: str) -> None:
    response = api.post("/agent-runs", {**BASE_SPEC, "modelId": model_id})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_model"
    assert body["candidates"]
    if model_id == "gpt-5.5":
        assert set(body["candidates"]) == {"provider:cm6def456", "platform:cm6ghi789"}


def test_recorded_requests_mask_secrets(make_api: Any) -> None:
    api = make_api(api_key="mantyx_secret_key_123", oauth_tokens={"mantyx_at_tok": ["runs:read"]})
    api.get("/models")
    requests.get(
        api.url("/models"),
        headers={"X-API-Key": "mantyx_secret_key_123", "X-Echo": "mantyx_secret_key_123"},
        timeout=5,
    )
    requests.get(
        api.url("/models"),
        headers={"Authorization": "Bearer mantyx_at_tok", "X-Trace": "abc"},
        timeout=5,
    )
    api.post("/agent-runs", {**BASE_SPEC, "metadata": {"a": "b"}}, params={"x": "1"})
    recorded = api.server.requests
    assert [r.status for r in recorded] == [200, 200, 403, 202]
    assert recorded[0].header("authorization") == "***"
    assert recorded[1].headers["X-API-Key"] == "***"
    assert recorded[1].headers["X-Echo"] == "***"
    assert recorded[2].headers["X-Trace"] == "abc"
    assert recorded[3].method == "POST"
    assert recorded[3].path == "/api/v1/workspaces/test-ws/agent-runs"
    assert recorded[3].query == {"x": "1"}
    assert recorded[3].json["metadata"] == {"a": "b"}
    assert "mantyx_secret_key_123" not in repr(recorded)
    assert "mantyx_at_tok" not in repr(recorded)
    api.server.clear_requests()
    assert api.server.requests == []


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs iproute2's ss to read the backlog")
def test_the_emulator_lets_a_thousand_connections_wait_to_be_accepted() -> None:
    # werkzeug's own backlog of 128 dropped connections when a thousand runs
    # were created at once (benchmarks row 8b), and a create is never retried.
    with LocalMantyx() as server:
        port = server.base_url.rsplit(":", 1)[1]
        listing = subprocess.run(
            ["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, timeout=10
        ).stdout.split()
        backlog = int(listing[2])  # a listening socket's Send-Q is its backlog
        with open("/proc/sys/net/core/somaxconn", encoding="ascii") as cap:
            assert backlog >= min(1024, int(cap.read()))
