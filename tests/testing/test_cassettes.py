"""Cassettes: record against the emulator over real HTTP, replay with every socket refused."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

import mantyx_sync
from mantyx_sync import Attachment, ToolOutput
from mantyx_sync.testing import (
    CassetteError,
    Faults,
    LocalMantyx,
    PlanUpdate,
    ToolCall,
    Turn,
    cassette,
)
from mantyx_sync.testing import ToolFiles as ToolFilesStep

pytest_plugins = ["pytester"]

OSLO = [ToolCall("get_weather", {"city": "Oslo"}), Turn("It is sunny.")]


class Weather:
    """A local tool that counts its calls; ``answer`` is what it says, after
    ``work`` seconds (a replay that ran ahead of a slow tool would show)."""

    def __init__(self, answer: str = "sunny", work: float = 0.0) -> None:
        self.calls: list[str] = []
        self.answer = answer
        self.work = work

    def tool(self) -> Callable[[str], str]:
        def get_weather(city: str) -> str:
            """The weather in a city.

            :param city: the city's name.
            """
            threading.Event().wait(self.work)
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
        assert _run(mantyx_server, Weather(), prompt="Bergen?")[0] == "Bergen is wet."  # recorded
        assert _run(mantyx_server, Weather())[0] == "It is sunny."  # replayed
    request.getfixturevalue("offline")
    with cassette(path, record_mode="none"):
        assert _run(None, Weather())[0] == "It is sunny."
        assert _run(None, Weather(), prompt="Bergen?")[0] == "Bergen is wet."


def _twice(
    server: LocalMantyx, path: Path, request: pytest.FixtureRequest, play: Callable[..., Any]
) -> tuple[Any, Any]:
    """``play(server)`` recorded, then ``play(None)`` replayed with every socket refused."""
    with cassette(path, record_mode="all"):
        recorded = play(server)
    request.getfixturevalue("offline")
    with cassette(path, record_mode="none"):
        return recorded, play(None)


def test_a_stream_as_a_context_manager_replays_offline_left_early_or_not(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    mantyx_server.set_model(
        [
            ToolCall("get_weather", {"city": "Oslo"}),
            Turn("It is sunny.", chunks=["It is", " sunny."]),
        ]
    )

    def play(server: LocalMantyx | None) -> tuple[list[str], list[str], list[str]]:
        weather = Weather()
        with _client(server) as client:
            agent = mantyx_sync.Agent(client, system_prompt="s", tools=[weather.tool()])
            with agent.stream("Weather in Oslo?") as run:
                pieces = [p.text for p in run.text_stream() if p.kind == "text"]
            with agent.stream("Weather in Oslo?") as run:  # left at its first event
                first = next(iter(run)).type
        return pieces, [first], weather.calls

    recorded, replayed = _twice(mantyx_server, tmp_path / "stream.json", request, play)
    assert replayed == recorded
    assert "".join(recorded[0]).strip() == "It is sunny." and recorded[2] == ["Oslo"]


def test_attaching_to_a_run_started_elsewhere_replays_offline(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    @mantyx_sync.local_tool
    def first() -> str:
        """Answered already by the process that started the run."""
        raise AssertionError("an answered call ran again")

    mantyx_server.set_model(
        [
            Turn(tool_calls=[ToolCall("first", {}), ToolCall("get_weather", {"city": "Oslo"})]),
            Turn(lambda ctx: " | ".join(f"{r['name']}={r['result']}" for r in ctx.tool_results)),
        ]
    )
    # Another process started the run and answered its first call (not recorded).
    api = f"{mantyx_server.base_url}/api/v1/workspaces/{mantyx_server.workspace}/agent-runs"
    auth = {"Authorization": f"Bearer {mantyx_server.api_key}"}
    spec = mantyx_sync.Agent(_client(mantyx_server), system_prompt="s").spec
    tools = [first.to_wire(), mantyx_sync.local_tool(Weather().tool()).to_wire()]
    body = {"prompt": "x", **spec.to_body(tools)}
    run_id = requests.post(api, json=body, headers=auth, timeout=5).json()["runId"]
    call = mantyx_server.wait_for_tool_call(timeout=5)
    answer = {"toolUseId": call["toolUseId"], "result": "1"}
    requests.post(f"{api}/{run_id}/tool-results", json=answer, headers=auth, timeout=5)

    def play(server: LocalMantyx | None) -> tuple[str, list[str], list[str]]:
        weather = Weather()
        with _client(server) as client:
            run = client.runs.attach(run_id, tools=[first, weather.tool()], settle=0.3)
            result = run.wait()
        return result.text, [e.type for e in result.events], weather.calls

    recorded, replayed = _twice(mantyx_server, tmp_path / "attach.json", request, play)
    assert replayed == recorded
    assert recorded[0] == "first=1 | get_weather=sunny in Oslo" and recorded[2] == ["Oslo"]


def test_plans_replay_offline(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    mantyx_server.set_model(
        [
            PlanUpdate([("Look", "in_progress"), ("Say", "pending")], brief="Weather"),
            ToolCall("get_weather", {"city": "Oslo"}),
            PlanUpdate([("Look", "done"), ("Say", "in_progress")], brief="Weather"),
            Turn("It is sunny."),
        ]
    )

    def play(server: LocalMantyx | None) -> list[Any]:
        weather = Weather()
        with _client(server) as client:
            agent = mantyx_sync.Agent(client, system_prompt="s", tools=[weather.tool()], plan=True)
            seen = []
            with agent.stream("Weather in Oslo?") as run:
                for event in run:
                    if event.type == "task_plan" and run.plan is not None:
                        seen.append([step.status for step in run.plan.steps])
            planned = agent.run_plan("Plan a trip", steps=["Pack", "Go"])
            with agent.session() as chat:
                brief = chat.run_plan("Plan a walk", brief="Walk").plan
        assert planned.plan is not None and brief is not None
        return [seen, weather.calls, [s.title for s in planned.plan.steps], brief.brief]

    recorded, replayed = _twice(mantyx_server, tmp_path / "plan.json", request, play)
    assert replayed == recorded
    assert recorded[:2] == [[["in_progress", "pending"], ["done", "in_progress"]], ["Oslo"]]


def test_inline_files_and_tool_files_replay_offline(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    pdf = bytes(range(256)) * 40  # over 4096 characters once in base64
    png = b"\x89PNG" + bytes(range(256)) * 20
    mantyx_server.set_model(
        [
            ToolFilesStep(
                "render", [{"filename": "r.png", "mimeType": "image/png", "sizeBytes": 3}]
            ),
            ToolCall("chart", {"city": "Oslo"}),
            Turn(lambda ctx: f"{ctx.prompt}: {ctx.tool_results[0]['result']}"),
        ]
    )
    charts: list[str] = []

    @mantyx_sync.local_tool
    def chart(city: str) -> ToolOutput:
        """Draw a chart."""
        charts.append(city)
        return ToolOutput(f"chart of {city}", files=[Attachment.from_bytes(png, filename="c.png")])

    def play(server: LocalMantyx | None) -> tuple[str, list[Any]]:
        with _client(server) as client:
            agent = mantyx_sync.Agent(client, system_prompt="s", tools=[chart])
            report = Attachment.from_bytes(pdf, filename="report.pdf")
            result = agent.run("Read it", attachments=[report])
        files = [
            e.payload for e in result.events if e.type in ("tool_files", "local_tool_result_in")
        ]
        return result.text, [getattr(f, "files", None) for f in files]

    recorded, replayed = _twice(mantyx_server, tmp_path / "files.json", request, play)
    assert replayed == recorded and charts == ["Oslo", "Oslo"]  # once each time
    assert "chart of Oslo" in recorded[0]
    stored = sorted(p.read_text(encoding="utf-8") for p in (tmp_path / "files.files").iterdir())
    assert stored == sorted([base64.b64encode(pdf).decode(), base64.b64encode(png).decode()])


def test_an_evaluation_replays_offline(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def model(ctx: Any) -> Turn:
        if ctx.turn == 0:
            return Turn(tool_calls=[ToolCall("get_weather", {"city": ctx.prompt})])
        return Turn(f"Weather: {ctx.tool_results[-1]['result']}")

    mantyx_server.set_model(model)
    cities = ("Oslo", "Lima", "Rome")
    dataset = mantyx_server.add_eval_dataset(
        "weather",
        [
            {"name": c, "input": {"prompt": c}, "scorers": [{"type": "contains", "value": c}]}
            for c in cities
        ],
    )

    def play(server: LocalMantyx | None) -> tuple[Any, ...]:
        weather = Weather(work=0.2)
        with _client(server) as client:
            agent = mantyx_sync.Agent(client, system_prompt="s", tools=[weather.tool()])
            with client.evals.start(dataset=dataset, agent=agent) as run:
                # How many calls had run when the server told of each result:
                types = [(e.type, len(weather.calls) if "result" in e.type else 0) for e in run]
                detail = run.wait()
        texts = sorted(r.final_text or "" for r in detail.results)
        return types, texts, detail.passed_cases, sorted(weather.calls)

    recorded, replayed = _twice(mantyx_server, tmp_path / "eval.json", request, play)
    assert replayed == recorded
    assert recorded[2:] == (3, sorted(cities))


def test_new_episodes_adds_a_second_run_with_the_same_prompt(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "twice.json"
    mantyx_server.set_model(lambda ctx: Turn(f"answer {len(mantyx_server.runs)}"))

    def play(server: LocalMantyx | None, times: int) -> list[tuple[str, int]]:
        seen = []
        with _client(server) as client:
            for _ in range(times):  # the same run, then the same listing, each time
                text = mantyx_sync.Agent(client, system_prompt="s").run("Hi").text
                seen.append((text, len(list(client.runs.list()))))
        return seen

    with cassette(path, record_mode="all"):
        assert play(mantyx_server, 1) == [("answer 1", 1)]
    with cassette(path, record_mode="new_episodes"):  # the first replayed, the second recorded
        assert play(mantyx_server, 2) == [("answer 1", 1), ("answer 2", 2)]
    interactions = json.loads(path.read_text())["interactions"]
    assert [i["request"]["method"] for i in interactions].count("POST") == 2
    request.getfixturevalue("offline")
    with cassette(path, record_mode="none"):
        assert play(None, 2) == [("answer 1", 1), ("answer 2", 2)]
    with pytest.raises(CassetteError, match="is not in the cassette"), cassette(path):
        play(None, 3)  # a third run is not there


def test_a_stream_cut_while_recording_replays_faithfully(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    mantyx_server.set_model(
        [
            Turn("Checking.", tool_calls=[ToolCall("get_weather", {"city": "Oslo"})]),
            Turn(lambda ctx: f"So: {ctx.tool_results[0]['result']}."),
        ]
    )
    # The connection is cut right after the tool call; the reconnect replays two frames.
    mantyx_server.inject(Faults(drop_after=3, replay_overlap=2))

    def play(server: LocalMantyx | None) -> tuple[Any, ...]:
        weather = Weather(work=0.6)
        with _client(server) as client:
            agent = mantyx_sync.Agent(client, system_prompt="s", tools=[weather.tool()])
            seen: list[tuple[str, int]] = []
            result = agent.run(
                "Weather in Oslo?", on_event=lambda e: seen.append((e.type, len(weather.calls)))
            )
        return result.text, seen, weather.calls

    recorded, replayed = _twice(mantyx_server, tmp_path / "cut.json", request, play)
    assert replayed == recorded
    assert recorded[0] == "So: sunny in Oslo." and recorded[2] == ["Oslo"]
    streams = [
        i
        for i in json.loads((tmp_path / "cut.json").read_text())["interactions"]
        if "/stream" in i["request"]["path"]
    ]
    assert len(streams) == 2  # the cut one and the resumed one


def test_a_request_that_failed_while_recording_fails_again_in_replay(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    mantyx_server.set_model(OSLO)
    # The tool result is taken, then the connection drops before the answer comes.
    mantyx_server.inject(Faults(tool_result_accept_then_drop=1))

    def play(server: LocalMantyx | None) -> tuple[str, list[str]]:
        weather = Weather()
        return _run(server, weather)[0], weather.calls

    recorded, replayed = _twice(mantyx_server, tmp_path / "retry.json", request, play)
    assert replayed == recorded == ("It is sunny.", ["Oslo"])
    posts = [
        i["response"]
        for i in json.loads((tmp_path / "retry.json").read_text())["interactions"]
        if i["request"]["path"].endswith("/tool-results")
    ]
    assert "status" not in posts[0]  # no answer: replayed as a broken connection
