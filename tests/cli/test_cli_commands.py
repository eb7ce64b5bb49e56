"""``models``, ``run-info``, ``cancel`` and ``emulator`` through the console script."""

from __future__ import annotations

import argparse
import json
import re
import signal
import threading
from collections.abc import Iterator

import pytest
import requests
from cli_support import cli_env, run_cli, start_emulator_command

from mantyx_sync import Agent, AgentSpec, RunError
from mantyx_sync.cli._parser import build_parser
from mantyx_sync.testing import Fail, LocalMantyx, ModelContext, Turn


def test_models_lists_the_catalog_with_the_default_marked(mantyx_server: LocalMantyx) -> None:
    done = run_cli("models", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("* platform:cm6abc123  Anthropic Claude Sonnet 4.5")
    assert len(lines) == 4 and all(line.startswith("  ") for line in lines[1:])
    assert "* the workspace default" in done.stderr


def test_models_json(mantyx_server: LocalMantyx) -> None:
    done = run_cli("models", "--json", server=mantyx_server)
    rows = json.loads(done.stdout)
    assert [row["id"] for row in rows if row["default"]] == ["platform:cm6abc123"]
    assert {"id", "label", "provider", "contextWindowTokens"} <= set(rows[0])


def test_run_info_shows_state_usage_and_answer(mantyx_server: LocalMantyx) -> None:
    with mantyx_server.client() as client:
        result = client.runs.start(AgentSpec.build(system_prompt="s"), "hello").wait()
    done = run_cli("run-info", result.run_id, server=mantyx_server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [f"run      {result.run_id}", "status   succeeded"]
    tokens = result.tokens
    assert tokens is not None
    assert (
        f"tokens   {tokens.total_tokens} ({tokens.input_tokens} in, {tokens.output_tokens} out)"
        in done.stdout
    )
    assert "model    platform:cm6abc123" in done.stdout
    assert done.stdout.endswith("\nYou said: hello\n")
    as_json = json.loads(run_cli("run-info", result.run_id, "--json", server=mantyx_server).stdout)
    assert as_json["status"] == "succeeded"


def test_run_info_of_an_unknown_run_exits_2(mantyx_server: LocalMantyx) -> None:
    done = run_cli("run-info", "run_missing", server=mantyx_server)
    assert done.returncode == 2
    assert done.stderr == "mantyx-sync: error: HTTP 404 not_found: run run_missing not found\n"


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def test_cancel_cancels_a_running_run(mantyx_server: LocalMantyx, release: threading.Event) -> None:
    def model(ctx: ModelContext) -> Turn:
        release.wait(20)
        return Turn("too late")

    mantyx_server.set_model(model)
    with mantyx_server.client() as client:
        run = client.runs.start(AgentSpec.build(system_prompt="s"), "x")
        with run:
            done = run_cli("cancel", run.id, server=mantyx_server)
            assert done.returncode == 0, done.stderr
            assert done.stderr == f"cancelled run {run.id}\n"
            assert mantyx_server.wait_for_run(run.id, timeout=5).status == "cancelled"


def test_cancel_of_a_finished_run_says_it_had_ended_and_exits_5(
    mantyx_server: LocalMantyx,
) -> None:
    with mantyx_server.client() as client:
        result = client.runs.start(AgentSpec.build(system_prompt="s"), "x").wait()
    done = run_cli("cancel", result.run_id, server=mantyx_server)
    assert done.returncode == 5, done.stderr
    assert done.stderr == f"run {result.run_id} had already ended (succeeded): nothing to cancel\n"
    assert mantyx_server.runs[result.run_id].status == "succeeded"
    assert not [r for r in mantyx_server.requests if r.path.endswith("/cancel")]


def test_emulator_serves_until_ctrl_c() -> None:
    process, lines = start_emulator_command()
    try:
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", lines[0])
        assert match, lines
        assert "  export MANTYX_WORKSPACE=test-ws" in lines
        env = cli_env(
            MANTYX_BASE_URL=match[1], MANTYX_WORKSPACE="test-ws", MANTYX_API_KEY="mantyx_test_key"
        )
        # The commands it prints are enough to use it.
        done = run_cli("run", "via the emulator", "-q", env=env)
        assert done.stdout == "You said: via the emulator\n"
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
    assert process.returncode == 0
    with pytest.raises(requests.ConnectionError):
        requests.get(match[1], timeout=2)


def test_emulator_on_a_busy_port_exits_2(mantyx_server: LocalMantyx) -> None:
    done = run_cli("emulator", "--port", str(mantyx_server.port))
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"mantyx-sync: error: cannot listen on 127.0.0.1:{mantyx_server.port}"
    )


def test_runs_lists_recent_runs_newest_first(mantyx_server: LocalMantyx) -> None:
    empty = run_cli("runs", server=mantyx_server)
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, "", "no runs\n")
    with mantyx_server.client() as client:
        agent = Agent(client, system_prompt="s")
        first = agent.run("first prompt")
        mantyx_server.queue_script([Fail("nope")])
        with pytest.raises(RunError) as failed:
            agent.run("second prompt")
    done = run_cli("runs", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [failed.value.run_id, first.run_id]
    assert "first prompt" in lines[1] and "second prompt" in lines[0]
    only_failed = run_cli("runs", "--status", "failed", "--json", server=mantyx_server)
    assert [json.loads(line)["id"] for line in only_failed.stdout.splitlines()] == [
        failed.value.run_id
    ]
    assert run_cli("runs", "--limit", "1", server=mantyx_server).stdout.count("\n") == 1
    bad = run_cli("runs", "--limit", "0", server=mantyx_server)
    assert bad.returncode == 2 and "must be at least 1" in bad.stderr


def test_sessions_lists_sessions(mantyx_server: LocalMantyx) -> None:
    with mantyx_server.client() as client:
        kept = client.sessions.create(system_prompt="s")
        kept.run("hello")
        ended = client.sessions.create(system_prompt="s")
        ended.end()
    done = run_cli("sessions", server=mantyx_server)
    assert done.returncode == 0, done.stderr
    listed = [line.split()[:2] for line in done.stdout.splitlines()]
    assert sorted(listed) == sorted([[kept.id, "active"], [ended.id, "ended"]])
    active = run_cli("sessions", "--status", "active", "--json", server=mantyx_server)
    assert [json.loads(line)["sessionId"] for line in active.stdout.splitlines()] == [kept.id]
    none = run_cli("sessions", "--status", "ended", "--limit", "1", server=mantyx_server)
    assert none.stdout.split()[:2] == [ended.id, "ended"]


def test_an_unknown_runs_status_is_a_usage_error(mantyx_server: LocalMantyx) -> None:
    done = run_cli("runs", "--status", "bogus", server=mantyx_server)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("mantyx-sync runs: error: argument --status: invalid choice")
    assert "'failed'" in done.stderr and done.stderr.count("\n") == 1
    assert mantyx_server.requests == []  # refused before anything is sent


def _options(parser: argparse.ArgumentParser, prog: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{prog} {name}")
        else:
            yield f"{prog} {'/'.join(action.option_strings) or action.dest}", action


def test_every_option_and_argument_has_help() -> None:
    found = dict(_options(build_parser(), "mantyx-sync"))
    assert "mantyx-sync emulator --host" in found and "mantyx-sync cancel run_id" in found
    bare = sorted(name for name, action in found.items() if not (action.help or "").strip())
    assert bare == []
    # ... and --help shows it.
    done = run_cli("emulator", "--help")
    assert "the address to listen on" in done.stdout and "the workspace slug" in done.stdout
