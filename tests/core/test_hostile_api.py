"""The MANTYX API client against a hostile server on 127.0.0.1: answers dripped a
byte at a time, bodies without end, JSON nested past the parser, 2xx pages that
are not JSON. Every wait ends by its deadline and every body stops at its cap."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hostile_support import Conn, Hostile, answer, head

import mantyx_sync
from mantyx_sync import RequestTimeoutError, RunTimeoutError, WireFormatError
from mantyx_sync._base.bounded import MAX_BODY_BYTES
from mantyx_sync._engine import resolution
from mantyx_sync._http.api import Api
from mantyx_sync._http.routes import cancel_run
from mantyx_sync.config import ClientConfig

RUN = json.dumps({"id": "r1", "status": "running", "pad": "x" * 200}).encode()


def serve(script: Callable[[Conn], None]) -> Callable[[str, str], Callable[[Conn], None]]:
    return lambda method, path: script


@pytest.fixture
def hostile() -> Iterator[Callable[[Callable[[str, str], Callable[[Conn], None]]], Hostile]]:
    servers: list[Hostile] = []

    def start(route: Callable[[str, str], Callable[[Conn], None]]) -> Hostile:
        servers.append(Hostile(route))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def client_of(server: Hostile, **options: object) -> mantyx_sync.Client:
    return mantyx_sync.Client(
        "mantyx_hostile_test_key",
        workspace="acme",
        base_url=server.url,
        **options,  # type: ignore[arg-type]
    )


# Regression (issue #29 item 1): get_run against a server sending a byte at a
# time was never given up on (each read was quick; the answer never came).
@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "status-line"])
def test_a_dripped_answer_ends_at_the_requests_deadline(hostile, headers_too: bool) -> None:
    whole = answer(RUN)

    def drip(conn: Conn) -> None:
        if not headers_too:
            conn.write(whole[: len(whole) - len(RUN)])
        conn.drip(whole if headers_too else RUN)  # ~5-15 s in all

    server = hostile(serve(drip))
    client = client_of(server, request_timeout=1.0, max_retries=0)
    started = time.monotonic()
    with pytest.raises(RequestTimeoutError, match="before the request's deadline"):
        client.runs.get("r1")
    took = time.monotonic() - started
    assert 1.0 <= took < 3.5, took  # connect + read: 2 s for the whole answer
    client.close()


# Regression (issue #29 item 1): agent.run(timeout=3) was still creating its run
# after 45 s against a dripping server: the run's timeout covers its creation.
def test_a_runs_timeout_covers_creating_it(hostile) -> None:
    server = hostile(serve(lambda conn: conn.drip(answer(b'{"runId": "r1"}' + b" " * 300))))
    client = client_of(server)
    agent = mantyx_sync.Agent(client, system_prompt="You are terse.")
    started = time.monotonic()
    with pytest.raises(RunTimeoutError, match=r"did not start within its timeout of 1\.5s"):
        agent.run("hi", run_timeout=1.5)
    assert time.monotonic() - started < 3.0
    assert [r[0] for r in server.requests] == ["POST"]  # a create is never repeated
    client.close()


# Regression (issue #29 item 1): leaving a `with agent.stream()` block took 19 s
# for a 20-byte cancel reply dripped out, though the cancel's limit is 5 s.
def test_the_best_effort_cancel_ends_by_its_limit(hostile) -> None:
    server = hostile(serve(lambda conn: conn.drip(answer(b'{"ok": true}'), every=0.2)))
    config = ClientConfig(
        api_key="mantyx_hostile_test_key",
        workspace="acme",
        base_url=server.url,
        cancel_timeout=1.0,
    )
    api = Api(config)
    started = time.monotonic()
    cancel_run(api, "r1", best_effort=True)  # logged, not raised
    assert time.monotonic() - started < 2.0
    api.close()


_CHUNK = b"10000\r\n" + b"1" * 0x10000 + b"\r\n"
_CHUNKED = b"\r\nTransfer-Encoding: chunked\r\n\r\n"


# Regression (issue #29 item 2): an endless body grew the process past 2 GB.
# Issue 33: an answer that declares its length is read in one piece, so one
# declaring more than the cap, or a small length beside the chunked coding
# (which wins), must stop at the cap too.
@pytest.mark.parametrize(
    ("first", "piece"),
    [
        (head(200) + b"[", None),
        (head(500) + b"[", None),
        (head(200, length=MAX_BODY_BYTES + 1) + b"[", None),
        (head(200, length=2).replace(b"\r\n\r\n", _CHUNKED), _CHUNK),
    ],
    ids=["reply", "error-reply", "declared-past-the-cap", "chunked-beside-a-small-length"],
)
def test_an_endless_body_stops_at_the_cap(hostile, first: bytes, piece: bytes | None) -> None:
    pieces = {} if piece is None else {"piece": piece}
    server = hostile(serve(lambda conn: conn.endless(first, **pieces)))
    client = client_of(server, max_retries=0)
    with pytest.raises(WireFormatError, match="larger than 67,108,864 bytes"):
        client.runs.get("r1")
    client.close()
    # What the socket buffers held besides: far from the gigabytes of before.
    assert server.sent < MAX_BODY_BYTES + 16 * 1024 * 1024


def test_a_compressed_answer_is_read_decoded(hostile) -> None:
    import gzip

    packed = gzip.compress(RUN)
    encoded = head(200, length=len(packed)).replace(
        b"\r\n\r\n", b"\r\nContent-Encoding: gzip\r\n\r\n"
    )
    server = hostile(serve(lambda conn: conn.write(encoded + packed)))
    client = client_of(server, max_retries=0)
    assert client.runs.get("r1").id == "r1"
    client.close()


# Regression (issue #29 item 3): JSON nested past the parser escaped as RecursionError.
def test_json_nested_past_the_parser_is_a_wire_format_error(hostile) -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    server = hostile(serve(lambda conn: conn.write(answer(deep))))
    client = client_of(server, max_retries=0)
    with pytest.raises(WireFormatError, match="nested too deeply"):
        client.runs.get("r1")
    client.close()


# Regression (issue #29 item 4): a 2xx page that is not JSON became None: an
# empty model catalog, a run "missing id".
@pytest.mark.parametrize("call", ["models", "get_run"])
def test_a_2xx_body_that_is_not_json_names_its_content_type(hostile, call: str) -> None:
    page = answer(b"<html><body>Sign in to the proxy</body></html>", 200, "text/html")
    server = hostile(serve(lambda conn: conn.write(page)))
    client = client_of(server, max_retries=0)
    with pytest.raises(WireFormatError, match=r"is not JSON .*content type 'text/html'") as info:
        client.models.list() if call == "models" else client.runs.get("r1")
    assert isinstance(info.value, mantyx_sync.MantyxError)
    client.close()


def test_answer_headers_are_read_in_any_case_and_repeats_joined(hostile) -> None:
    # The answer's headers as urllib3 parsed them: looked up in any case, a
    # repeated header's values joined (so a repeated count reads as no count).
    extra = (
        b"x-ratelimit-limit: 100\r\nX-RATELIMIT-BUCKET: runs\r\n"
        b"X-RateLimit-Remaining: 7\r\nx-ratelimit-remaining: 6\r\n\r\n"
    )
    page = head(200, length=len(RUN)).replace(b"\r\n\r\n", b"\r\n" + extra) + RUN
    server = hostile(serve(lambda conn: conn.write(page)))
    client = client_of(server, max_retries=0)
    assert client.runs.get("r1").id == "r1"
    limit = client.rate_limits["runs"]
    assert (limit.limit, limit.remaining) == (100, None)
    client.close()


def test_the_deadline_leaves_ordinary_answers_and_kept_connections_alone(hostile) -> None:
    server = hostile(serve(lambda conn: conn.write(answer(RUN))))
    client = client_of(server, request_timeout=1.0, max_retries=0)
    for _ in range(3):
        assert client.runs.get("r1").id == "r1"
    client.close()


# Issue #29 item 1: the time spent connecting a run's tools counts against its
# timeout; a run whose time ran out before it was created is never created.
def test_a_runs_timeout_counts_connecting_its_tools(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = resolution.resolve_tools

    def slow_to_connect(tools: Any) -> Any:
        threading.Event().wait(0.6)  # a tool server slow to connect, not a synchronisation
        return real(tools)

    monkeypatch.setattr(resolution, "resolve_tools", slow_to_connect)
    client = emulator.client(in_memory=True)
    agent = mantyx_sync.Agent(client, system_prompt="You are terse.")
    with pytest.raises(RunTimeoutError, match=r"did not start within its timeout of 0\.5s"):
        agent.start("hi", run_timeout=0.5)
    assert not emulator.runs  # nothing was created
    client.close()
