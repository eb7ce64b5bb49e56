"""``python -m mantyx_sync.serve`` stays small under load (issue 28, items 10, 12, 13).

Each test runs the runner in a subprocess on 127.0.0.1 and measures it from
outside: its memory (``/proc/<pid>/status``: ``VmHWM``, the peak resident set,
against ``VmRSS`` before), its threads, and what its sockets do. Nothing here
waits on time: a request answered on a fresh connection proves the server
accepted every connection opened before it (it accepts in order).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import peerkit
import pytest
import requests

from mantyx_sync.serve.__main__ import main
from mantyx_sync.serve._wsgi import ServedApp
from mantyx_sync.testing import LocalMantyx

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc"),
]

TOKEN = "runner-limits-token-5b1c"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MB = 1024 * 1024
AGENT_API_BODY = {"input": [{"role": "user", "content": "hi"}], "stream": False}


@contextlib.contextmanager
def runner(mantyx_server: LocalMantyx, tmp_path: Path, *args: str) -> Iterator[tuple[int, int]]:
    """``python -m mantyx_sync.serve <args>`` with an echo agent -> (port, pid)."""
    (tmp_path / "limits_agent.py").write_text(
        "import mantyx_sync\nagent = mantyx_sync.Agent(system_prompt='Echo.', name='limits')\n"
    )
    port = peerkit.free_port()
    env = {
        **os.environ,
        "MANTYX_API_KEY": mantyx_server.api_key,
        "MANTYX_WORKSPACE": mantyx_server.workspace,
        "MANTYX_BASE_URL": mantyx_server.base_url,
        "MANTYX_SERVE_TOKEN": TOKEN,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
    }
    command = [sys.executable, "-m", "mantyx_sync.serve", *args, "--agent", "limits_agent:agent"]
    proc = subprocess.Popen(
        [*command, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        peerkit.wait_port(port, proc)
        yield port, proc.pid
    finally:
        peerkit.stop(proc)


def _status(pid: int) -> dict[str, int]:
    """The numeric fields of ``/proc/<pid>/status`` (kB for the memory ones)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if value.split() and value.split()[0].isdigit():
            fields[name] = int(value.split()[0])
    return fields


GROUP = "[" * 50 + "]" * 50  # 50 values (lists: the costliest kind), 51 with a comma


def _nested(groups: int) -> str:
    return "[" + ",".join([GROUP] * groups) + "]"


