"""One event-stream frame is capped (issue 15, fix 5): past ``max_event_bytes`` the
stream fails with a clear ``StreamError`` as the bytes arrive, never buffering
the whole frame."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

import mantyx_sync
from mantyx_sync._base.sse import FrameError, read_events
from mantyx_sync._http.api import Api
from mantyx_sync._http.stream import RunStream
from mantyx_sync.config import ClientConfig
from mantyx_sync.errors import ConfigurationError, StreamError
from mantyx_sync.testing import LocalMantyx, Turn

BIG = "y" * 20_000


def test_default_cap_is_32_mb() -> None:
    config = ClientConfig(api_key="mantyx_k", workspace="w")
    assert config.max_event_bytes == 32 * 1024 * 1024


@pytest.mark.parametrize("bad", [0, -1, 1.5, "big", True])
def test_a_bad_cap_is_refused_at_construction(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="max_event_bytes"):
        mantyx_sync.Client(api_key="mantyx_k", workspace="w", max_event_bytes=bad)  # type: ignore[arg-type]


def test_a_frame_over_the_cap_fails_the_run(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model([Turn(BIG)])
    client = mantyx_server.client(max_event_bytes=4096)
    agent = mantyx_sync.Agent(client, system_prompt="s")
    with pytest.raises(StreamError, match=r"grew past 4096 bytes \(max_event_bytes\)") as info:
        agent.run("x")
    assert info.value.run_id
    # Not retried: the same frame would come again on every reconnect.
    streams = [r for r in mantyx_server.requests if r.path.endswith("/stream")]
    assert len(streams) == 1
    client.close()


def test_frames_under_the_cap_pass(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model([Turn(BIG)])
    client = mantyx_server.client(max_event_bytes=64 * 1024)
    assert mantyx_sync.Agent(client, system_prompt="s").run("x").text == BIG
    client.close()


@pytest.fixture
def endless_frame() -> Iterator[tuple[int, threading.Event, list[int]]]:
    """A server whose stream sends one event, then a frame that never ends.

    It keeps writing until the client hangs up (at most 512 MB), records how
    many bytes it wrote, and sets the event when the client went away.
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    gone = threading.Event()
    sent: list[int] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Connection: close\r\n\r\n"
                b'id: 1\nevent: assistant_delta\ndata: {"seq":1,"type":"assistant_delta",'
                b'"data":{"text":"hi"}}\n\n'
                b"data: "
            )
            block = b"x" * 65536
            total = 0
            try:
                while total < 512 * 1024 * 1024:
                    conn.sendall(block)
                    total += len(block)
            except OSError:
                gone.set()
            sent.append(total)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], gone, sent
    finally:
        listener.close()
        thread.join(10)


def test_an_endless_frame_is_refused_as_it_arrives(
    endless_frame: tuple[int, threading.Event, list[int]],
) -> None:
    port, gone, sent = endless_frame
    config = ClientConfig(
        api_key="mantyx_k",
        workspace="w",
        base_url=f"http://127.0.0.1:{port}",
        max_event_bytes=256 * 1024,
    )
    transport = Api(config)
    stream = RunStream(transport, "/agent-runs/r1/stream", run_id="r1")
    first = next(stream)
    assert first.seq == 1
    with pytest.raises(StreamError, match="grew past 262144 bytes") as info:
        next(stream)
    assert info.value.run_id == "r1"
    stream.close()
    transport.close()
    # The client hung up long before the server ran out of frame to send.
    assert gone.wait(10)
    assert sent and sent[0] < 512 * 1024 * 1024


@pytest.mark.parametrize("end", [b"\n\n", b"\r\n\r\n", b"\r\r"])
@pytest.mark.parametrize("chunk_size", [1, 7, 1000, 1 << 20])
def test_the_cap_holds_however_the_bytes_are_chunked(end: bytes, chunk_size: int) -> None:
    small = b"data: " + b"a" * 90 + end  # 96 + len(end) bytes: under the cap
    big = b"data: " + b"b" * 200 + end  # over it, whole inside one chunk when chunks are big
    wire = small * 3 + big + small
    read = 0

    def chunks(data: bytes) -> Iterator[bytes]:
        nonlocal read
        for i in range(0, len(data), chunk_size):
            read += len(data[i : i + chunk_size])
            yield data[i : i + chunk_size]

    frames = []
    with pytest.raises(FrameError, match="grew past 150 bytes"):
        for frame in read_events(chunks(wire), max_bytes=150):
            frames.append(frame.data)
    # The frames before it went through; the big one never did.
    assert frames == ["a" * 90] * 3
    if chunk_size < len(big):
        # Refused before the big frame had arrived whole.
        assert read < len(small) * 3 + len(big)

    read = 0
    assert [e.data for e in read_events(chunks(small), max_bytes=150)] == ["a" * 90]
