"""A user's script, typed as openai-python or anthropic-sdk-python users type theirs.

tests/core/test_typed_user_script.py runs ``mypy --strict`` on it and checks
every ``reveal_type(x)  # R: <type>`` line: mypy must reveal exactly ``<type>``
(never ``Any``). Then it runs :func:`main` against the emulator. To cover a new
surface, add a section to :func:`main` with its ``reveal_type`` lines.
"""

from __future__ import annotations

import dataclasses
from typing import TypedDict

import attrs
from typing_extensions import reveal_type

from mantyx_sync import Agent, AssistantDelta, Client, ResultPayload, local_tool
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn


# Item 1: a decorated tool keeps its function's signature.
@local_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@local_tool(name="shout", timeout=5.0)
def upper(text: str, *, times: int = 1) -> list[str]:
    """Shout, ``times`` times."""
    return [text.upper()] * times


# Item 2: the classes a reply is asked for in.
@dataclasses.dataclass
class Verdict:
    ok: bool
    reason: str


@attrs.frozen
class Point:
    x: int
    y: int


class Label(TypedDict):
    name: str
    score: float


def tools_keep_their_signatures() -> None:
    reveal_type(add(1, 2))  # R: int
    reveal_type(upper("hi", times=2))  # R: list[str]
    reveal_type(add.name)  # R: str


def structured_output(agent: Agent) -> None:
    result = agent.run("Is 7 prime?", output_type=Verdict)
    reveal_type(result)  # R: mantyx_sync.results.RunResult[typed_user_script.Verdict]
    reveal_type(result.output)  # R: typed_user_script.Verdict
    assert isinstance(result.output, Verdict)
    point = agent.run("Where?", output_type=Point).output
    reveal_type(point)  # R: typed_user_script.Point
    assert isinstance(point, Point)
    label = agent.run("Label it", output_type=Label).output
    reveal_type(label)  # R: TypedDict(typed_user_script.Label, {'name': str, 'score': float})
    assert isinstance(label["score"], float)
    plain = agent.run("Hello")
    reveal_type(plain.output)  # R: str
    assert plain.output == plain.text
    with agent.stream("Is 9 prime?", output_type=Verdict) as run:
        reveal_type(run)  # R: mantyx_sync.run.Run[typed_user_script.Verdict]
        verdict = run.wait().output
        reveal_type(verdict)  # R: typed_user_script.Verdict
    with agent.session() as chat:
        said = chat.run("Is 11 prime?", output_type=Verdict).output
        reveal_type(said)  # R: typed_user_script.Verdict
        assert isinstance(said, Verdict)


def narrowable_events(agent: Agent) -> str:
    text = ""
    with agent.stream("Tell me") as run:
        for event in run:
            if event.type == "assistant_delta":
                reveal_type(event.payload)  # R: mantyx_sync.events.AssistantDelta
                text += event.payload.text
            elif event.type == "result":
                reveal_type(event.payload)  # R: mantyx_sync.events.ResultPayload
            match event.payload:
                case AssistantDelta(text=piece):
                    reveal_type(piece)  # R: str
                case ResultPayload(text=final):
                    reveal_type(final)  # R: str | None
    return text


def main(emulator: LocalMantyx) -> None:
    tools_keep_their_signatures()
    client: Client = emulator.client(in_memory=True)
    agent = Agent(client, system_prompt="You are terse.", tools=[add, upper])
    emulator.set_model([ToolCall("add", {"a": 2, "b": 3}), Turn("five")])
    reveal_type(agent.run("2 + 3?").text)  # R: str
    emulator.set_model(None)  # replies from the requested schema
    structured_output(agent)
    emulator.set_model([Turn("once upon a time")])
    assert narrowable_events(agent) == "once upon a time"


if __name__ == "__main__":
    server = LocalMantyx()
    try:
        main(server)
    finally:
        server.stop()
