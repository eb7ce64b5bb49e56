"""``python -m mantyx_sync.serve``: help text, bad targets, a real trial serve, and
what it does without authentication (issue 20, item 2)."""

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
    kwargs.setdefault("env", _no_token_env())
    return subprocess.run(
        [sys.executable, "-m", "mantyx_sync.serve", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def _no_token_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MANTYX_SERVE_TOKEN"}
    return {**env, **extra}


def test_help_says_not_for_production() -> None:
    done = _cli("--help")
    assert done.returncode == 0
    assert "NOT FOR PRODUCTION" in done.stdout and "127.0.0.1" in done.stdout


def test_bad_agent_target_exits_2_with_one_error_line() -> None:
    for target, says in (
        ("no_such_module_xyz:agent", "cannot import 'no_such_module_xyz'"),
        ("json", "module:attr"),
        ("json:no_such_attr", "module 'json' has no 'no_such_attr'"),
        ("json:JSONDecodeError.__name__", "a str, not a mantyx_sync.Agent"),
    ):
        done = _cli("a2a", "--agent", target)
        assert done.returncode == 2, (target, done.stderr)
        errors = [line for line in done.stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and says in errors[0], (target, done.stderr)
        assert errors[0].startswith("python -m mantyx_sync.serve: error: --agent ")
        assert "Traceback" not in done.stderr


def _serve_env(mantyx_server: LocalMantyx, agent_dir: Path) -> dict[str, str]:
    """The environment of ``python -m mantyx_sync.serve``: the emulator, agents importable."""
    return _no_token_env(
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
        stderr=subprocess.PIPE,
        text=True,
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
    assert proc.stderr is not None
    assert "WARNING: no authentication" in proc.stderr.read()


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


def test_a_non_loopback_host_without_authentication_is_refused() -> None:
    for host in ("0.0.0.0", "::", "192.0.2.7", "example.com"):
        done = _cli("a2a", "--agent", "json:loads", "--host", host)
        assert done.returncode == 2, (host, done.stderr)
        assert "--token" in done.stderr and "--insecure" in done.stderr
        assert "MANTYX_SERVE_TOKEN" in done.stderr


def test_insecure_lets_a_non_loopback_host_start_with_a_warning() -> None:
    # The agent cannot be imported: the run gets past the refusal, then stops
    # before it binds anything.
    done = _cli("a2a", "--agent", "no_such_module_xyz:agent", "--host", "0.0.0.0", "--insecure")
    assert done.returncode != 0 and "cannot import 'no_such_module_xyz'" in done.stderr
    assert "WARNING: no authentication" in done.stderr


def test_a_token_is_required_from_callers_and_never_shown(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    (tmp_path / "token_agent.py").write_text(
        "import mantyx_sync\nagent = mantyx_sync.Agent(system_prompt='Echo.')\n"
    )
    token = "serve-token-9f8e7d6c"
    port = peerkit.free_port()
    env = {**_serve_env(mantyx_server, tmp_path), "MANTYX_SERVE_TOKEN": token}
    args = ["agent-api", "--agent", "token_agent:agent", "--port", str(port)]
    args += ["--allowed-host", "agents.example.com"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mantyx_sync.serve", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        peerkit.wait_port(port, proc)
        url = f"http://127.0.0.1:{port}/process"
        body = {"input": [{"role": "user", "content": "hello"}], "stream": False}
        assert requests.post(url, json=body, timeout=30).status_code == 401
        good = {"Authorization": f"Bearer {token}"}
        final = requests.post(url, json=body, headers=good, timeout=30).json()
        assert final["status"] == "completed"
        named = {**good, "Host": "agents.example.com"}
        assert requests.post(url, json=body, headers=named, timeout=30).status_code == 200
        other = {**good, "Host": "evil.example"}
        assert requests.post(url, json=body, headers=other, timeout=30).status_code == 421
    finally:
        peerkit.stop(proc)
    out, err = proc.communicate(timeout=10)
    assert token not in out + err, err
    assert "WARNING: no authentication" not in err


def test_token_on_the_command_line(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    (tmp_path / "flag_agent.py").write_text(
        "import mantyx_sync\nagent = mantyx_sync.Agent(system_prompt='Echo.')\n"
    )
    port = peerkit.free_port()
    args = ["a2a", "--agent", "flag_agent:agent", "--port", str(port), "--token", "flag-tok-123"]
    args += ["--public-url", "https://agents.example.com/a2a"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mantyx_sync.serve", *args],
        env=_serve_env(mantyx_server, tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        peerkit.wait_port(port, proc)
        base = f"http://127.0.0.1:{port}"
        # The card is readable without the token, and says a bearer token is needed.
        card = requests.get(f"{base}/.well-known/agent-card.json", timeout=10).json()
        assert card["securitySchemes"] == {"bearer": {"type": "http", "scheme": "bearer"}}
        assert card["url"] == "https://agents.example.com/a2a/"
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
        assert requests.post(f"{base}/", json=body, timeout=10).status_code == 401
        good = {"Authorization": "Bearer flag-tok-123"}
        answer = requests.post(f"{base}/", json=body, headers=good, timeout=10).json()
        assert answer["error"]["code"] == -32001
        # --public-url's host is one the runner answers to.
        named = {**good, "Host": "agents.example.com"}
        assert requests.post(f"{base}/", json=body, headers=named, timeout=10).status_code == 200
    finally:
        peerkit.stop(proc)
