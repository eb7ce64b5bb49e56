"""Cassettes: record against the emulator over real HTTP, replay with every socket refused."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync.testing import CassetteError, LocalMantyx, ToolCall, Turn, cassette

pytest_plugins = ["pytester"]

OSLO = [ToolCall("get_weather", {"city": "Oslo"}), Turn("It is sunny.")]


class Weather:
    """A local tool that counts its calls; ``answer`` is what it says."""

    def __init__(self, answer: str = "sunny") -> None:
        self.calls: list[str] = []
        self.answer = answer

    def tool(self) -> Callable[[str], str]:
        def get_weather(city: str) -> str:
            """The weather in a city.

            :param city: the city's name.
            """
            self.calls.append(city)
            return f"{self.answer} in {city}"

        return get_weather


def _client(server: LocalMantyx | None) -> mantyx_sync.Client:
    """A client built the ordinary way: against the server, or against nothing."""
    if server is None:
        return mantyx_sync.Client(
            api_key="mantyx_ci_dummy", workspace="ci", base_url="http://127.0.0.1:9"
        )
    return mantyx_sync.Client(
        api_key=server.api_key, workspace=server.workspace, base_url=server.base_url
    )


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every socket connection refused; the attempts are listed."""
    attempts: list[object] = []

    def refuse(*args: Any, **kwargs: Any) -> None:
        attempts.append(args)
        raise ConnectionRefusedError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield attempts


def _run(
    server: LocalMantyx | None, weather: Weather, prompt: str = "Weather in Oslo?"
) -> tuple[str, list[str]]:
    with _client(server) as client:
        agent = mantyx_sync.Agent(client, system_prompt="Be brief.", tools=[weather.tool()])
        with agent.start(prompt) as run:
            types = [event.type for event in run]
            result = run.result
        assert result is not None
        return result.text, types


def _record(server: LocalMantyx, path: Path, model: Any = OSLO) -> tuple[str, list[str]]:
    server.set_model(model)
    with cassette(path, record_mode="all"):
        return _run(server, Weather())


def test_a_run_with_a_local_tool_replays_offline(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "weather.json"
    recorded = _record(mantyx_server, path)
    assert recorded[0] == "It is sunny."
    request.getfixturevalue("offline")
    weather = Weather()
    with cassette(path, record_mode="none"):
        replayed = _run(None, weather)
    assert replayed == recorded
    assert weather.calls == ["Oslo"]  # the tool ran, once


def test_agent_run_and_a_session_replay_offline(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "chat.json"
    mantyx_server.set_model(lambda ctx: Turn(f"{len(ctx.messages)} messages"))

    def chat(server: LocalMantyx | None) -> list[str]:
        with _client(server) as client:
            agent = mantyx_sync.Agent(client, system_prompt="s")
            texts = [agent.run("alone").text]
            with agent.session() as session:
                texts += [session.run("one").text, session.run("two").text]
            return texts

    with cassette(path):  # once: no file yet, so it records
        recorded = chat(mantyx_server)
    request.getfixturevalue("offline")
    with cassette(path):  # once: the file is there, so it replays
        assert chat(None) == recorded == ["1 messages", "1 messages", "3 messages"]


def test_mode_none_without_a_recording_says_how_to_record(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(CassetteError, match=r"--mantyx-record-mode=once"):
        cassette(missing, record_mode="none").__enter__()


def test_a_changed_request_names_the_field_and_both_values(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "weather.json"
    _record(mantyx_server, path)
    request.getfixturevalue("offline")
    with pytest.raises(CassetteError) as raised, cassette(path, record_mode="none"):
        _run(None, Weather(), prompt="Weather in Bergen?")
    message = str(raised.value)
    assert 'prompt was "Weather in Oslo?", now "Weather in Bergen?"' in message
    assert "POST /api/v1/workspaces/-/agent-runs" in message


def test_a_changed_tool_result_names_the_call_the_tool_and_both_values(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "weather.json"
    _record(mantyx_server, path)
    request.getfixturevalue("offline")
    with pytest.raises(CassetteError) as raised, cassette(path, record_mode="none"):
        _run(None, Weather("raining"))
    message = str(raised.value)
    assert raised.value.tool_use_id is not None
    assert f"toolUseId {raised.value.tool_use_id}" in message
    assert "tool 'get_weather'" in message
    assert 'result was "sunny in Oslo", now "raining in Oslo"' in message
    # ... unless results may differ.
    with cassette(path, record_mode="none", match_tool_results=False):
        assert _run(None, Weather("raining"))[0] == "It is sunny."


def test_the_cassette_never_holds_the_key_or_a_header(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    path = tmp_path / "weather.json"
    mantyx_server.set_model(OSLO)
    with cassette(path, record_mode="all", redact=lambda text: text.replace("Oslo", "<city>")):
        _run(mantyx_server, Weather())
    text = path.read_text(encoding="utf-8")
    assert mantyx_server.api_key not in text
    for needle in ("Bearer", "Authorization", "User-Agent", "mantyx_test", "Oslo"):
        assert needle not in text
    assert "<city>" in text
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_a_large_inline_string_is_stored_once_by_hash(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "big.json"
    prompt = "x" * 10000
    mantyx_server.set_model([Turn("ok")])
    with cassette(path, record_mode="all"):
        assert _run(mantyx_server, Weather(), prompt=prompt)[0] == "ok"
    assert prompt not in path.read_text(encoding="utf-8")
    stored = list((tmp_path / "big.files").iterdir())
    assert [p.read_text(encoding="utf-8") for p in stored] == [prompt]
    request.getfixturevalue("offline")
    with cassette(path, record_mode="none"):
        assert _run(None, Weather(), prompt=prompt)[0] == "ok"


MARKED = """
import mantyx_sync, pytest
from mantyx_sync.testing import LocalMantyx, Turn

@pytest.mark.mantyx_cassette("hello")
def test_hello(mantyx_cassette):
    if mantyx_cassette.replaying:
        client = mantyx_sync.Client(api_key="mantyx_ci", workspace="ci", base_url="http://127.0.0.1:9")
        assert mantyx_sync.Agent(client, system_prompt="s").run("hi").text == "hello back"
        return
    server = LocalMantyx(model=[Turn("hello back")])
    server.start()
    try:
        client = server.client()
        assert mantyx_sync.Agent(client, system_prompt="s").run("hi").text == "hello back"
    finally:
        server.stop()
"""


def test_the_pytest_marker_records_then_replays(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_marked=MARKED)
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert (pytester.path / "cassettes" / "hello.json").is_file()
    pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--mantyx-record-mode=none"
    ).assert_outcomes(passed=1)
    (pytester.path / "cassettes" / "hello.json").unlink()
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--mantyx-record-mode=none")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*--mantyx-record-mode=once*"])


def test_new_episodes_replays_what_is_there_and_records_the_rest(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "two.json"
    _record(mantyx_server, path)
    mantyx_server.set_model(lambda ctx: Turn("Bergen is wet."))
    with cassette(path, record_mode="new_episodes"):
        assert _run(mantyx_server, Weather())[0] == "It is sunny."  # replayed
        assert _run(mantyx_server, Weather(), prompt="Bergen?")[0] == "Bergen is wet."  # recorded
    request.getfixturevalue("offline")
    with cassette(path, record_mode="none"):
        assert _run(None, Weather())[0] == "It is sunny."
        assert _run(None, Weather(), prompt="Bergen?")[0] == "Bergen is wet."
