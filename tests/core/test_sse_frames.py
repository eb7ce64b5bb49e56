"""Event-stream frames (issue 20, item 13): split and parsed in linear time, and a
frame that is not UTF-8 ends the stream with a ``StreamError``, never a raw
``UnicodeDecodeError``."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from raw_sse_support import HEADERS, RawSSE

from mantyx_sync._http.api import Api
from mantyx_sync._http.config import ClientConfig
from mantyx_sync._http.stream import RunStream
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
def test_a_4_mb_frame_of_short_lines_is_parsed_in_linear_time() -> None:
    # One event whose JSON is spread over 700,000 "data:" lines (4 MB) (JSON allows the
    # line feeds they are joined with). Joining line by line is quadratic: this
    # frame took well over a minute; gathered and joined once it takes well
    # under a second. The generous timeout is only there to fail instead of hang.
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('event: result\nid: 7\ndata: {"a": 1}\n\n', ("result", '{"a": 1}', "7")),
        ("data: one\r\ndata: two\r\n\r\n", (None, "one\ntwo", None)),
        ("data:one\rdata:  two\r\r", (None, "one\n two", None)),
        (": a comment\ndata: x\nretry: 10\nmystery: y\n\n", (None, "x", None)),
        ("data\ndata: x\n\n", (None, "\nx", None)),
        ("event: ping\n\n", None),
        (": keep-alive\n\n", None),
        ("\n", None),
        ("event:\ndata: x\n\n", (None, "x", None)),
    ],
)
def test_parse_frame_follows_the_sse_field_rules(
    text: str, expected: tuple[str | None, str, str | None] | None
) -> None:
    from mantyx_sync._http.stream import parse_frame

    assert parse_frame(text) == expected


def test_frames_are_found_however_the_bytes_are_chunked() -> None:
    from mantyx_sync._http.stream import _FrameReader

    envelopes = [{"seq": n, "type": "assistant_delta", "data": {"text": f"é{n}"}} for n in (1, 2)]
    wire = b"".join(
        f"id: {e['seq']}\r\ndata: {json.dumps(e, ensure_ascii=False)}\r\n\r\n".encode()
        for e in envelopes
    )
    for size in (1, 2, 3, 5, len(wire)):
        reader = _FrameReader(60.0, max_frame=1024, run_id="r1")
        chunks = [wire[i : i + size] for i in range(0, len(wire), size)]
        got = [json.loads(data) for _, data, _ in reader.frames(chunks)]
        assert got == envelopes, size
