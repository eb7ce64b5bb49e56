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


def test_run_with_files_from_disk_and_url(emulator: LocalMantyx, tmp_path: Path) -> None:
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.4 fake" * 1000)
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
    result = agent.run(
        "Summarise the report",
        attachments=[pdf, Attachment.from_url("https://files.test/chart.png")],
    )
    assert "Received 2 files: application/pdf, image/png" in result.text
    [messages] = _posted_messages(emulator, "/agent-runs")
    sent = messages[0]["attachments"]
    assert base64.b64decode(sent[0]["data"]) == pdf.read_bytes()
    assert sent[1] == {
        "type": "input_file_url",
        "url": "https://files.test/chart.png",
        "mimeType": "image/png",
    }


def test_stream_and_message_values(emulator: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
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


def test_session_turn_with_files_keeps_metadata_in_history(emulator: LocalMantyx) -> None:
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
    with agent.session() as chat:
        first = chat.run("Look", attachments=[Attachment.from_bytes(b"{}", filename="a.json")])
        assert "Received 1 file: application/json" in first.text
        second = chat.run("And now?")
        assert "Received" not in second.text
        history = chat.history()
    (attached,) = history[0].attachments
    assert attached == {
        "type": "input_file",
        "filename": "a.json",
        "mimeType": "application/json",
        "sizeBytes": 2,
    }


def test_bad_input_raises_before_anything_is_sent(emulator: LocalMantyx, tmp_path: Path) -> None:
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
    emulator.clear_requests()
    too_many = [Attachment.from_bytes(b"x", filename=f"{i}.txt") for i in range(21)]
    with pytest.raises(mantyx_sync.SpecError) as info:
        agent.run("Read", attachments=too_many)
    assert info.value.path == "attachments" and "limit is 20" in str(info.value)
    with agent.session() as chat:
        emulator.clear_requests()
        with pytest.raises(mantyx_sync.SpecError, match="last non-system"):
            chat.run(messages=[("user", "a"), ("assistant", "b")])
        assert not any(r.path.endswith("/messages") for r in emulator.requests)
    assert not any(r.path.endswith("/agent-runs") for r in emulator.requests)


def test_files_stream_from_disk_and_a_resent_post_sends_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run's POST is refused once (an expired OAuth token) and sent again.
    pdf = tmp_path / "scan.pdf"
    pdf.write_bytes(bytes(range(256)) * 8000)

    def whole_file(self: Attachment) -> str:
        raise AssertionError("a run's file was encoded whole instead of streamed")

    monkeypatch.setattr(Attachment, "encoded", whole_file)
    with LocalMantyx() as server:
        issued = server.oauth.issue_tokens(["runs:read", "runs:write", "sessions:write"])
        oauth = mantyx_sync.OAuth("mantyx-test-client", base_url=server.base_url)
        source = oauth.refresh_token_source(issued["refresh_token"])
        with mantyx_sync.Client(token_source=source, workspace=server.workspace) as client:
            agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
            with agent.session() as chat:
                turn = chat.run("Read", attachments=[pdf])
            server.oauth.expire_access_tokens()
            server.clear_requests()
            result = agent.run("Read", attachments=[pdf])
        assert "Received 1 file: application/pdf" in turn.text
        assert "Received 1 file: application/pdf" in result.text
        posts = [r for r in server.requests if r.path.endswith("/agent-runs")]
        # Refused once on the expired token, then sent again, whole, on the fresh one.
        assert [r.status < 300 for r in posts] == [False, True] and posts[0].status == 401
        for post in posts:
            data = post.json["messages"][0]["attachments"][0]["data"]
            assert base64.b64decode(data) == pdf.read_bytes()


def test_a_file_changed_after_attaching_is_refused_before_sending(
    emulator: LocalMantyx, tmp_path: Path
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("short")
    attached = Attachment.from_path(note)
    note.write_text("a longer note now")
    agent = mantyx_sync.Agent(emulator.client(in_memory=True), system_prompt=SYSTEM)
    emulator.clear_requests()
    with pytest.raises(mantyx_sync.SpecError, match="changed size after it was attached"):
        agent.run("Read", attachments=[attached])
    assert not any(r.path.endswith("/agent-runs") for r in emulator.requests)


def test_a_callers_requests_session_sends_the_streamed_file_too(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    import requests

    pdf = tmp_path / "scan.pdf"
    pdf.write_bytes(b"%PDF-1.4 " * 5000)
    with requests.Session() as http:
        sent: list[str | None] = []
        http.hooks["response"].append(
            lambda r, **_: sent.append(r.request.headers.get("Content-Length"))
        )
        client = mantyx_server.client(http_session=http)
        result = mantyx_sync.Agent(client, system_prompt=SYSTEM).run("Read", attachments=[pdf])
    assert "Received 1 file: application/pdf" in result.text
    [messages] = _posted_messages(mantyx_server, "/agent-runs")
    assert base64.b64decode(messages[0]["attachments"][0]["data"]) == pdf.read_bytes()
    assert sent and sent[0] is not None and int(sent[0]) > 4 * len(pdf.read_bytes()) // 3


def test_a_file_growing_while_it_is_sent_stops_the_post_and_no_run_starts(
    mantyx_server: LocalMantyx, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mantyx_sync.attachments import FileData

    note = tmp_path / "log.txt"
    note.write_text("x" * 1_000_000)
    attached = Attachment.from_path(note)
    note.write_text("x" * 2_000_000)
    # As if it grew between the check before sending and the reading while sending.
    monkeypatch.setattr(FileData, "check", lambda self: None)
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt=SYSTEM)
    with pytest.raises(mantyx_sync.SpecError, match="grew after it was attached"):
        agent.run("Read", attachments=[attached])
    assert not mantyx_server.runs  # the cut-short body started nothing
    assert agent.run("Still there?").text  # and the client goes on
