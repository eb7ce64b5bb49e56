"""A run whose only instructions are a system message (NEWER.md item 3), end to end.

``Agent(model_id=...)`` has neither ``systemPrompt`` nor ``agentId``: each run
must then carry a non-empty system message, checked before anything is sent,
and the SDK accepts and refuses exactly what the emulator does.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests

import mantyx_sync
from mantyx_sync import Message, SpecError
from mantyx_sync.spec import AgentSpec
from mantyx_sync.testing import LocalMantyx, ModelContext, Turn

MODEL = "openai/gpt-5.5"


def _echo_system(ctx: ModelContext) -> Turn:
    system = [m["content"] for m in ctx.messages if m["role"] == "system"]
    return Turn(f"system={system} prompt={ctx.prompt}")


def test_a_system_message_alone_instructs_the_run(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model(_echo_system)
    agent = mantyx_sync.Agent(mantyx_server.client(), model_id=MODEL)
    result = agent.run(messages=[Message("system", "You are terse."), Message("user", "hi")])
    assert result.text == "system=['You are terse.'] prompt=hi"
    [create] = [r for r in mantyx_server.requests if r.path.endswith("/agent-runs")]
    assert "systemPrompt" not in create.json and "agentId" not in create.json
    assert create.json["messages"][0] == {"role": "system", "content": "You are terse."}


def test_without_any_instructions_nothing_is_sent(mantyx_server: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), model_id=MODEL)
    for call in (
        lambda: agent.run("hi"),
        lambda: agent.run(messages=[Message("system", "   "), Message("user", "hi")]),
        lambda: agent.stream(messages=[("user", "hi")]),
        lambda: agent.run_plan("plan a trip"),
    ):
        with pytest.raises(SpecError) as info:
            call()
        assert info.value.path == "system_prompt"
        assert "agent_id" in str(info.value) and "system message" in str(info.value)
    with pytest.raises(SpecError, match="session") as info:
        agent.session()
    assert info.value.path == "system_prompt"
    assert mantyx_server.requests == []


_SYS = {"role": "system", "content": "Be brief."}
_BLANK = {"role": "system", "content": " \t"}
_HI = {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        ({}, [_SYS, _HI]),
        ({}, [_HI, _SYS]),
        ({}, [_SYS]),
        ({}, [_HI]),
        ({}, [_BLANK, _HI]),
        ({}, [{"role": "system", "content": ""}, _HI]),
        ({}, [_BLANK]),
        ({"system_prompt": "p"}, [_BLANK]),
        ({"system_prompt": "p"}, [_BLANK, _HI]),
        ({"system_prompt": "p"}, [{"role": "system", "content": ""}]),
        ({"agent_id": "agent_1"}, [_HI]),
    ],
)
def test_the_sdk_and_the_server_agree(
    mantyx_server: LocalMantyx, spec: dict[str, Any], messages: list[dict[str, Any]]
) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), model_id=MODEL, **spec)
    try:
        agent.run(messages=messages)
        sdk_accepts = True
    except SpecError:
        sdk_accepts = False
        assert mantyx_server.requests == []
    body = {**AgentSpec.build(model_id=MODEL, **spec).to_body([]), "messages": messages}
    response = requests.post(
        f"{mantyx_server.base_url}/api/v1/workspaces/{mantyx_server.workspace}/agent-runs",
        json=body,
        headers={"Authorization": f"Bearer {mantyx_server.api_key}"},
        timeout=5,
    )
    assert sdk_accepts == (response.status_code < 300), response.text
    if not sdk_accepts:
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_request"
