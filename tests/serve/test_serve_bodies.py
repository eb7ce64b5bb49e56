"""Request bodies: no framing reads past the cap, no JSON makes a 500 (issue 20, item 4).

Raw HTTP on a real werkzeug server, since the attacks are malformed framing.
Each app is wrapped so the test counts the bytes it read from ``wsgi.input``.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
import requests

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)

CAP = 1024 * 1024  # the default max_body_bytes
MB = b"x" * (1024 * 1024)


class _Counted:
    def __init__(self, stream: Any, owner: Counting) -> None:
        self._stream = stream
        self._owner = owner

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._stream.read(size)
        self._owner.read += len(data)
        return data


class Counting:
    """A WSGI middleware counting what the app reads of request bodies."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.read = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        environ["wsgi.input"] = _Counted(environ["wsgi.input"], self)
        return self.app(environ, start_response)


@pytest.fixture(params=["a2a", "agent-api"])
def served(request: Any, mantyx_server: LocalMantyx, serve_wsgi: Any) -> Iterator[Any]:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    if request.param == "a2a":
        app, path = Counting(serve.a2a_app(agent)), "/"
    else:
        app, path = Counting(serve.agent_api_app(agent)), "/process"
    served = serve_wsgi(app)
    served.app, served.path = app, path
    yield served
    assert mantyx_server.runs == {}  # nothing of it ever ran


def _raw(port: int, head: bytes, body: Iterable[bytes] = ()) -> tuple[int, bytes]:
    """Send ``head`` then ``body`` (from a thread, while reading) -> (status, reply body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    sent = threading.Event()

    def send() -> None:
        try:
            for piece in body:
                sock.sendall(piece)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server answered and closed before taking all of it
        finally:
            sent.set()

    try:
        sock.sendall(head)
        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        reply = b""
        while b"\r\n\r\n" not in reply or not _complete(reply):
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            reply += data
        sent.wait(20)
    finally:
        sock.close()
    status = int(reply.split(b" ", 2)[1])
    return status, reply.partition(b"\r\n\r\n")[2]


def _complete(reply: bytes) -> bool:
    head, _, body = reply.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def _head(path: str, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    return ("\r\n".join([*lines, *headers]) + "\r\n\r\n").encode()


def test_a_negative_content_length_is_400_and_nothing_is_read(served: Any) -> None:
    port = served.server.server_port
    body = [b'{"jsonrpc": "2.0", "id": 1, "method": "x"}', *[MB] * 10]
    status, reply = _raw(port, _head(served.path, "Content-Length: -1"), body)
    assert status == 400 and b"Content-Length" in reply
    assert served.app.read == 0


@pytest.mark.parametrize("length", ["abc", "1_0", "+5", "0x10", "5, 5"])
def test_a_malformed_content_length_is_400(served: Any, length: str) -> None:
    port = served.server.server_port
    status, reply = _raw(port, _head(served.path, f"Content-Length: {length}"), [b"{}"])
    assert status == 400 and b"Content-Length" in reply
    assert served.app.read == 0


def test_a_declared_length_over_the_cap_is_413_unread(served: Any) -> None:
    port = served.server.server_port
    status, _ = _raw(port, _head(served.path, f"Content-Length: {CAP + 1}"), [MB] * 9)
    assert status == 413 and served.app.read == 0


def test_a_chunked_body_is_read_no_further_than_the_cap(served: Any) -> None:
    port = served.server.server_port
    chunk = b"%x\r\n" % len(MB) + MB + b"\r\n"
    status, _ = _raw(
        port, _head(served.path, "Transfer-Encoding: chunked"), [*[chunk] * 12, b"0\r\n\r\n"]
    )
    assert status == 413 and served.app.read <= CAP + 1


def test_a_small_chunked_body_is_served(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.agent_api_app(agent)).url
    body = {"input": [{"role": "user", "content": "chunks"}], "stream": False}
    pieces = iter([json.dumps(body).encode()])  # an iterator: requests sends it chunked
    reply = requests.post(
        f"{url}/process", data=pieces, headers={"Content-Type": "application/json"}, timeout=30
    )
    assert reply.status_code == 200 and "You said: chunks" in reply.text


@pytest.mark.parametrize("depth", [100_000, 975, 101])
def test_deeply_nested_json_is_the_protocols_parse_error(served: Any, depth: int) -> None:
    # A valid request whose metadata nests ``depth`` deep: 100,000 overflows the
    # parser; 975 parses, but writing the reply would reach the recursion limit.
    if served.path == "/":
        message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        params = {"message": message, "metadata": "DEEP"}
        body: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": params,
        }
    else:
        body = {"input": [{"role": "user", "content": "hi"}], "stream": False, "x": "DEEP"}
    data = json.dumps(body).replace('"DEEP"', "[" * depth + "]" * depth)
    reply = requests.post(
        served.url + served.path,
        data=data,
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert reply.headers["Content-Type"] == "application/json", reply.text[:200]
    if served.path == "/":
        assert reply.status_code == 200  # JSON-RPC answers a parse error in-band
        assert reply.json()["error"]["code"] == -32700
    else:
        assert reply.status_code == 400
        assert reply.json()["error"]["code"] == "invalid_request"
    if depth > CAP // 16:  # more lists than a body may hold values: refused before parsing
        assert "holds more than 65536 values" in reply.text
    else:
        assert "nested more than 100 deep" in reply.text


def test_nesting_up_to_the_limit_is_served(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.agent_api_app(agent)).url
    deep: Any = []
    for _ in range(98):  # 99 lists in the body object: 100 levels, the limit
        deep = [deep]
    body = {"input": [{"role": "user", "content": "deep"}], "stream": False, "x": deep}
    reply = requests.post(f"{url}/process", json=body, timeout=30)
    assert reply.status_code == 200 and "You said: deep" in reply.text
