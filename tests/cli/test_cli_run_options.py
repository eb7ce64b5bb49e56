"""More of ``mantyx-sync run`` through the console script: the answer as it arrives,
``--agent-id``, ``--mcp-url``, the spinner while a tool runs, and the commands the
guide's CLI page shows."""

from __future__ import annotations

import os
import re
import select
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import HERE, PtyProcess, cli_env, console_script, run_cli, start_emulator_command

from mantyx_sync.cli._parser import build_parser
from mantyx_sync.testing import Emit, Fail, LocalMantyx, ModelContext, Step, ToolCall, Turn

sys.path.insert(0, str(HERE.parent / "peers"))

import peerkit

CLI_PAGE = HERE.parents[1] / "docs" / "guide" / "cli.rst"


class _Reader:
    """Reads a child's stdout pipe as bytes arrive (no buffering in between)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self._fd = process.stdout.fileno()
        self.text = ""

    def until(self, needle: str, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{needle!r} never came; got {self.text!r}"
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if ready:
                chunk = os.read(self._fd, 4096)
                assert chunk, f"stdout closed before {needle!r}; got {self.text!r}"
                self.text += chunk.decode()


def test_the_answer_is_written_as_it_arrives(mantyx_server: LocalMantyx) -> None:
    chunks = ["The first part,", " then the second,", " and the end."]
    gate = threading.Semaphore(0)
    sent: list[str] = []

    def model(ctx: ModelContext) -> Step:
        # One delta each time the test releases one, then the whole answer.
        if len(sent) < len(chunks):
            if not gate.acquire(timeout=20):
                return Fail("the test never released this delta")
            sent.append(chunks[len(sent)])
            return Emit("assistant_delta", {"text": sent[-1]})
        return Turn("".join(chunks), chunks=())

    mantyx_server.set_model(model)
    process = subprocess.Popen(
        [console_script(), "run", "tell me"],
        env=cli_env(mantyx_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=HERE,
        bufsize=0,
    )
    try:
        out = _Reader(process)
        shown = ""
        for chunk in chunks[:-1]:
            gate.release()
            shown += chunk
            out.until(shown)
            # On the terminal while the run is still going.
            (run,) = mantyx_server.runs.values()
            assert run.status == "running"
        gate.release()
        rest, err = process.communicate(timeout=20)
    finally:
        gate.release(10)
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
    assert process.returncode == 0, err
    assert out.text + rest.decode() == "".join(chunks) + "\n"
    assert err.decode().splitlines()[-1].endswith(f"run {run.id}")


def test_agent_id_runs_a_persisted_agent(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run", "hi", "--agent-id", "agent_support", "-q", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    (run,) = mantyx_server.runs.values()
    assert run.spec["agentId"] == "agent_support"
    assert "systemPrompt" not in run.spec


@pytest.fixture(scope="module")
def http_mcp_url() -> Iterator[str]:
    """The official Python MCP server over Streamable HTTP, in a subprocess."""
    port = peerkit.free_port()
    script = str(peerkit.PEERS / "mcp_py_server.py")
    with peerkit.http_peer([script, "http-json", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def test_mcp_url_uses_a_streamable_http_server(
    mantyx_server: LocalMantyx, http_mcp_url: str
) -> None:
    done = run_cli("run", "x", "--mcp-url", http_mcp_url, server=mantyx_server, timeout=60)
    assert done.returncode == 0, done.stderr
    assert '  → mcp_echo({"text": "example"})' in done.stderr
    assert "  ✓ mcp_echo → example  " in done.stderr
    assert "mcp_echo → example" in done.stdout


def test_an_unreachable_mcp_url_exits_4(mantyx_server: LocalMantyx) -> None:
    url = f"http://127.0.0.1:{peerkit.free_port()}/mcp"
    done = run_cli("run", "x", "--mcp-url", url, server=mantyx_server, timeout=60)
    assert done.returncode == 4
    assert done.stderr.startswith("mantyx-sync: error: ") and done.stderr.count("\n") == 1
    assert mantyx_server.runs == {}


def test_a_spinner_names_the_tool_while_it_runs(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    mantyx_server.set_model(
        [Turn(tool_calls=[ToolCall("wait_for", {"path": str(fifo)})]), Turn("Finished.")]
    )
    env = cli_env(
        MANTYX_BASE_URL=mantyx_server.base_url,
        MANTYX_WORKSPACE=mantyx_server.workspace,
        MANTYX_API_KEY=mantyx_server.api_key,
    )
    term = PtyProcess("run", "go", "--tool", "cli_tools:wait_for", env=env)
    opener = threading.Thread(target=fifo.write_text, args=("go\n",), daemon=True)
    try:
        # The tool is blocked on the pipe: the spinner says which tool runs.
        term.expect("running wait_for…")
        opener.start()
        term.expect("✓ wait_for → go")
        term.expect("Finished.")
        assert term.wait() == 0
    finally:
        term.close()
        opener.join(timeout=5)
        if opener.is_alive():  # pragma: no cover - only when the tool never opened the pipe
            with open(fifo, encoding="utf-8"):
                pass


def test_emulator_without_werkzeug_says_what_to_install(tmp_path: Path) -> None:
    blocked = tmp_path / "werkzeug"
    blocked.mkdir()
    (blocked / "__init__.py").write_text("raise ImportError('werkzeug is not installed')\n")
    env = cli_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    done = run_cli("emulator", "--port", "0", env=env)
    assert done.returncode == 2
    assert done.stderr == (
        "mantyx-sync: error: the emulator needs werkzeug: pip install 'mantyx-sync[cli]'\n"
    )


def _guide_commands() -> list[list[str]]:
    """Every ``mantyx-sync ...`` command in the CLI page's code blocks, as argv."""
    commands = []
    for line in CLI_PAGE.read_text(encoding="utf-8").splitlines():
        if not re.match(r"\s{4}.*\bmantyx-sync ", line) or "pip install" in line:
            continue
        words = shlex.split(line, comments=True)
        for index, word in enumerate(words):
            if word == "mantyx-sync":
                argv = []
                for arg in words[index + 1 :]:
                    if arg in ("|", ";", ">", "&&", "||"):
                        break
                    argv.append(arg)
                commands.append(argv)
    return commands