def _bodies(protocol: str, cap: int) -> dict[str, bytes]:
    """Bodies of ``cap`` bytes: ``"lists"`` all lists (over the value limit), and
    ``"heavy"`` the costliest one served: as many values as allowed, a long prompt
    and a long string filling it up."""
    prompt = "p" * 150_000  # under the SDK's 200,000-character message limit
    if protocol == "a2a":
        message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": prompt}]}
        base: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
        base["params"] = {"message": message, "metadata": {"v": "VALUES", "f": "FILL"}}
    else:
        input_ = [{"role": "user", "content": prompt}]
        base = {"input": input_, "stream": False, "v": "VALUES", "f": "FILL"}
    heavy = json.dumps(base).replace('"VALUES"', _nested((cap // 16 - 100) // 51))
    heavy = heavy.replace('"FILL"', json.dumps("f" * (cap - len(heavy))))
    lists = json.dumps(base).replace(prompt, "hi").replace('"FILL"', '""')
    lists = lists.replace('"VALUES"', _nested((cap - len(lists)) // (len(GROUP) + 1)))
    return {"heavy": heavy.encode(), "lists": lists.encode()}


@pytest.mark.parametrize("protocol", ["a2a", "agent-api"])
def test_eight_bodies_of_the_largest_size_add_under_200_mb(
    mantyx_server: LocalMantyx, tmp_path: Path, protocol: str
) -> None:
    cap = ServedApp.MAX_BODY_BYTES
    path = "/" if protocol == "a2a" else "/process"
    bodies = _bodies(protocol, cap)
    assert all(len(body) <= cap for body in bodies.values())
    with runner(mantyx_server, tmp_path, protocol) as (port, pid):
        url = f"http://127.0.0.1:{port}{path}"
        first = requests.post(url, data=bodies["heavy"], headers=_json(), timeout=60)
        assert first.status_code == 200 and "You said: ppp" in first.text, first.text[:300]
        before = _status(pid)["VmRSS"]
        replies: list[requests.Response] = []

        def post(body: bytes) -> None:
            replies.append(requests.post(url, data=body, headers=_json(), timeout=90))

        for kind in ("lists", "heavy"):
            threads = [threading.Thread(target=post, args=(bodies[kind],)) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(100)
        peak = _status(pid)["VmHWM"]
    assert len(replies) == 16
    served = [reply for reply in replies if "You said: ppp" in reply.text]
    assert len(served) == 8, [reply.text[:200] for reply in replies]
    refused = [reply for reply in replies if "holds more than" in reply.text]
    assert len(refused) == 8
    assert (peak - before) * 1024 < 200 * MB, f"{(peak - before) / 1024:.0f} MB"


def _json() -> dict[str, str]:
    return {**AUTH, "Content-Type": "application/json"}


def _threads(pid: int) -> int:
    return _status(pid)["Threads"]


def test_stalled_connections_hold_no_thread_and_others_are_answered(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    with (
        runner(mantyx_server, tmp_path, "agent-api") as (port, pid),
        contextlib.ExitStack() as open_,
    ):
        url = f"http://127.0.0.1:{port}/process"
        assert requests.post(url, json=AGENT_API_BODY, headers=AUTH, timeout=30).ok
        idle_threads = _threads(pid)
        for _ in range(300):  # connect, then say nothing (the idle timeout is 30 s)
            sock = open_.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            assert sock  # held open until the end of the block
        for _ in range(10):  # a request line, then nothing: each holds a thread
            sock = open_.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            sock.sendall(b"POST /process HTTP/1.1\r\n")
        # Answered on a fresh connection: every stalled one was accepted before it.
        reply = requests.post(url, json=AGENT_API_BODY, headers=AUTH, timeout=10)
        assert reply.status_code == 200 and "You said: hi" in reply.text
        # The ten, plus a margin far below the 300 stalled (the one answered, its run).
        assert _threads(pid) <= idle_threads + 10 + 16


def test_an_idle_connection_is_closed(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    args = ("a2a", "--idle-timeout", "0.5", "--max-connections", "2")
    with runner(mantyx_server, tmp_path, *args) as (port, _):
        silent = socket.create_connection(("127.0.0.1", port), timeout=20)
        partial = socket.create_connection(("127.0.0.1", port), timeout=20)
        partial.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        with silent, partial:
            assert silent.recv(1024) == b""  # closed by the server (a timeout raises)
            assert partial.recv(1024) == b""
        card = f"http://127.0.0.1:{port}/.well-known/agent-card.json"
        assert requests.get(card, headers=AUTH, timeout=10).json()["name"] == "limits"


def test_a_wildcard_host_answers_its_addresses_to_callers_with_the_token(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    # Bound to every address, reached on loopback with the Host a LAN caller sends.
    with runner(mantyx_server, tmp_path, "agent-api", "--host", "0.0.0.0") as (port, _):
        url = f"http://127.0.0.1:{port}/process"
        for host in (f"192.0.2.7:{port}", "10.1.2.3", f"[2001:db8::7]:{port}"):
            lan = {**AUTH, "Host": host}
            reply = requests.post(url, json=AGENT_API_BODY, headers=lan, timeout=30)
            assert reply.status_code == 200 and "You said: hi" in reply.text, (host, reply.text)
            no_token = requests.post(url, json=AGENT_API_BODY, headers={"Host": host}, timeout=10)
            assert no_token.status_code == 401
        rebound = {**AUTH, "Host": f"evil.example:{port}"}  # a name: still refused
        assert (
            requests.post(url, json=AGENT_API_BODY, headers=rebound, timeout=10).status_code == 421
        )


def test_runner_takes_a_body_limit(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    with runner(mantyx_server, tmp_path, "agent-api", "--max-body-bytes", "2000") as (port, _):
        body = {**AGENT_API_BODY, "pad": "x" * 2000}
        url = f"http://127.0.0.1:{port}/process"
        reply = requests.post(url, json=body, headers=AUTH, timeout=10)
        assert reply.status_code == 413 and "larger than 2000 bytes" in reply.text


@pytest.mark.parametrize("option", ["--max-body-bytes", "--max-connections", "--idle-timeout"])
def test_runner_limits_must_be_positive(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["a2a", "--agent", "x:y", option, "0"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert option in err and "invalid positive" in err
