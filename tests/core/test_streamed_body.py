"""Inline files stream into a request body as it is sent (NEWER.md item 3).

:func:`encode_body` writes the JSON around each file once and leaves the file
to be read and base64-encoded piece by piece while the request goes out: the
body is byte for byte what ``json.dumps`` would have written, of a length known
up front, and sent afresh on every pass.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mantyx_sync import Attachment, SpecError
from mantyx_sync._http.body import StreamedBody, encode_body
from mantyx_sync.attachments import FileData
from mantyx_sync.messages import turn_input

MB = 1_000_000


def _eager_equivalent(body: dict) -> bytes:
    def encode(item: object) -> str:
        assert isinstance(item, FileData)
        return item.attachment.encoded()

    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=encode).encode()


def test_a_body_without_files_is_plain_bytes() -> None:
    assert (
        encode_body({"prompt": "héllo", "n": [1, None]})
        == '{"prompt":"héllo","n":[1,null]}'.encode()
    )
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode_body({"x": object()})


def test_files_stream_in_pieces_to_the_same_bytes(tmp_path: Path) -> None:
    big = tmp_path / "big.pdf"
    big.write_bytes(bytes(range(256)) * (3 * MB // 256 + 7))
    small = Attachment.from_bytes(b"a,b\n1,2\n", filename="t.csv")
    body = turn_input(
        messages=[("system", "s"), ("user", 'say "hi"')],
        attachments=[big, small, Attachment.from_url("https://f.test/x.png")],
        streamed=True,
    )
    data = body["messages"][1]["attachments"]
    assert isinstance(data[0]["data"], FileData) and isinstance(data[1]["data"], FileData)
    streamed = encode_body(body)
    assert isinstance(streamed, StreamedBody)
    pieces = list(streamed)
    joined = b"".join(pieces)
    assert joined == _eager_equivalent(body)
    assert len(streamed) == len(joined)
    # Never the whole file, nor its whole base64 text: 768 KiB of input at a time.
    assert max(len(p) for p in pieces) <= 4 * 3 * 256 * 1024 // 3
    sent = json.loads(joined)["messages"][1]["attachments"]
    assert base64.b64decode(sent[0]["data"]) == big.read_bytes()
    assert sent[2] == {
        "type": "input_file_url",
        "url": "https://f.test/x.png",
        "mimeType": "image/png",
    }
    # Every pass (a retried or re-authorised POST) sends the same bytes again.
    assert b"".join(streamed) == joined


def test_a_file_changed_after_attaching_is_refused_before_sending(tmp_path: Path) -> None:
    note = tmp_path / "n.txt"
    note.write_text("one")
    body = turn_input("p", attachments=[Attachment.from_path(note)], streamed=True)
    note.write_text("one two")
    with pytest.raises(SpecError, match="changed size after it was attached"):
        encode_body(body)
    note.unlink()
    with pytest.raises(SpecError, match="cannot read attachment"):
        encode_body(body)


@pytest.mark.parametrize(("later", "word"), [("xx", "shrank"), ("xxxxxx", "grew")])
def test_a_file_changing_while_it_is_sent_stops_the_body(
    tmp_path: Path, later: str, word: str
) -> None:
    note = tmp_path / "n.txt"
    note.write_text("xxxx")
    streamed = encode_body(turn_input("p", attachments=[note], streamed=True))
    assert isinstance(streamed, StreamedBody)
    note.write_text(later)
    with pytest.raises(SpecError, match=word):
        b"".join(streamed)
