"""OAuth against a hostile token endpoint on 127.0.0.1: a server that drips its
answer, a proxy's 401 page, a server that echoes the form it was sent."""

from __future__ import annotations

import http.server
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qsl

import pytest

from mantyx_sync import APIStatusError, AuthError, OAuth, RequestTimeoutError
from mantyx_sync.oauth import RefreshingTokenSource

CLIENT_ID = "hostile-test-client"
REFRESH = "mantyx_rt_hostile_endpoint_refresh"

Answer = Callable[["Handler", dict[str, str]], None]


class Handler(http.server.BaseHTTPRequestHandler):
    server: Endpoint
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path.startswith("/.well-known/"):  # no metadata: the fallback paths
            self.send(404, "application/json", b'{"error": "not_found"}')
        else:
            self._answer({})

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        self._answer(dict(parse_qsl(self.rfile.read(size).decode())))

    def _answer(self, form: dict[str, str]) -> None:
        self.server.forms.append(form)
        answers = self.server.answers
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        answer(self, form)

    def send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Endpoint(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.answers: list[Answer] = [tokens("mantyx_at_default_answer_0")]
        self.forms: list[dict[str, str]] = []
        self.stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def tokens(access: str) -> Answer:
    body = json.dumps({"access_token": access, "expires_in": 3600}).encode()
    return lambda handler, form: handler.send(200, "application/json", body)


def page(status: int, content_type: str, body: str) -> Answer:
    return lambda handler, form: handler.send(status, content_type, body.encode())


def drip(*, headers_too: bool) -> Answer:
    """One byte every 50 ms (about 5 s in all): each read is quick, the answer never is."""

    def answer(handler: Handler, form: dict[str, str]) -> None:
        body = b'{"access_token": "mantyx_at_dripped", "pad": "' + b"x" * 60 + b'"}'
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
        data = (head + "\r\n\r\n").encode() + body
        if not headers_too:
            handler.wfile.write(data[: len(head) + 4])
            data = data[len(head) + 4 :]
        for i in range(len(data)):
            if handler.server.stop.wait(0.05):  # the server's pace, not a synchronisation
                handler.close_connection = True
                return
            handler.wfile.write(data[i : i + 1])
            handler.wfile.flush()

    return answer


def echo(status: int, shape: Callable[[str], object]) -> Answer:
    """Answer ``status`` with the request's form and bearer echoed into the body."""

    def answer(handler: Handler, form: dict[str, str]) -> None:
        said = " ".join(f"{k}={v}" for k, v in form.items())
        said += f" authorization={handler.headers.get('Authorization')}"
        handler.send(status, "application/json", json.dumps(shape(said)).encode())

    return answer


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.stop.set()
    server.shutdown()
    server.server_close()
    thread.join(10)


def source_for(oauth: OAuth) -> RefreshingTokenSource:
    return oauth.refresh_token_source(REFRESH)


# Regression (issue #20 item 6): a token endpoint that drips one byte a second
# hung the refresh forever (timeout= bounded each read, not the answer).
@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "status-line"])
def test_a_dripping_token_endpoint_times_out_at_the_deadline(
    endpoint: Endpoint, headers_too: bool
) -> None:
    endpoint.answers = [drip(headers_too=headers_too), tokens("mantyx_at_after_the_drip")]
    source = source_for(OAuth(CLIENT_ID, base_url=endpoint.url, timeout=1.0))
    started = time.monotonic()
    with pytest.raises(RequestTimeoutError, match=r"no complete answer within 1s") as info:
        source.token()
    took = time.monotonic() - started
    assert 0.9 <= took < 3.0, took
    assert "OAuth(timeout=...)" in str(info.value)
    assert source.token() == "mantyx_at_after_the_drip"  # a timeout is not final
    assert [form.get("grant_type") for form in endpoint.forms] == ["refresh_token"] * 2


# Regression (issue #29 item 6): the helper thread given up on at the deadline
# went on reading the dripping server for as long as it dripped.
def test_nothing_reads_on_after_the_deadline(endpoint: Endpoint) -> None:
    endpoint.answers = [drip(headers_too=True)]
    oauth = OAuth(CLIENT_ID, base_url=endpoint.url, timeout=0.5)
    before = set(threading.enumerate())
    with pytest.raises(RequestTimeoutError):
        oauth.refresh(REFRESH)
    # The request ran on this thread and its connection is closed: no thread
    # of ours is left reading the server.
    left = [t.name for t in set(threading.enumerate()) - before if t.name.startswith("mantyx")]
    assert left == []


