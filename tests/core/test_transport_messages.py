"""Connection failures in words a person reads (issue 15, fix 3), over real sockets.

Each message names the host, what happened, and after how many attempts and
how long the client gave up; the requests/urllib3 exception stays available
as ``__cause__``.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import urllib3.util.connection

import mantyx_sync
from mantyx_sync.errors import APIConnectionError, ConnectError, RequestTimeoutError
from mantyx_sync.testing import LocalMantyx

_NOISE = ("HTTPConnectionPool", "Max retries", "NewConnectionError", "urllib3", "object at 0x")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _failure(client: mantyx_sync.Client) -> APIConnectionError:
    with pytest.raises(APIConnectionError) as info:
        client.models.list()
    client.close()
    err = info.value
    for noise in _NOISE:
        assert noise not in str(err), str(err)
    # The underlying exception is kept for whoever wants the details.
    assert isinstance(err.__cause__, requests.RequestException)
    return err


def _client(base_url: str, **kwargs: object) -> mantyx_sync.Client:
    return mantyx_sync.Client(api_key="mantyx_k", workspace="w", base_url=base_url, **kwargs)  # type: ignore[arg-type]


def test_connection_refused_names_host_attempts_and_time() -> None:
    port = _free_port()
    err = _failure(_client(f"http://127.0.0.1:{port}", max_retries=2))
    assert type(err) is ConnectError
    assert re.fullmatch(
        rf"could not connect to 127\.0\.0\.1:{port}: connection refused "
        r"\(gave up after 3 attempts in \d+\.\ds\)",
        str(err),
    ), str(err)


def test_name_not_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    real = socket.getaddrinfo

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if host == "api.example.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    err = _failure(_client("https://api.example.invalid", max_retries=0))
    assert type(err) is ConnectError
    assert str(err).startswith(
        "could not connect to api.example.invalid:443: name not resolved "
        "(gave up after 1 attempt in"
    ), str(err)


def test_tls_failure() -> None:
    with LocalMantyx() as server:  # plain HTTP: a TLS handshake with it fails
        err = _failure(_client(server.base_url.replace("http://", "https://"), max_retries=0))
    assert type(err) is ConnectError
    assert re.match(
        rf"could not connect to 127\.0\.0\.1:{server.port}: TLS failure \(.+\) "
        r"\(gave up after 1 attempt in",
        str(err),
    ), str(err)


def test_connect_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    def create_connection(*args: object, **kwargs: object) -> socket.socket:
        raise TimeoutError("timed out")  # what a SYN into the void ends with

    monkeypatch.setattr(urllib3.util.connection, "create_connection", create_connection)
    err = _failure(_client("http://10.255.255.1:8080", max_retries=1, request_timeout=(0.5, 5.0)))
    assert type(err) is ConnectError
    assert str(err).startswith(
        "could not connect to 10.255.255.1:8080: timed out within 0.5s (gave up after 2 attempts in"
    ), str(err)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def test_read_timeout(silent_port: int) -> None:
    err = _failure(_client(f"http://127.0.0.1:{silent_port}", max_retries=0, request_timeout=0.2))
    assert type(err) is RequestTimeoutError
    assert str(err).startswith(
        f"timed out: 127.0.0.1:{silent_port} sent nothing within 0.2s (gave up after 1 attempt in"
    ), str(err)


def test_the_guide_shows_the_message_as_the_code_words_it() -> None:
    # The guide's errors page quotes an unreachable server with the default
    # retries (an example that catches it and prints it, timing elided as
    # "..."); the same call here must say the same, timing aside.
    page = Path(__file__).resolve().parents[2] / "docs" / "guide" / "errors.rst"
    errors_section = page.read_text(encoding="utf-8").split("A server that cannot be reached")[1]
    shown = re.search(
        r"except (mantyx_sync\.(\w+)) as exc:.*?^\s*(could not connect [^\n]*)$",
        errors_section,
        re.M | re.S,
    )
    assert shown, "the guide's errors page no longer shows the connection message"
    base_url = re.search(r'base_url="(http://127\.0\.0\.1:(\d+))"', errors_section)
    assert base_url
    port = _free_port()
    client = mantyx_sync.Client(
        api_key="mantyx_k", workspace="acme", base_url=f"http://127.0.0.1:{port}"
    )
    err = _failure(client)
    assert type(err) is getattr(mantyx_sync, shown.group(2))
    expected = re.escape(shown.group(3).replace(base_url.group(2), str(port)))
    expected = expected.replace(r"in\ \.\.\.s", r"in\ \d+\.\ds")
    assert re.fullmatch(expected, str(err)), (str(err), shown.group(3))
