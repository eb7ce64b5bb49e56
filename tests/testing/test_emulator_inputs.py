"""The emulator's checks of messages and attachments (NEWER.md item 3), over raw HTTP."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mantyx_sync.testing import LocalMantyx

SYSTEM = {"systemPrompt": "You are a test."}


def _file(name: str, mime: str, data: bytes = b"hello") -> dict[str, Any]:
    return {
        "type": "input_file",
        "filename": name,
        "mimeType": mime,
        "data": base64.b64encode(data).decode(),
    }


def _user(*files: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": "read", "attachments": list(files)}


@pytest.mark.parametrize(
    ("messages", "word"),
    [
        ([{"role": "user", "content": "x" * 200_001}], "200000"),
        (
            [
                _user(_file("a.txt", "text/plain")),
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "again"},
            ],
            "only allowed on the last user message",
        ),
        ([_user(*[_file(f"{i}.txt", "text/plain") for i in range(21)])], "at most 20"),
        ([_user(_file("a.zip", "application/zip"))], "messages[0].attachments[0].mimeType"),
        ([_user({"type": "input_file_url", "url": "http://x.test/a.pdf"})], "https"),
        ([_user({**_file("a.txt", "text/plain"), "data": "data:text/plain;base64,aGk="})], "data:"),
        ([_user({"type": "image", "url": "https://x.test/a.png"})], "input_file"),
        (
            [
                _user(
                    _file("a.pdf", "application/pdf", b"\0" * 3_000_000),
                    _file("b.pdf", "application/pdf", b"\0" * 3_000_000),
                )
            ],
            "5000000",
        ),
        (
            [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
            "last non-system",
        ),
    ],
)
def test_bad_messages_are_400_naming_the_field(
    api: Any, messages: list[dict[str, Any]], word: str
) -> None:
    response = api.post("/agent-runs", {**SYSTEM, "messages": messages})
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_request"
    assert word in response.json()["message"]


def test_files_reach_the_model_as_metadata_only(api: Any, srv: LocalMantyx) -> None:
    body = {
        **SYSTEM,
        "messages": [
            _user(
                _file("a.pdf", "application/pdf"),
                {"type": "input_file_url", "url": "https://x.test/b.png", "mimeType": "image/png"},
            )
        ],
    }
    response = api.post("/agent-runs", body)
    assert response.status_code in (200, 201, 202), response.text
    run = srv.wait_for_run(response.json()["runId"], status="succeeded")
    assert "Received 2 files: application/pdf, image/png" in (run.final_text or "")
    stored = run.spec["messages"][0]["attachments"]
    assert stored[0] == {
        "type": "input_file",
        "filename": "a.pdf",
        "mimeType": "application/pdf",
        "sizeBytes": 5,
    }
    assert "data" not in stored[0]


def test_only_a_system_message_runs(api: Any, srv: LocalMantyx) -> None:
    response = api.post("/agent-runs", {"messages": [{"role": "system", "content": "Say hi."}]})
    assert response.status_code in (200, 201, 202), response.text
    srv.wait_for_run(response.json()["runId"], status="succeeded")


# -- instructions: systemPrompt, agentId or a non-empty system message (NEWER item 3) --

_SYS = {"role": "system", "content": "You are terse."}
_HI = {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    "body",
    [
        {"messages": [_SYS, _HI]},
        {"messages": [_HI, _SYS]},
        {"messages": [{"role": "system", "content": " "}, _SYS, _HI]},
        {"agentId": "agent_1", "prompt": "hi"},
        {"systemPrompt": "s", "messages": [{"role": "system", "content": ""}, _HI]},
    ],
)
def test_a_run_with_instructions_from_any_of_the_three_is_accepted(
    api: Any, srv: LocalMantyx, body: dict[str, Any]
) -> None:
    response = api.post("/agent-runs", body)
    assert response.status_code in (200, 201, 202), response.text
    srv.wait_for_run(response.json()["runId"], status="succeeded")


@pytest.mark.parametrize(
    ("body", "word"),
    [
        ({"prompt": "hi"}, "systemPrompt: required unless agentId is set or messages include"),
        ({"messages": [_HI]}, "systemPrompt: required"),
        ({"messages": [{"role": "system", "content": ""}, _HI]}, "systemPrompt: required"),
        ({"messages": [{"role": "system", "content": " \n\t"}, _HI]}, "systemPrompt: required"),
        ({"systemPrompt": "", "messages": [_HI]}, "systemPrompt: required"),
        ({"systemPrompt": "s", "messages": [{"role": "system", "content": "  "}]}, "non-empty"),
    ],
)
def test_a_run_without_instructions_is_400_naming_all_three(
    api: Any, body: dict[str, Any], word: str
) -> None:
    response = api.post("/agent-runs", body)
    assert response.status_code == 400, response.text
    answer = response.json()
    assert answer["error"] == "invalid_request"
    assert word in answer["message"]


def test_a_session_still_needs_a_system_prompt_or_agent_id(api: Any) -> None:
    response = api.post("/agent-sessions", {"modelId": "openai/gpt-5.5"})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == "systemPrompt: required unless agentId is set"
    assert api.post("/agent-sessions", {"agentId": "agent_1"}).status_code in (200, 201)
