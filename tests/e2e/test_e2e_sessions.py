"""Sessions end to end: history, per-message overrides, ending, resuming."""

from __future__ import annotations

import pytest

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

SYSTEM = "You are a test agent."


def test_session_keeps_history_and_ends_on_exit(emulator: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(
        emulator.client(in_memory=True), system_prompt=SYSTEM, metadata={"app": "t"}
    )
    with agent.session() as chat:
        first = chat.run("My name is Ada.")
        second = chat.run("What is my name?")
        assert first.session_id == chat.id == second.session_id
        history = chat.history()
        assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
        assert history[0] == mantyx_sync.Message("user", "My name is Ada.")
        assert chat.info().status == "active"
    assert emulator.sessions[chat.id].status == "ended"
    assert any(r.method == "DELETE" and r.path.endswith(chat.id) for r in emulator.requests)
    created = next(
        r for r in emulator.requests if r.method == "POST" and r.path.endswith("/agent-sessions")
    )
    assert created.json["systemPrompt"] == SYSTEM and created.json["metadata"] == {"app": "t"}
    assert "prompt" not in created.json


def test_per_message_overrides_go_in_the_message_body(emulator: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
    with agent.session() as chat:
        chat.run(
            "x",
            reasoning_level="high",
            loop_detection=False,
            tool_budgets={"recall": 2},
            metadata={"turn": "1"},
        )
        chat.run("y")
    messages = [r.json for r in emulator.requests if r.path.endswith("/messages")]
    assert messages[0]["reasoningLevel"] == "high"
    assert messages[0]["loopDetection"] is False
    assert messages[0]["toolBudgets"] == {"recall": {"maxCalls": 2}}
    assert messages[0]["metadata"] == {"turn": "1"}
    assert set(messages[1]) == {"prompt"}


def test_session_tools_answered_and_resume(emulator: LocalMantyx) -> None:
    calls: list[int] = []

    @mantyx_sync.local_tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        calls.append(a + b)
        return a + b

    emulator.set_model(
        [
            Turn(tool_calls=[ToolCall("add", {"a": 2, "b": 3})]),
            Turn(lambda ctx: f"sum is {ctx.tool_results[-1]['result']}"),
        ]
    )
    client = emulator.client(in_memory=True)
    chat = client.sessions.create(system_prompt=SYSTEM, tools=[add])
    assert chat.run("add").text == "sum is 5"
    # A new process would re-bind the handlers on the same session id.
    again = emulator.client(in_memory=True).sessions.resume(chat.id, tools=[add])
    assert again.run("add again").text == "sum is 5"
    assert calls == [5, 5]
    again.end()
    again.end()  # idempotent
    with pytest.raises(mantyx_sync.NotFoundError):
        client.sessions.resume("ses_does_not_exist", tools=[add])


def test_session_message_tools_override(emulator: LocalMantyx) -> None:
    @mantyx_sync.local_tool
    def ping() -> str:
        """Reply pong."""
        return "pong"

    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
    emulator.set_model(
        [Turn(tool_calls=[ToolCall("ping", {})]), Turn(lambda ctx: ctx.tool_results[-1]["result"])]
    )
    with agent.session() as chat:
        assert chat.run("x", tools=[ping]).text == "pong"
    body = next(r.json for r in emulator.requests if r.path.endswith("/messages"))
    assert body["tools"][0]["name"] == "ping"
