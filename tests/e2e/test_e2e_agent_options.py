"""Per-call spec keywords on Agent runs, agent.with_options(), and the client an
Agent() without one shares (items 6 and 7 of the 1.0 API)."""

from __future__ import annotations

import pytest

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, Turn


def _run_bodies(emulator: LocalMantyx) -> list[dict[str, object]]:
    return [
        r.json for r in emulator.requests if r.method == "POST" and r.path.endswith("/agent-runs")
    ]


def test_run_start_and_stream_take_spec_keywords_for_one_run(emulator: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True), system_prompt="s", metadata={"a": "1"}
    )
    agent.run("x", metadata={"team": "ops"}, reasoning_level="high")
    agent.start("x", plan="required").wait()
    with agent.stream("x", metadata={"b": "2"}) as run:
        list(run)
    agent.run("x")
    bodies = _run_bodies(emulator)
    assert bodies[0]["metadata"] == {"team": "ops"} and bodies[0]["reasoningLevel"] == "high"
    assert bodies[1]["plan"] == "required" and bodies[2]["metadata"] == {"b": "2"}
    assert bodies[3]["metadata"] == {"a": "1"}  # the agent's own spec is unchanged
    with pytest.raises(mantyx_sync.SpecError):
        agent.run("x", metadata={"bad key!": "x"})


def test_with_options_returns_a_new_agent_on_the_same_client(emulator: LocalMantyx) -> None:
    client = emulator.client(in_memory=True)
    agent = mantyx_sync.Agent(client, system_prompt="s", name="base")
    terse = agent.with_options(system_prompt="Be terse.", metadata={"v": "2"})
    assert isinstance(terse, mantyx_sync.Agent) and terse is not agent
    assert terse.client is client and terse.spec.name == "base"
    assert (agent.spec.system_prompt, terse.spec.system_prompt) == ("s", "Be terse.")
    terse.run("x")
    assert _run_bodies(emulator)[-1]["systemPrompt"] == "Be terse."
    with pytest.raises(mantyx_sync.SpecError):
        agent.with_options(reasoning_level="loud")
    with agent, terse:  # a given client is the caller's: leaving the blocks keeps it open
        pass
    assert client.models.list() is not None


@pytest.fixture
def environment(mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch) -> LocalMantyx:
    monkeypatch.setenv("MANTYX_API_KEY", mantyx_server.api_key)
    monkeypatch.setenv("MANTYX_WORKSPACE", mantyx_server.workspace)
    monkeypatch.setenv("MANTYX_BASE_URL", mantyx_server.base_url)
    return mantyx_server


def test_agents_without_a_client_share_one_closed_with_the_last(environment: LocalMantyx) -> None:
    environment.set_model([Turn("hi")])
    first = mantyx_sync.Agent(system_prompt="s")
    with mantyx_sync.Agent(system_prompt="t") as second:
        assert second.client is first.client  # one pool per process, not one per agent
        assert second.run("x").text == "hi"
    shared = first.client
    assert first.run("x").text == "hi"  # still open: first shares it
    closed: list[bool] = []
    original = shared._api.close
    shared._api.close = lambda: (closed.append(True), original())[-1]  # type: ignore[method-assign]
    copy = first.with_options(name="copy")
    first.close()
    assert closed == []  # the copy still shares it
    copy.close()
    assert closed == [True]
    with mantyx_sync.Agent(system_prompt="s") as later:  # the next one makes a fresh client
        assert later.client is not shared
