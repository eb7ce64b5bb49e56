"""Event-stream frames: split in linear time and parsed by sseclient-py, a frame
of any number of lines in parts of at most ``PART_LINES`` lines (so its work
stays linear), with the same events sseclient-py gives for the whole frame; a
frame that is not UTF-8 ends the stream with a ``StreamError``, never a raw
``UnicodeDecodeError``."""

from __future__ import annotations

import configparser
import json
import random
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sseclient
from raw_sse_support import HEADERS, RawSSE

from mantyx_sync._base import sse
from mantyx_sync._base.sse import PART_LINES, read_events
from mantyx_sync._http.api import Api
from mantyx_sync._http.stream import RunStream
from mantyx_sync.config import ClientConfig
from mantyx_sync.errors import StreamError

TERMINAL = b'data: {"seq":2,"type":"result","data":{"subtype":"success","text":"ok"}}\n\n'


def _stream(server: RawSSE, **config: object) -> tuple[Api, RunStream]:
    transport = Api(
        ClientConfig(api_key="mantyx_k", workspace="w", base_url=server.base_url, **config)  # type: ignore[arg-type]
    )
    return transport, RunStream(transport, "/agent-runs/r1/stream", run_id="r1")


def test_a_frame_that_is_not_utf8_is_a_stream_error_and_not_retried() -> None:
    def write(conn: socket.socket, number: int, stop: threading.Event) -> None:
        bad = b'data: {"seq":1,"type":"assistant_delta","data":{"text":"\xff"}}\n\n'
        conn.sendall(HEADERS + bad)

    with RawSSE(write) as server:
        transport, stream = _stream(server)
        with pytest.raises(StreamError, match="not valid UTF-8") as info:
            next(stream)
        assert info.value.run_id == "r1"
        # The same bytes would come again on every reconnect.
        assert server.connections == 1
        stream.close()
        transport.close()


@pytest.mark.timeout(20)
def test_a_4_mb_frame_of_short_lines_is_one_event() -> None:
    # One event whose JSON is spread over 700,000 "data:" lines (4 MB).
    # sseclient-py joins a frame line by line (work growing with lines x bytes:
    # over a minute for this frame whole); in parts it takes about a second.
    lines = 700_000
    frame = (
        b'data: {"seq":1,"type":"assistant_delta","data":{"text":"big"}\n'
        + b"data:\n" * lines
        + b"data: }\n\n"
    )
    assert len(frame) > 4_000_000

    def write(conn: socket.socket, number: int, stop: threading.Event) -> None:
        conn.sendall(HEADERS + frame + TERMINAL)

    with RawSSE(write) as server:
        transport, stream = _stream(server)
        events = list(stream)
        transport.close()
    assert [(e.seq, e.type) for e in events] == [(1, "assistant_delta"), (2, "result")]
    assert events[0].text == "big"
    assert server.connections == 1


def test_a_pretty_printed_frame_of_70_lines_is_parsed() -> None:
    # The JSON envelope spread over 70 lines, as a server that pretty-prints
    # its JSON sends it, id: and event: included.
    envelope = {"seq": 1, "type": "assistant_delta", "data": {"text": "big"}}
    envelope["data"].update({f"k{n}": n for n in range(62)})  # type: ignore[attr-defined]
    lines = json.dumps(envelope, indent=1).splitlines()
    assert len(lines) > 64
    frame = b"id: 1\nevent: assistant_delta\n" + "".join(f"data: {x}\n" for x in lines).encode()

    def write(conn: socket.socket, number: int, stop: threading.Event) -> None:
        conn.sendall(HEADERS + frame + b"\n" + TERMINAL)

    with RawSSE(write) as server:
        transport, stream = _stream(server)
        events = list(stream)
        transport.close()
    assert [(e.seq, e.type) for e in events] == [(1, "assistant_delta"), (2, "result")]
    assert events[0].text == "big"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('event: result\nid: 7\ndata: {"a": 1}\n\n', [("result", '{"a": 1}', "7")]),
        ("data: one\r\ndata: two\r\n\r\n", [("message", "one\ntwo", None)]),
        ("data:one\rdata:  two\r\r", [("message", "one\n two", None)]),
        (": a comment\ndata: x\nretry: 10\nmystery: y\n\n", [("message", "x", None)]),
        ("data\ndata: x\n\n", [("message", "\nx", None)]),
        ("event: ping\n\n", []),
        (": keep-alive\n\n", []),
        ("\n", []),
        ("event:\ndata: x\n\n", [("message", "x", None)]),
        # Mixed line ends: LF then CR is a blank line too.
        ("data: a\n\rdata: b\r\n\r\ndata: c\n\r\n", [("message", x, None) for x in "abc"]),
        ("data: a\n\n\ndata: b\n\n", [("message", "a", None), ("message", "b", None)]),
    ],
)
def test_events_follow_the_sse_field_rules(
    text: str, expected: list[tuple[str, str, str | None]]
) -> None:
    wire = text.encode()
    for size in (1, 2, 3, len(wire)):
        chunks = [wire[i : i + size] for i in range(0, len(wire), size)]
        got = [(e.event, e.data, e.id) for e in read_events(chunks)]
        assert got == expected, size


