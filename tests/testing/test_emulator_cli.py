"""``python -m mantyx_sync.testing serve``, the pytest fixture, and server lifecycle."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
import requests

from mantyx_sync.testing import LocalMantyx, ToolCall, Turn


def _serve(*args: str) -> tuple[subprocess.Popen[str], list[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mantyx_sync.testing", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C"):
            break
    return process, lines


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - only on a hang
        process.kill()
        process.wait(timeout=5)


def test_cli_serve_with_default_key() -> None:
    process, lines = _serve("--workspace", "cli-ws")
    try:
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", lines[0])
        assert match, lines
        assert "workspace: cli-ws" in lines
        assert "api key: mantyx_test_key" in lines
        response = requests.get(
            f"{match[1]}/api/v1/workspaces/cli-ws/models",
            headers={"Authorization": "Bearer mantyx_test_key"},
            timeout=5,
        )
        assert response.status_code == 200
        assert response.json()["models"]
    finally:
        _stop(process)
    assert process.returncode == 0


def test_cli_never_prints_a_user_key() -> None:
    process, lines = _serve("--api-key", "mantyx_user_secret")
    try:
        assert not any("mantyx_user_secret" in line for line in lines)
        url = re.search(r"(http://\S+)", lines[0])
        assert url
        response = requests.get(
            f"{url[1]}/api/v1/workspaces/test-ws/models",
            headers={"X-API-Key": "mantyx_user_secret"},
            timeout=5,
        )
        assert response.status_code == 200
    finally:
        _stop(process)


def test_pytest_fixture_serves(mantyx_server: LocalMantyx) -> None:
    assert mantyx_server.base_url.startswith("http://127.0.0.1:")
    assert not mantyx_server.base_url.endswith("/")
    mantyx_server.set_model([Turn("fixture")])
    url = f"{mantyx_server.base_url}/api/v1/workspaces/{mantyx_server.workspace}/agent-runs"
    headers = {"Authorization": f"Bearer {mantyx_server.api_key}"}
    response = requests.post(
        url, json={"systemPrompt": "s", "prompt": "p"}, headers=headers, timeout=5
    )
    assert response.status_code == 202
    assert mantyx_server.wait_for_run().events[-1]["data"]["text"] == "fixture"


def test_stop_is_idempotent_and_ends_open_streams() -> None:
    server = LocalMantyx(model=[ToolCall("t", kind="local"), Turn("never")])
    server.start()
    url = f"{server.base_url}/api/v1/workspaces/test-ws"
    headers = {"Authorization": f"Bearer {server.api_key}"}
    run_id = requests.post(
        f"{url}/agent-runs", json={"systemPrompt": "s", "prompt": "p"}, headers=headers, timeout=5
    ).json()["runId"]
    server.wait_for_tool_call()
    response = requests.get(
        f"{url}/agent-runs/{run_id}/stream", headers=headers, stream=True, timeout=5
    )
    lines = response.iter_lines(decode_unicode=True)
    assert any("local_tool_call" in line for line in lines)
    server.stop()
    server.stop()
    with pytest.raises(
        (requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError)
    ):
        for _ in lines:
            pass
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get(f"{url}/models", headers=headers, timeout=1)
    with pytest.raises(RuntimeError):
        server.start()


def test_constructor_rejects_bad_options() -> None:
    with pytest.raises(ValueError):
        LocalMantyx(result_shape="weird")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LocalMantyx(keepalive=0)


def test_client_passes_connection_settings(monkeypatch: Any) -> None:
    captured: dict[str, Any] = {}

    class FakeClient:
        def __init__(self, **kwargs: Any) -> None:
            captured.update(kwargs)

    import mantyx_sync

    monkeypatch.setattr(mantyx_sync, "Client", FakeClient, raising=False)
    with LocalMantyx(api_key="mantyx_k", workspace="w") as server:
        client = server.client(timeout=3)
        assert isinstance(client, FakeClient)
        assert captured == {
            "api_key": "mantyx_k",
            "workspace": "w",
            "base_url": server.base_url,
            "timeout": 3,
        }
