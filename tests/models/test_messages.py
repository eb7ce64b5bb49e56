"""Message / Attachment values and every conversation-input limit (NEWER.md item 3)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from mantyx_sync import Attachment, Message, SpecError
from mantyx_sync.attachments import allowed_mime_type
from mantyx_sync.messages import turn_input


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_from_path_guesses_type_and_encodes_when_sent(tmp_path: Path) -> None:
    file = tmp_path / "notes.md"
    file.write_text("# hi", encoding="utf-8")
    att = Attachment.from_path(file)
    assert (att.filename, att.mime_type, att.size, att.inline) == (
        "notes.md",
        "text/markdown",
        4,
        True,
    )
    assert "notes.md" in repr(att) and "# hi" not in repr(att)
    assert att.to_wire() == {
        "type": "input_file",
        "mimeType": "text/markdown",
        "filename": "notes.md",
        "data": _b64(b"# hi"),
    }


def test_large_file_is_encoded_in_chunks_to_the_same_base64(tmp_path: Path) -> None:
    data = bytes(range(256)) * 9000  # 2.3 MB, several read chunks, not a multiple of 3
    file = tmp_path / "blob.pdf"
    file.write_bytes(data + b"x")
    assert Attachment.from_path(file).encoded() == _b64(data + b"x")


def test_file_that_grew_after_attaching_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "a.txt"
    file.write_text("abc")
    att = Attachment.from_path(file)
    file.write_text("abcdef")
    with pytest.raises(SpecError, match="grew after it was attached"):
        att.encoded()


def test_from_bytes_and_from_url() -> None:
    att = Attachment.from_bytes(b"{}", filename="d.json")
    assert att.mime_type == "application/json" and att.size == 2
    url = Attachment.from_url("https://files.test/r/report.pdf")
    assert url.to_wire() == {
        "type": "input_file_url",
        "url": "https://files.test/r/report.pdf",
        "mimeType": "application/pdf",
    }
    assert Attachment.from_url("https://files.test/blob").mime_type is None
    named = Attachment.from_url("https://x.test/1", filename="a.wav", mime_type="audio/wav")
    assert named.to_wire()["filename"] == "a.wav"


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda p: Attachment.from_path(p / "missing.txt"), "cannot read attachment"),
        (lambda p: Attachment.from_path(p), "not a regular file"),
        (lambda p: Attachment.from_bytes(b"x", filename="a.exe"), "not accepted"),
        (lambda p: Attachment.from_bytes(b"x", filename="noext"), "pass mime_type="),
        (lambda p: Attachment.from_bytes("text", filename="a.txt"), "must be bytes"),
        (lambda p: Attachment.from_url("http://x.test/a.pdf"), "https"),
        (lambda p: Attachment.from_url("https:///a.pdf"), "no host"),
        (
            lambda p: Attachment.from_url("https://x.test/a.zip", mime_type="application/zip"),
            "not accepted",
        ),
    ],
)
def test_bad_attachments(tmp_path: Path, build: Any, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        build(tmp_path)


def test_mime_allowlist() -> None:
    for ok in (
        "text/plain",
        "text/csv",
        "text/html; charset=utf-8",
        "image/png",
        "audio/webm",
        "application/pdf",
        "application/json",
        "application/xml",
    ):
        assert allowed_mime_type(ok), ok
    for bad in ("text/", "video/mp4", "application/zip", "image/tiff", "audio/ogg"):
        assert not allowed_mime_type(bad), bad


def test_prompt_with_attachments_becomes_one_user_message(tmp_path: Path) -> None:
    file = tmp_path / "a.csv"
    file.write_text("x,y\n")
    got = turn_input("Sum it", attachments=[file, Attachment.from_url("https://x.test/b.png")])
    [message] = got["messages"]
    assert message["role"] == "user" and message["content"] == "Sum it"
    assert [a["type"] for a in message["attachments"]] == ["input_file", "input_file_url"]
    assert message["attachments"][0]["mimeType"] == "text/csv"


def test_messages_with_message_values_and_run_level_attachments() -> None:
    att = Attachment.from_bytes(b"hi", filename="a.txt")
    got = turn_input(
        messages=[
            Message("system", "Be brief."),
            Message("user", "Hi"),
            ("assistant", "Hello"),
            Message("user", "Read these", attachments=[att]),
        ],
        attachments=[Attachment.from_bytes(b"{}", filename="b.json")],
    )
    last = got["messages"][-1]
    assert [a["filename"] for a in last["attachments"]] == ["a.txt", "b.json"]
    assert all("attachments" not in m for m in got["messages"][:-1])


def test_only_a_system_message_is_a_valid_run() -> None:
    assert turn_input(messages=[Message("system", "Say hi.")]) == {
        "messages": [{"role": "system", "content": "Say hi."}]
    }


@pytest.mark.parametrize(
    "messages",
    [
        [Message("system", "You are terse."), Message("user", "hi")],
        [("system", "  "), ("system", "Say hi.")],
        [{"role": "user", "content": "hi"}, {"role": "system", "content": "Be kind."}],
    ],
)
def test_a_non_empty_system_message_stands_in_for_the_instructions(messages: list[Any]) -> None:
    got = turn_input(messages=messages, instructed=False)
    assert [m["role"] for m in got["messages"]] == [
        m.role if isinstance(m, Message) else m[0] if isinstance(m, tuple) else m["role"]
        for m in messages
    ]


@pytest.mark.parametrize(
    "kw",
    [
        {"prompt": "hi"},
        {"messages": [("user", "hi")]},
        {"messages": [("system", ""), ("user", "hi")]},
        {"messages": [("system", " \n\t"), ("user", "hi")]},
        {"messages": [Message("assistant", "You are terse."), Message("user", "hi")]},
    ],
)
def test_without_instructions_a_run_is_refused_naming_all_three(kw: dict[str, Any]) -> None:
    with pytest.raises(SpecError) as info:
        turn_input(**kw, instructed=False)
    assert info.value.path == "system_prompt"
    message = str(info.value)
    assert "agent_id" in message and "system message" in message and "messages" in message
    # The same input is fine once the spec has a systemPrompt or agentId.
    turn_input(**kw)


def test_the_instructions_are_checked_before_any_file_is_read(tmp_path: Path) -> None:
    file = tmp_path / "a.txt"
    file.write_text("x", encoding="utf-8")
    att = Attachment.from_path(file)
    file.unlink()  # reading it now would fail with "cannot read attachment"
    with pytest.raises(SpecError) as info:
        turn_input(messages=[("user", "hi")], attachments=[att], instructed=False)
    assert info.value.path == "system_prompt"


@pytest.mark.parametrize("content", ["", "   ", "\n"])
def test_only_blank_system_messages_are_no_run(content: str) -> None:
    with pytest.raises(SpecError) as info:
        turn_input(messages=[("system", content)])
    assert info.value.path == "messages"
    assert "non-empty system message" in str(info.value)


def _files(n: int) -> list[Attachment]:
    return [Attachment.from_bytes(b"x", filename=f"{i}.txt") for i in range(n)]


@pytest.mark.parametrize(
    ("kw", "path", "match"),
    [
        ({"prompt": "x" * 200_001}, "prompt", "limit is 200000"),
        ({"messages": [("user", "x")] * 201}, "messages", "limit is 200"),
        ({"messages": [("user", "x" * 200_001)]}, "messages[0].content", "limit is 200000"),
        ({"messages": [("user", "a"), ("assistant", "b")]}, "messages[1].role", "last non-system"),
        (
            {
                "messages": [
                    Message("user", "a", attachments=_files(1)),
                    ("assistant", "b"),
                    ("user", "c"),
                ]
            },
            "messages[0].attachments",
            "only accepted on the last user message",
        ),
        ({"messages": [("system", "s")], "attachments": _files(1)}, "attachments", "needs a user"),
        ({"prompt": "p", "attachments": _files(21)}, "attachments", "limit is 20"),
        (
            {"messages": [Message("user", "a", attachments=_files(15))], "attachments": _files(6)},
            "attachments",
            "limit is 20",
        ),
        (
            {
                "prompt": "p",
                "attachments": [Attachment.from_bytes(b"\0" * 3_000_000, filename="a.pdf")] * 2,
            },
            "attachments[1]",
            "limit is 5000000",
        ),
        ({"prompt": "p", "attachments": ["a.txt"]}, "attachments[0]", "pathlib.Path"),
        (
            {"prompt": "p", "attachments": Attachment.from_bytes(b"x", filename="a.txt")},
            "attachments",
            "list",
        ),
        (
            {"prompt": "p", "attachments": [{"type": "input_file_url", "url": "ftp://x/a"}]},
            "attachments[0].url",
            "https",
        ),
        (
            {
                "prompt": "p",
                "attachments": [
                    {
                        "type": "input_file",
                        "filename": "a.zip",
                        "mimeType": "application/zip",
                        "data": "",
                    }
                ],
            },
            "attachments[0].mimeType",
            "not accepted",
        ),
        (
            {
                "prompt": "p",
                "attachments": [
                    {
                        "type": "input_file",
                        "filename": "a.txt",
                        "mimeType": "text/plain",
                        "data": "data:,x",
                    }
                ],
            },
            "attachments[0].data",
            "data: prefix",
        ),
        (
            {
                "prompt": "p",
                "attachments": [
                    {
                        "type": "input_file",
                        "filename": "a.txt",
                        "mimeType": "text/plain",
                        "data": "!!",
                    }
                ],
            },
            "attachments[0].data",
            "base64",
        ),
        ({"prompt": "p", "attachments": [{"type": "image"}]}, "attachments[0].type", "input_file"),
    ],
)
def test_every_limit_is_a_spec_error_naming_field_and_limit(
    kw: dict[str, Any], path: str, match: str
) -> None:
    with pytest.raises(SpecError, match=match) as info:
        turn_input(**kw)
    assert info.value.path == path


def test_inline_limit_counts_decoded_bytes_of_wire_dicts() -> None:
    blob = _b64(b"\0" * 4_000_000)
    ok = {"type": "input_file", "filename": "a.pdf", "mimeType": "application/pdf", "data": blob}
    turn_input("p", attachments=[ok])
    with pytest.raises(SpecError, match="limit is 5000000"):
        turn_input("p", attachments=[ok, ok])


def test_files_are_not_read_when_another_check_fails(tmp_path: Path) -> None:
    file = tmp_path / "a.txt"
    file.write_text("abc")
    att = Attachment.from_path(file)
    file.unlink()  # reading it would fail: the limit error must come first
    with pytest.raises(SpecError, match="limit is 20"):
        turn_input("p", attachments=[att] * 21)


def test_repr_never_shows_bytes_or_a_signed_query() -> None:
    signed = Attachment.from_url("https://user:pw@bucket.test/r.pdf?X-Amz-Signature=secret123")
    assert "secret123" not in repr(signed) and "pw" not in repr(signed)
    assert "https://bucket.test/r.pdf?…" in repr(signed)
    assert "hunter2" not in repr(Attachment.from_bytes(b"hunter2", filename="p.txt"))