def test_every_command_in_the_guide_is_accepted() -> None:
    commands = _guide_commands()
    assert len(commands) >= 12, commands
    parser = build_parser()
    for argv in commands:
        try:
            parser.parse_args(argv)
        except SystemExit:  # pragma: no cover - the failure message says which
            pytest.fail(f"the guide's `mantyx-sync {shlex.join(argv)}` is refused")


def test_the_guide_quickstart_against_the_emulator_is_true() -> None:
    text = CLI_PAGE.read_text(encoding="utf-8")
    block = text[text.index("mantyx-sync emulator --port 8765") :].split("\n\n", 1)[0]
    documented = re.findall(r"^\s*export (MANTYX_\w+)=(\S+)$", block, re.MULTILINE)
    assert [name for name, _ in documented] == [
        "MANTYX_BASE_URL",
        "MANTYX_WORKSPACE",
        "MANTYX_API_KEY",
    ]
    prompt, answer = re.findall(r'mantyx-sync run "([^"]+)" .*answers "([^"]+)"', block)[0]
    # --port 0 instead of 8765: the machine may use that port for something else.
    process, printed = start_emulator_command()
    try:
        exports = dict(
            re.findall(r"^\s*export (MANTYX_\w+)=(\S+)$", "\n".join(printed), re.MULTILINE)
        )
        port = exports["MANTYX_BASE_URL"].rsplit(":", 1)[1]
        assert exports == {name: value.replace(":8765", f":{port}") for name, value in documented}
        done = run_cli("run", prompt, env=cli_env(**exports))
        assert (done.returncode, done.stdout) == (0, f"{answer}\n"), done.stderr
    finally:
        process.terminate()
        process.communicate(timeout=10)


def test_a_server_failure_exits_4_with_its_hint(mantyx_server: LocalMantyx) -> None:
    # Starting a run is retried on 503 (the server cannot have acted); every attempt fails.
    mantyx_server.fail_next(
        "POST",
        r"/agent-runs$",
        503,
        times=50,
        json={"error": "unavailable", "message": "try later", "hint": "see status.mantyx.io"},
        headers={"Retry-After": "0"},
    )
    done = run_cli("run", "x", server=mantyx_server)
    assert done.returncode == 4
    assert done.stderr == (
        "mantyx-sync: error: HTTP 503 unavailable: try later (hint: see status.mantyx.io)\n"
    )
    assert mantyx_server.runs == {}


def test_chat_reads_a_pipe_and_writes_plain_lines(mantyx_server: LocalMantyx) -> None:
    done = run_cli("chat", server=mantyx_server, stdin="hello\n/history\n/end\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "you> You said: hello\nyou> user: hello\nassistant: You said: hello\nyou> "
    )
    (session_id,) = mantyx_server.sessions
    assert done.stderr.splitlines()[-1] == f"session {session_id} ended"
    assert "\x1b[" not in done.stdout + done.stderr
    assert mantyx_server.sessions[session_id].status == "ended"
