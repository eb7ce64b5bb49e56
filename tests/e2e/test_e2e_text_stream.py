"""``run.text_stream()``: a run's text as it grows, each model turn on its own line."""

from __future__ import annotations

import re

import pytest

import mantyx_sync
from mantyx_sync.testing import Emit, Fail, LocalMantyx, ToolCall, Turn


@mantyx_sync.local_tool(read_only=True)
def word_count(text: str) -> int:
    """Count the words in a piece of text.

    Args:
        text: The text to count.
    """
    return len(text.split())


def _agent(server: LocalMantyx, **spec: str) -> mantyx_sync.Agent:
    return mantyx_sync.Agent(server.client(), system_prompt="x", tools=[word_count], **spec)


def test_each_turn_ends_its_line_and_tool_lines_come_between(mantyx_server: LocalMantyx) -> None:
    # The README's example: printed one after another, the pieces read as a transcript.
    with _agent(mantyx_server).stream("How many words?") as run:
        pieces = list(run.text_stream())
    printed = "".join(str(piece) for piece in pieces)
    assert re.fullmatch(
        r"Calling word_count\.\n"
        r'  → word_count\(\{"text": "example"\}\)\n'
        r"  ✓ word_count → 1  \d+\.\ds\n"
        r"You said: How many words\?\nword_count → 1\n",
        printed,
    ), printed
    assert [p.kind for p in pieces if p.kind != "text"] == ["tool_call", "tool_result"]
    assert {p.tool for p in pieces if p.kind != "text"} == {"word_count"}
    # Every piece knows the event it comes from; the run ended as iterating it would.
    assert pieces[0].event.type == "assistant_delta"
    assert run.result is not None and run.result.text.endswith("word_count → 1")


def test_reasoning_only_when_asked_and_on_lines_of_its_own(mantyx_server: LocalMantyx) -> None:
    agent = _agent(mantyx_server, reasoning_level="low")
    with agent.stream("hi") as run:
        plain = "".join(map(str, run.text_stream()))
    assert "Thinking" not in plain
    with agent.stream("hi") as run:
        pieces = list(run.text_stream(thinking=True))
    printed = "".join(map(str, pieces))
    assert printed.startswith("Thinking about: hi\nCalling word_count.\n"), printed
    assert {p.kind for p in pieces} == {"thinking", "text", "tool_call", "tool_result"}


def test_a_turn_sent_whole_or_only_as_the_result_still_shows(mantyx_server: LocalMantyx) -> None:
    # Servers that send no deltas: the turn's message, or only the result, carries the text.
    mantyx_server.set_model([Emit("assistant_message", {"text": "Whole turn."}), Turn("streamed")])
    with _agent(mantyx_server).stream("x") as run:
        printed = "".join(map(str, run.text_stream()))
    assert printed.startswith("Whole turn.\n"), printed
    mantyx_server.set_model([Emit("result", {"ok": True, "text": "Only the result."})])
    with _agent(mantyx_server).stream("x") as run:
        assert "".join(map(str, run.text_stream())) == "Only the result.\n"


def test_a_failed_run_ends_the_line_then_raises(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model(
        [Turn("Let me check.", tool_calls=[ToolCall("word_count", {"text": "a b"})]), Fail("kaput")]
    )
    printed: list[str] = []
    with (
        pytest.raises(mantyx_sync.RunError, match="kaput"),
        _agent(mantyx_server).stream("x") as run,
    ):
        printed.extend(map(str, run.text_stream()))
    assert printed[-1].startswith("  ✓ word_count → 2  ")
    assert "".join(printed).startswith("Let me check.\n")
