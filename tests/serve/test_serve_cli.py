"""``python -m mantyx_sync.serve``: help text, bad targets, and a real trial serve."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import peerkit
import pytest
import requests

from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)


def _cli(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mantyx_sync.serve", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def test_help_says_not_for_production() -> None:
    done = _cli("--help")
    assert done.returncode == 0
    assert "NOT FOR PRODUCTION" in done.stdout and "127.0.0.1" in done.stdout


def test_bad_agent_target_exits_with_a_message() -> None:
    done = _cli("a2a", "--agent", "no_such_module_xyz:agent")
    assert done.returncode != 0 and "cannot import 'no_such_module_xyz'" in done.stderr
    done = _cli("a2a", "--agent", "json")
    assert done.returncode != 0 and "module:attr" in done.stderr


def _serve_env(mantyx_server: LocalMantyx, agent_dir: Path) -> dict[str, str]:
    """The environment of ``python -m mantyx_sync.serve``: the emulator, agents importable."""
    return dict(
        os.environ,
        MANTYX_API_KEY=mantyx_server.api_key,
        MANTYX_WORKSPACE=mantyx_server.workspace,
        MANTYX_BASE_URL=mantyx_server.base_url,
        PYTHONPATH=str(agent_dir),
    )


def test_serves_an_agent_on_loopback(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    (tmp_path / "trial_agent.py").write_text(
        "import mantyx_sync\nagent = mantyx_sync.Agent(system_prompt='Echo.', name='trial')\n"
    )
    port = peerkit.free_port()
    env = _serve_env(mantyx_server, tmp_path)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mantyx_sync.serve",
            "a2a",
            "--agent",
            "trial_agent:agent",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        peerkit.wait_port(port, proc)
        base = f"http://127.0.0.1:{port}"
        card = requests.get(f"{base}/.well-known/agent-card.json", timeout=10).json()
        assert card["name"] == "trial" and card["url"] == f"{base}/"
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {
                "message": {
                    "kind": "message",
                    "messageId": "m",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}],
                }
            },
        }
        task = requests.post(f"{base}/", json=body, timeout=30).json()["result"]
        assert task["kind"] == "task" and task["status"]["state"] == "completed"
        assert task["artifacts"][0]["parts"][0]["text"] == "You said: hi"
    finally:
        peerkit.stop(proc)


def test_serves_agent_api_on_loopback(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    (tmp_path / "trial_agent2.py").write_text(
        "import mantyx_sync\n\ndef make():\n    return mantyx_sync.Agent(system_prompt='Echo.')\n"
    )
    port = peerkit.free_port()
    env = _serve_env(mantyx_server, tmp_path)
    args = ["agent-api", "--agent", "trial_agent2:make", "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mantyx_sync.serve", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        peerkit.wait_port(port, proc)
        body = {"input": [{"role": "user", "content": "hello"}], "stream": False}
        final = requests.post(f"http://127.0.0.1:{port}/process", json=body, timeout=30).json()
        assert final["status"] == "completed"
        assert final["output"][-1]["content"][0]["text"] == "You said: hello"
    finally:
        peerkit.stop(proc)
