"""Quiet streams and the overall timeout (issue 20, item 12), against a raw socket server.

A connection that stays open but brings no event (silent, keep-alives only, a
drip of bytes that never completes a frame) counts against
``stream_reconnects``; ``timeout=`` ends a stream however the server behaves.
"""

from __future__ import annotations

import socket
import threading
import time

import attrs
import pytest
from raw_sse_support import HEADERS, RawSSE

from mantyx_sync._http import retry
from mantyx_sync._http.api import Api
from mantyx_sync._http.stream import RunStream
from mantyx_sync.config import ClientConfig
from mantyx_sync.errors import RunTimeoutError, SpecError, StreamError

# Connections past these get a 503 (a plain failure): with quiet connections
# reset to a fresh budget, as they were, a client would use all of them up.
QUIET_CONNECTIONS = 6
EVENT = b'id: 1\ndata: {"seq":1,"type":"assistant_delta","data":{"text":"hi"}}\n\n'


def _server(
    kind: str, *, event_first: bool = False, quiet_connections: int = QUIET_CONNECTIONS
) -> RawSSE:
    """Connections that stay open and quiet: ``silent``, ``keepalive`` or ``drip``."""

    def write(conn: socket.socket, number: int, stop: threading.Event) -> None:
        if number > quiet_connections:
            conn.sendall(b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        conn.sendall(HEADERS + (EVENT if event_first and number == 1 else b""))
        if kind == "drip":
            conn.sendall(b"data: ")  # a frame that never ends, one byte at a time
        while not stop.wait(0.02):
            if kind == "drip":
                conn.sendall(b"x")
            elif kind == "keepalive":
                conn.sendall(b": ping\n\n")

    return RawSSE(write)


def _transport(server: RawSSE, **options: object) -> Api:
    return Api(
        ClientConfig(api_key="mantyx_k", workspace="w", base_url=server.base_url, **options)  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("kind", ["silent", "keepalive", "drip"])
def test_quiet_connections_use_up_the_reconnect_budget(kind: str) -> None:
    with _server(kind, event_first=True) as server:
        transport = _transport(server, stream_idle_timeout=0.2, stream_reconnects=2)
        stream = RunStream(transport, "/agent-runs/r1/stream", run_id="r1")
        assert next(stream).seq == 1
        with pytest.raises(StreamError) as info:
            next(stream)
        transport.close()
        # The first connection (which brought an event) and two quiet reopens.
        assert server.connections == 3
        message = str(info.value)
        assert "after 2 reconnects (stream_reconnects)" in message
        assert "0.2s" in message  # no event (or no byte at all) for the idle deadline
        assert "stream_idle_timeout" in message
        assert info.value.run_id == "r1"


def test_quiet_while_our_own_tool_runs_is_not_a_failure() -> None:
    # The run waits on us: reopening a quiet stream then is no failure, and only
    # the overall timeout (or the tool's answer) ends the wait. No 503s here:
    # how many reopens fit in the timeout depends on the machine's speed.
    with _server("keepalive", quiet_connections=10**6) as server:
        transport = _transport(server, stream_idle_timeout=0.1, stream_reconnects=1)
        stream = RunStream(
            transport, "/agent-runs/r1/stream", run_id="r1", timeout=2.5, busy=lambda: True
        )
        with pytest.raises(RunTimeoutError, match="within its run_timeout"):
            next(stream)
        transport.close()
        assert server.connections >= 3  # more reopens than the budget of one


@pytest.mark.parametrize("kind", ["silent", "keepalive", "drip"])
def test_the_overall_timeout_ends_any_stream(kind: str) -> None:
    # The idle deadline (60 s) is far away: only the overall timeout can end this.
    with _server(kind) as server:
        transport = _transport(server, stream_idle_timeout=60.0)
        stream = RunStream(transport, "/agent-runs/r1/stream", run_id="r1", timeout=0.3)
        started = time.monotonic()
        with pytest.raises(RunTimeoutError, match=r"within its run_timeout of 0\.3s") as info:
            next(stream)
        assert time.monotonic() - started < 30  # not the idle deadline's 60 s
        assert "run_timeout=None for no limit" in str(info.value)
        transport.close()
        assert server.connections == 1


def test_a_later_limit_only_ever_shortens_the_deadline() -> None:
    with _server("keepalive") as server:
        transport = _transport(server)
        stream = RunStream(transport, "/agent-runs/r1/stream", run_id="r1", timeout=0.2)
        stream.limit(3600)
        stream.limit(None)
        with pytest.raises(RunTimeoutError, match=r"run_timeout of 0\.2s"):
            next(stream)
        transport.close()


@pytest.mark.parametrize("bad", [0, -1, float("nan"), True])
def test_a_bad_timeout_is_refused(bad: float) -> None:
    with _server("silent") as server:
        transport = _transport(server)
        with pytest.raises(SpecError, match="run_timeout: must be a number of seconds > 0"):
            RunStream(transport, "/agent-runs/r1/stream", run_id="r1", timeout=bad)
        transport.close()
        assert server.connections == 0


def test_stream_reconnects_wait_through_the_reconnect_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every connection fails (503): the stream waits the policy's backoff
    # between reopens, through tenacity, and gives up after its budget.
    waits: list[float] = []
    fast = attrs.evolve(
        retry.RECONNECT_POLICY,
        backoff=retry.Backoff(initial=0.01, maximum=0.04, jitter=0.0),
        sleep=waits.append,
    )
    monkeypatch.setattr(retry, "RECONNECT_POLICY", fast)
    with _server("silent", quiet_connections=0) as server:
        transport = _transport(server, stream_reconnects=3)
        stream = RunStream(transport, "/agent-runs/r1/stream", run_id="r1")
        with pytest.raises(StreamError, match="after 3 reconnects"):
            next(stream)
        transport.close()
    assert waits == [0.01, 0.02, 0.04]
    assert server.connections == 4
