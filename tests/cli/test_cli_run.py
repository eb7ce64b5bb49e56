"""``mantyx-sync run`` through the real console script, in pipes: output and exit codes."""

from __future__ import annotations

import base64
import json
import pathlib
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from cli_support import HERE, cli_env, console_script, run_cli

from mantyx_sync.cli._parser import SPEC_OPTIONS, build_parser
from mantyx_sync.spec import SpecKeywords
from mantyx_sync.testing import Fail, FailResult, LocalMantyx, ModelContext, ToolCall, Turn

ANSI = "\x1b["


def test_run_streams_the_answer_to_stdout_and_notes_to_stderr(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run", "hello there", "--tool", "cli_tools:add", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    # The answer alone on stdout: the default model's two turns.
    assert done.stdout == "Calling add.\nYou said: hello there\nadd → 2\n"
    lines = done.stderr.splitlines()
    # A line when the tool call starts, one when it is answered, then the footer.
    assert lines[0] == '  → add({"a": 1, "b": 1})'
    assert re.fullmatch(r"  ✓ add → 2  \d+\.\ds", lines[1])
    run_id = next(iter(mantyx_server.runs))
    assert (
        lines[2] == f"53 tokens (42 in, 11 out) · 2 turns · model platform:cm6abc123 · run {run_id}"
    )
    assert len(lines) == 3
    # Not a terminal: no colour, no spinner.
    assert ANSI not in done.stdout + done.stderr
    assert "thinking" not in done.stderr


def test_the_run_carries_the_spec_the_options_describe(mantyx_server: LocalMantyx) -> None:
    done = run_cli(
        "run",
        "hi",
        "--system-prompt",
        "Be terse.",
        "--model",
        "provider:cm6def456",
        "--reasoning",
        "high",
        server=mantyx_server,
    )
    assert done.returncode == 0, done.stderr
    (run,) = mantyx_server.runs.values()
    assert run.spec["systemPrompt"] == "Be terse."
    assert run.spec["modelId"] == "provider:cm6def456"
    assert run.spec["reasoningLevel"] == "high"
    # --reasoning shows the model's reasoning, dimmed notes on stderr.
    assert "Thinking about: hi" in done.stderr
    assert done.stdout == "You said: hi\n"


def test_a_failing_tool_is_shown_as_such(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run", "x", "--tool", "cli_tools:broken", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    assert '  → broken({"text": "example"})' in done.stderr
    assert "  ✗ broken → RuntimeError: the tool broke  " in done.stderr


def test_json_prints_one_event_per_line(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run", "hello", "--json", "--tool", "cli_tools:add", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    run_id = next(iter(mantyx_server.runs))
    assert {e["runId"] for e in events} == {run_id}
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    types = [e["type"] for e in events]
    assert types[-1] == "result"
    assert "local_tool_call" in types and "local_tool_result_in" in types
    assert events[-1]["data"]["text"] == "You said: hello\nadd → 2"
    assert done.stderr == ""


def test_quiet_prints_only_the_answer(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run", "hello", "--quiet", "--tool", "cli_tools:add", server=mantyx_server)
    assert done.returncode == 0
    assert done.stdout == "Calling add.\nYou said: hello\nadd → 2\n"
    assert done.stderr == ""


def test_the_prompt_can_come_on_stdin(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run", "-q", server=mantyx_server, stdin="from a pipe\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "You said: from a pipe\n"


def test_session_continues_a_conversation(mantyx_server: LocalMantyx) -> None:
    with mantyx_server.client() as client:
        session = client.sessions.create(system_prompt="You are terse.")
        session.run("first")
    done = run_cli("run", "second", "--session", session.id, "-q", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "You said: second\n"
    contents = [m["content"] for m in mantyx_server.sessions[session.id].messages]
    assert contents[:1] == ["first"] and "second" in contents


def test_session_takes_only_the_options_a_message_may_give(mantyx_server: LocalMantyx) -> None:
    with mantyx_server.client() as client:
        session = client.sessions.create(system_prompt="You are terse.")
    done = run_cli(
        "run", "again", "--session", session.id, "--reasoning", "high", "-q", server=mantyx_server
    )
    assert done.returncode == 0, done.stderr
    (message,) = [r for r in mantyx_server.requests if r.path.endswith("/messages")]
    assert message.json is not None and message.json["reasoningLevel"] == "high"
    done = run_cli("run", "x", "--session", session.id, "--agent-id", "a", server=mantyx_server)
    assert done.returncode == 2
    assert "drop --agent-id" in done.stderr


def test_the_agent_options_are_spec_keywords() -> None:
    # Each agent option's dest is the spec keyword it sets, and SPEC_OPTIONS names them all.
    assert set(SPEC_OPTIONS) <= set(SpecKeywords.__annotations__)
    parser = build_parser()
    for command in ("run", "chat"):
        dests = set(vars(parser.parse_args([command])))
        assert dests & set(SpecKeywords.__annotations__) == set(SPEC_OPTIONS), command
        for keyword, option in SPEC_OPTIONS.items():
            value = "low" if keyword == "reasoning_level" else "x"
            assert getattr(parser.parse_args([command, option, value]), keyword) == value


def test_python_dash_m_is_the_same_command(mantyx_server: LocalMantyx) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mantyx_sync", "run", "hi", "-q"],
        env=cli_env(mantyx_server),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "You said: hi\n"


# -- exit codes -------------------------------------------------------------


def test_a_failed_run_exits_1_with_one_line(mantyx_server: LocalMantyx) -> None:
    mantyx_server.queue_script([Fail("the model fell over", code="model_error")])
    done = run_cli("run", "x", server=mantyx_server)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1
    assert errors[0].startswith("mantyx-sync: error: run ")
    assert "(model_error): the model fell over" in errors[0]
    assert "Traceback" not in done.stderr


def test_a_non_success_result_exits_1(mantyx_server: LocalMantyx) -> None:
    mantyx_server.queue_script([FailResult("error_max_turns", "too many turns")])
    done = run_cli("run", "x", "--json", server=mantyx_server)
    assert done.returncode == 1
    assert json.loads(done.stdout.splitlines()[-1])["data"]["subtype"] == "error_max_turns"
    assert "too many turns" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "x", "--agent-id", "a", "--system-prompt", "b"], "not allowed with argument"),
        (["run", "x", "--reasoning", "extreme"], "invalid choice"),
        (["run", "x", "--tool", "nope"], "expected module:function"),
        (["run", "x", "--tool", "no_such_module:f"], "cannot import 'no_such_module'"),
        (["run", "x", "--tool", "cli_tools:missing"], "has no 'missing'"),
        (["run", "x", "--tool", "cli_tools:not_a_function"], "is not a function"),
        (["run", "x", "--session", "s", "--model", "m"], "--session continues"),
        (["run", "   "], "the prompt is empty"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2(mantyx_server: LocalMantyx, args: list[str], message: str) -> None:
    done = run_cli(*args, server=mantyx_server)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert done.stderr.count("\n") == 1  # one line, argparse's errors included
    assert "Traceback" not in done.stderr
    assert mantyx_server.runs == {}


@pytest.mark.parametrize("option", ["--model", "--system-prompt", "--agent-id"])
def test_a_spec_error_names_the_option_and_exits_2_before_anything_is_sent(
    mantyx_server: LocalMantyx, option: str
) -> None:
    done = run_cli("run", "x", option, "", server=mantyx_server)
    assert done.returncode == 2
    assert done.stderr == f"mantyx-sync: error: {option}: must be a non-empty string\n"
    assert mantyx_server.requests == []


def test_a_model_the_server_refuses_exits_2_with_its_candidates(
    mantyx_server: LocalMantyx,
) -> None:
    done = run_cli("run", "x", "--model", "no-such-model", server=mantyx_server)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "invalid_model" in done.stderr and "candidates: platform:cm6abc123" in done.stderr


def test_missing_configuration_exits_2_naming_the_variable(mantyx_server: LocalMantyx) -> None:
    env = cli_env(mantyx_server)
    del env["MANTYX_API_KEY"]
    done = run_cli("run", "x", env=env)
    assert done.returncode == 2
    assert "MANTYX_API_KEY" in done.stderr


def test_a_bad_key_exits_3_and_is_never_shown(mantyx_server: LocalMantyx) -> None:
    env = cli_env(mantyx_server, MANTYX_API_KEY="mantyx_wrong_secret_value")
    done = run_cli("run", "x", env=env)
    assert done.returncode == 3
    assert "HTTP 401" in done.stderr
    assert "wrong_secret" not in done.stderr + done.stdout


def test_permission_denied_exits_3_with_the_hint(mantyx_server: LocalMantyx) -> None:
    mantyx_server.fail_next(
        "POST",
        r"/agent-runs$",
        403,
        json={"error": "forbidden", "message": "no runs for you", "hint": "ask an admin"},
    )
    done = run_cli("run", "x", server=mantyx_server)
    assert done.returncode == 3
    assert "no runs for you" in done.stderr and "hint: ask an admin" in done.stderr


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_exits_4() -> None:
    env = cli_env(
        MANTYX_BASE_URL=f"http://127.0.0.1:{_closed_port()}",
        MANTYX_WORKSPACE="ws",
        MANTYX_API_KEY="mantyx_k",
    )
    done = run_cli("run", "x", env=env)
    assert done.returncode == 4
    assert done.stderr.startswith("mantyx-sync: error: ")
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_debug_adds_the_traceback(mantyx_server: LocalMantyx) -> None:
    mantyx_server.queue_script([Fail("kaput")])
    done = run_cli("--debug", "run", "x", server=mantyx_server)
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert "mantyx_sync.errors.RunError" in done.stderr
    after = run_cli("run", "x", "--debug", server=mantyx_server)
    assert "Traceback" not in after.stderr and after.returncode == 0


# -- Ctrl-C -----------------------------------------------------------------


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def _signal_mid_run(
    mantyx_server: LocalMantyx, release: threading.Event, signum: int
) -> tuple[int, str, str]:
    """``(exit status, run id, stderr)`` of ``mantyx run`` sent ``signum`` mid-run.

    The run's model calls a server tool, then waits (until ``release``) for its
    second turn; the signal goes once the CLI printed the tool's result.
    """

    def model(ctx: ModelContext) -> Turn:
        if ctx.turn == 0:
            return Turn("Looking it up.", tool_calls=[ToolCall("search", server_result="found")])
        release.wait(20)  # the second turn never comes while the test runs
        return Turn("too late")

    mantyx_server.set_model(model)
    process = subprocess.Popen(
        [console_script(), "run", "x", "--json"],
        env=cli_env(mantyx_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=HERE,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if json.loads(line)["type"] == "tool_result":
                break
        run_id = next(iter(mantyx_server.runs))
        assert mantyx_server.runs[run_id].status == "running"
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
    return process.returncode, run_id, stderr


def test_ctrl_c_cancels_the_run_on_the_server_and_exits_130(
    signalled_server: LocalMantyx, release: threading.Event
) -> None:
    status, run_id, stderr = _signal_mid_run(signalled_server, release, signal.SIGINT)
    assert status == 130
    assert f"interrupted: run {run_id} cancelled" in stderr
    assert "Traceback" not in stderr
    assert (
        signalled_server.wait_for_run(run_id, status="cancelled", timeout=5).status == "cancelled"
    )
    assert any(
        r.method == "POST" and r.path.endswith(f"/agent-runs/{run_id}/cancel")
        for r in signalled_server.requests
    )


def test_sigterm_also_cancels(signalled_server: LocalMantyx, release: threading.Event) -> None:
    status, run_id, _ = _signal_mid_run(signalled_server, release, signal.SIGTERM)
    assert status == 130
    assert (
        signalled_server.wait_for_run(run_id, status="cancelled", timeout=5).status == "cancelled"
    )


def test_attach_sends_the_file_with_the_prompt(
    mantyx_server: LocalMantyx, tmp_path: pathlib.Path
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("quarterly numbers: 42\n")
    done = run_cli("run", "read it", "--attach", str(note), "-q", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "You said: read it\nReceived 1 file: text/plain\n"
    (post,) = [r for r in mantyx_server.requests if r.method == "POST"]
    assert post.json is not None
    (attachment,) = post.json["messages"][-1]["attachments"]
    assert attachment["filename"] == "note.txt" and attachment["mimeType"] == "text/plain"
    assert base64.b64decode(attachment["data"]) == b"quarterly numbers: 42\n"


def test_attach_of_a_missing_file_exits_2_before_sending(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run", "x", "--attach", "no/such/file.pdf", server=mantyx_server)
    assert done.returncode == 2
    assert done.stderr == (
        "mantyx-sync: error: cannot read attachment 'no/such/file.pdf': No such file or directory\n"
    )
    assert mantyx_server.requests == []


def test_mcp_starts_a_stdio_server_whose_tools_the_model_calls(
    mantyx_server: LocalMantyx,
) -> None:
    peer = HERE.parent / "peers" / "mcp_py_server.py"
    command = f"{sys.executable} {peer} stdio"
    done = run_cli("run", "x", "--mcp", command, server=mantyx_server, timeout=60)
    assert done.returncode == 0, done.stderr
    assert '  → mcp_echo({"text": "example"})' in done.stderr
    assert "  ✓ mcp_echo → example  " in done.stderr
    assert "  ✗ mcp_fail → " in done.stderr  # isError: a failed call
    assert "mcp_echo → example" in done.stdout


def test_an_mcp_server_that_cannot_start_exits_4(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run", "x", "--mcp", "/no/such/mcp-server", server=mantyx_server)
    assert done.returncode == 4
    assert done.stderr.startswith("mantyx-sync: error: ")
    assert done.stderr.count("\n") == 1
    assert mantyx_server.runs == {}