def test_the_deadline_covers_the_code_exchange_too(endpoint: Endpoint) -> None:
    endpoint.answers = [drip(headers_too=False)]
    oauth = OAuth(CLIENT_ID, base_url=endpoint.url, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(RequestTimeoutError):
        oauth.refresh(REFRESH)
    assert time.monotonic() - started < 2.5
    assert len(endpoint.forms) == 1  # the time is spent: no second attempt


# Regression (issue #20 item 7): a 401 page without OAuth's error JSON (a proxy)
# ended the refresh token source for good.
@pytest.mark.parametrize(
    "refusal",
    [
        page(401, "text/html", "<html><body>Proxy sign-in required</body></html>"),
        page(401, "application/json", '{"message": "gateway says no"}'),
        page(401, "application/json", '{"error": "temporarily_unavailable"}'),
        page(400, "application/json", '{"error": "invalid_request"}'),
    ],
    ids=["html-401", "json-401-no-oauth-error", "other-oauth-error-401", "invalid-request-400"],
)
def test_a_transient_refusal_fails_that_call_and_the_next_one_asks_again(
    endpoint: Endpoint, refusal: Answer
) -> None:
    endpoint.answers = [refusal, tokens("mantyx_at_after_the_proxy")]
    source = source_for(OAuth(CLIENT_ID, base_url=endpoint.url))
    with pytest.raises(APIStatusError):
        source.token()
    assert source.token() == "mantyx_at_after_the_proxy"
    assert len(endpoint.forms) == 2


@pytest.mark.parametrize("code", ["invalid_grant", "invalid_client"])
def test_invalid_grant_or_invalid_client_end_the_source(endpoint: Endpoint, code: str) -> None:
    endpoint.answers = [
        page(400, "application/json", json.dumps({"error": code})),
        tokens("mantyx_at_never_asked_for"),
    ]
    source = source_for(OAuth(CLIENT_ID, base_url=endpoint.url))
    for _ in range(2):
        with pytest.raises(AuthError) as info:
            source.token()
        assert info.value.code == code
    assert len(endpoint.forms) == 1  # the refusal is final: asked once


# Regression (issue #20 item 8): the client secret was never registered for
# redaction and ``hint`` was shown as sent: an endpoint echoing the form put the
# client secret and the refresh token into str(exc).
@pytest.mark.parametrize(
    ("status", "shape"),
    [
        (400, lambda said: {"error": "invalid_request", "error_description": said}),
        (401, lambda said: {"error": said}),
        (401, lambda said: {"message": said, "hint": said, "candidates": [said]}),
        (500, lambda said: {"error": "server_error", "message": said, "hint": said}),
        (403, lambda said: {"error": "forbidden", "hint": said, "echo": {said: [said]}}),
    ],
    ids=["oauth-description", "oauth-error-code", "non-oauth-hint", "server-error", "nested"],
)
def test_an_endpoint_echoing_the_form_leaks_no_secret(
    endpoint: Endpoint,
    status: int,
    shape: Callable[[str], object],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    # Fresh and not shaped like MANTYX tokens: only registering them masks them.
    secret, refresh, access = (f"{kind}_{secrets.token_urlsafe(16)}" for kind in "sra")
    endpoint.answers = [echo(status, shape)]
    oauth = OAuth(CLIENT_ID, secret, base_url=endpoint.url, timeout=5.0)
    failures: list[APIStatusError] = []
    for call in (lambda: oauth.refresh(refresh), lambda: oauth.userinfo(access)):
        with pytest.raises(APIStatusError) as info:
            call()
        failures.append(info.value)
    said = [form for form in endpoint.forms if form]
    assert said and said[0]["client_secret"] == secret  # the secrets were sent and echoed
    shown = [caplog.text] + [text for e in failures for text in (str(e), repr(e), str(e.body))]
    for value in (secret, refresh, access):
        for text in shown:
            assert value not in text
    assert "***" in str(failures[0]) + str(failures[0].body)