def _whole(frame: bytes) -> list[tuple[str, str, str | None, object]]:
    """The events sseclient-py itself gives for ``frame`` handed to it whole."""
    events = sseclient.SSEClient(iter([frame])).events()
    return [(e.event, e.data, e.id, e.retry) for e in events]


_LINES = [
    "data: {n}",
    "data:{n}",
    "data:  {n}",
    "data",
    "data:",
    "id: {n}",
    "id:",
    "event: e{n}",
    "event:",
    "event: message",
    "event",
    "retry: {n}",
    ": comment {n}",
    "mystery: {n}",
    "eventual: {n}",
    "   ",
    "data: é{n}",
]


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("seed", range(40))
def test_a_frame_of_any_length_gives_what_sseclient_py_gives_for_it_whole(
    end: str, seed: int
) -> None:
    # Frames of a few lines up to several parts, of every field sseclient-py
    # knows and some it ignores, read whole and in chunks of three bytes.
    rng = random.Random(seed)
    count = rng.choice([1, 5, PART_LINES - 1, PART_LINES, PART_LINES + 1, 3 * PART_LINES + 7])
    lines = [rng.choice(_LINES).format(n=n) for n in range(count)]
    frame = (end.join(lines) + end + end).encode()
    expected = _whole(frame)
    for size in (3, len(frame)):
        chunks = [frame[i : i + size] for i in range(0, len(frame), size)]
        got = [(e.event, e.data, e.id, e.retry) for e in read_events(chunks)]
        assert got == expected, (seed, size)


def test_sseclient_py_is_never_handed_more_than_part_lines_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What keeps a frame's parse linear however many lines it has.
    handed: list[int] = []
    pieces = sse._Pieces.__iter__

    def counted(self: sse._Pieces) -> Iterator[bytes]:
        for piece in pieces(self):
            handed.append(piece.count(b"\n"))
            yield piece

    monkeypatch.setattr(sse._Pieces, "__iter__", counted)
    frame = b"".join(b"data: %d\n" % n for n in range(10 * PART_LINES)) + b"\n"
    [event] = read_events([frame])
    assert event.data.split("\n") == [str(n) for n in range(10 * PART_LINES)]
    assert len(handed) > 1 and max(handed) <= PART_LINES + 1  # and the part's own end


def test_each_event_is_handed_over_as_soon_as_its_frame_is_whole() -> None:
    # A CRLF stream whose chunk ends between the two line ends of a blank line.
    delivered: list[str] = []

    def chunks() -> Iterator[bytes]:
        yield b"data: one\r\n\r"
        assert delivered == ["one"]  # not held back for the next chunk
        yield b"\ndata: two\n\n"

    for event in read_events(chunks()):
        delivered.append(event.data)
    assert delivered == ["one", "two"]


def test_frames_are_found_however_the_bytes_are_chunked() -> None:
    envelopes = [{"seq": n, "type": "assistant_delta", "data": {"text": f"é{n}"}} for n in (1, 2)]
    wire = b"".join(
        f"id: {e['seq']}\r\ndata: {json.dumps(e, ensure_ascii=False)}\r\n\r\n".encode()
        for e in envelopes
    )
    for size in (1, 2, 3, 5, len(wire)):
        chunks = [wire[i : i + size] for i in range(0, len(wire), size)]
        got = [json.loads(e.data) for e in read_events(chunks, max_bytes=1024)]
        assert got == envelopes, size


def test_sseclient_py_parses_and_is_installed_with_the_package() -> None:
    # The design card's parser: a runtime dependency, not a test-only one.
    assert all(isinstance(e, sseclient.Event) for e in read_events([b"data: x\n\n"]))
    setup = configparser.ConfigParser()
    setup.read(Path(__file__).resolve().parents[2] / "setup.cfg")
    required = [line.split(">=")[0] for line in setup["options"]["install_requires"].split()]
    assert "sseclient-py" in required
    extras = setup["options.extras_require"]
    assert not any("sseclient" in extras[name] for name in extras)
