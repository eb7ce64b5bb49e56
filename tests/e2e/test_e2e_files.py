"""Files in, end to end: attachments on runs, streams and session turns (NEWER.md item 3)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

import mantyx_sync
from mantyx_sync import Attachment, Message
from mantyx_sync.testing import LocalMantyx

SYSTEM = "You are a test agent."


def _posted_messages(server: LocalMantyx, suffix: str) -> list[dict]:
    return [
        r.json["messages"]
        for r in server.requests
        if r.method == "POST" and r.path.endswith(suffix)
    ]


def test_run_with_files_from_disk_and_url(mantyx_server: LocalMantyx, tmp_path: Path) -> None:
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.4 fake" * 1000)
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    result = agent.run(
        "Summarise the report",
        attachments=[pdf, Attachment.from_url("https://files.test/chart.png")],
    )
    assert "Received 2 files: application/pdf, image/png" in result.text
    [messages] = _posted_messages(mantyx_server, "/agent-runs")
    sent = messages[0]["attachments"]
    assert base64.b64decode(sent[0]["data"]) == pdf.read_bytes()
    assert sent[1] == {
        "type": "input_file_url",
        "url": "https://files.test/chart.png",
        "mimeType": "image/png",
    }


def test_stream_and_message_values(mantyx_server: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    note = Attachment.from_bytes(b"a,b\n1,2\n", filename="data.csv")
    with agent.stream(
        messages=[
            Message("user", "Hi"),
            Message("assistant", "Hello"),
            Message("user", "Read", attachments=[note]),
        ]
    ) as run:
        events = list(run)
    assert events[-1].type == "result"
    assert "Received 1 file: text/csv" in (run.result.text if run.result else "")


def test_session_turn_with_files_keeps_metadata_in_history(mantyx_server: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    with agent.session() as chat:
        first = chat.run("Look", attachments=[Attachment.from_bytes(b"{}", filename="a.json")])
        assert "Received 1 file: application/json" in first.text
        second = chat.run("And now?")
        assert "Received" not in second.text
        history = chat.history()
    assert history[0]["attachments"] == [
        {"type": "input_file", "filename": "a.json", "mimeType": "application/json", "sizeBytes": 2}
    ]


def test_bad_input_raises_before_anything_is_sent(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    mantyx_server.clear_requests()
    too_many = [Attachment.from_bytes(b"x", filename=f"{i}.txt") for i in range(21)]
    with pytest.raises(mantyx_sync.SpecError) as info:
        agent.run("Read", attachments=too_many)
    assert info.value.path == "attachments" and "limit is 20" in str(info.value)
    with agent.session() as chat:
        mantyx_server.clear_requests()
        with pytest.raises(mantyx_sync.SpecError, match="last non-system"):
            chat.run(messages=[("user", "a"), ("assistant", "b")])
        assert not any(r.path.endswith("/messages") for r in mantyx_server.requests)
    assert not any(r.path.endswith("/agent-runs") for r in mantyx_server.requests)
