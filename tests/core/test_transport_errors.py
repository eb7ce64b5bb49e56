"""The transport seam: auth headers, JSON bodies, and error mapping (mocked with responses)."""

from __future__ import annotations

import logging

import pytest
import requests
import requests.adapters
import responses
from core_support import BASE, KEY, ROOT

from mantyx_sync._http.api import Api
from mantyx_sync._http.retry import RetryPolicy, Safety
from mantyx_sync._http.transport import RequestsTransport
from mantyx_sync.errors import (
    APIConnectionError,
    APIStatusError,
    AuthError,
    ConflictError,
    ConnectError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
)


@responses.activate
def test_request_sends_bearer_and_json(transport: Api) -> None:
    responses.post(f"{ROOT}/agent-runs", json={"runId": "run_1"}, status=202)
    reply = transport.request("POST", "/agent-runs", json_body={"prompt": "hi"})
    assert reply.status == 202
    assert reply.body == {"runId": "run_1"}
    sent = responses.calls[0].request
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.body == b'{"prompt":"hi"}'


@responses.activate
def test_empty_2xx_body_is_none(transport: Api) -> None:
    responses.post(f"{ROOT}/agent-runs/r/tool-results", status=204)
    assert transport.request("POST", "/agent-runs/r/tool-results", json_body={}).body is None


@pytest.mark.parametrize(
    ("status", "body", "cls"),
    [
        (400, {"error": "invalid_request", "message": "prompt: required"}, InvalidRequestError),
        (401, {"error": "unauthorized", "message": "Missing API key"}, AuthError),
        (403, {"error": "forbidden", "message": "nope"}, PermissionDeniedError),
        (404, {"error": "not_found", "message": "no run"}, NotFoundError),
        (409, {"error": "run_terminal", "message": "ended"}, ConflictError),
        (429, {"error": "rate_limited", "message": "slow down"}, RateLimitError),
        (500, {"error": "internal", "message": "boom"}, ServerError),
        (418, {"error": "teapot", "message": "short and stout"}, APIStatusError),
    ],
)
@responses.activate
def test_status_maps_to_error_class(
    transport: Api, status: int, body: dict[str, str], cls: type[APIStatusError]
) -> None:
    responses.get(f"{ROOT}/models", json=body, status=status)
    with pytest.raises(cls) as info:
        transport.request("GET", "/models")
    err = info.value
    assert type(err) is cls
    assert err.status == status
    assert err.code == body["error"]
    assert err.message == body["message"]
    assert body["message"] in str(err)


@responses.activate
def test_not_found_keeps_hint_and_candidates(transport: Api) -> None:
    responses.get(
        f"{ROOT}/models",
        json={"error": "not_found", "message": "unknown workspace", "hint": "acme-prod"},
        status=404,
    )
    with pytest.raises(NotFoundError) as info:
        transport.request("GET", "/models")
    assert info.value.hint == "acme-prod"
    assert "acme-prod" in str(info.value)


@responses.activate
def test_invalid_model_candidates(transport: Api) -> None:
    responses.post(
        f"{ROOT}/agent-runs",
        json={"error": "invalid_model", "message": "ambiguous", "candidates": ["a", "b"]},
        status=400,
    )
    with pytest.raises(InvalidRequestError) as info:
        transport.request("POST", "/agent-runs", json_body={})
    assert info.value.candidates == ["a", "b"]


@pytest.mark.parametrize("required", ["runs:write", ["runs:write", "runs:read"]])
@responses.activate
def test_insufficient_scope_exposes_required_scopes(transport: Api, required: object) -> None:
    responses.post(
        f"{ROOT}/agent-runs",
        json={"error": "insufficient_scope", "required": required},
        status=403,
        headers={"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="runs:write"'},
    )
    with pytest.raises(PermissionDeniedError) as info:
        transport.request("POST", "/agent-runs", json_body={})
    expected = [required] if isinstance(required, str) else required
    assert info.value.required_scopes == expected
    assert "runs:write" in str(info.value)


@pytest.mark.parametrize(("header", "expected"), [("3", 3.0), ("0.5", 0.5), ("junk", None)])
@responses.activate
def test_rate_limit_retry_after(transport: Api, header: str, expected: float | None) -> None:
    responses.get(
        f"{ROOT}/models",
        json={"error": "rate_limited"},
        status=429,
        headers={"Retry-After": header},
    )
    with pytest.raises(RateLimitError) as info:
        transport.request("GET", "/models")
    assert info.value.retry_after == expected


@responses.activate
def test_non_json_error_body(transport: Api) -> None:
    responses.get(f"{ROOT}/models", body="<html>bad gateway</html>", status=502)
    with pytest.raises(ServerError) as info:
        transport.request("GET", "/models")
    assert info.value.status == 502


@responses.activate
def test_connection_refused_is_connect_error(transport: Api) -> None:
    responses.get(f"{ROOT}/models", body=requests.exceptions.ConnectionError("refused"))
    with pytest.raises(APIConnectionError):
        transport.request("GET", "/models")


@responses.activate
def test_timeouts_map(transport: Api) -> None:
    responses.get(f"{ROOT}/models", body=requests.exceptions.ReadTimeout("slow"))
    responses.get(f"{ROOT}/agent-runs/x", body=requests.exceptions.ConnectTimeout("slow"))
    with pytest.raises(RequestTimeoutError):
        transport.request("GET", "/models")
    with pytest.raises(ConnectError):
        transport.request("GET", "/agent-runs/x")


def test_real_refused_connection_is_connect_error() -> None:
    import socket

    from mantyx_sync.config import ClientConfig

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = ClientConfig(api_key=KEY, workspace="w", base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(ConnectError):
        Api(cfg).request("GET", "/models")


@responses.activate
def test_safe_policy_retries_5xx_then_succeeds(transport: Api) -> None:
    responses.get(f"{ROOT}/models", status=503, json={"error": "unavailable"})
    responses.get(f"{ROOT}/models", status=200, json={"models": []})
    waits: list[float] = []
    policy = RetryPolicy(safety=Safety.SAFE, attempts=3, sleep=waits.append)
    assert transport.request("GET", "/models", policy=policy).body == {"models": []}
    assert len(responses.calls) == 2
    assert len(waits) == 1


@responses.activate
def test_create_policy_never_retries_a_500(transport: Api) -> None:
    responses.post(f"{ROOT}/agent-runs", status=500, json={"error": "internal"})
    policy = RetryPolicy(safety=Safety.CREATE, attempts=4, sleep=lambda s: None)
    with pytest.raises(ServerError):
        transport.request("POST", "/agent-runs", json_body={}, policy=policy)
    assert len(responses.calls) == 1


@responses.activate
def test_secrets_never_in_errors_or_logs(transport: Api, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mantyx_sync")
    responses.get(
        f"{ROOT}/models",
        json={"error": "unauthorized", "message": f"bad key {KEY}"},
        status=401,
    )
    with pytest.raises(AuthError) as info:
        transport.request("GET", "/models")
    assert KEY not in str(info.value)
    assert KEY not in repr(info.value)
    assert KEY not in caplog.text
    assert KEY not in repr(transport.config)


def test_fork_gets_a_new_session(monkeypatch: pytest.MonkeyPatch) -> None:
    transport = RequestsTransport(BASE)
    first = transport._get_session()
    assert transport._get_session() is first
    import os

    real = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: real + 1)
    assert transport._get_session() is not first


@responses.activate
def test_newer_error_bodies_with_code_field(transport: Api) -> None:
    responses.post(
        f"{ROOT}/agent-runs",
        json={"error": "API keys need a paid plan", "code": "api_keys_plan"},
        status=403,
    )
    responses.get(
        f"{ROOT}/models",
        json={"error": "Too many requests", "code": "rate_limit_exceeded"},
        status=429,
        headers={"Retry-After": "12", "X-RateLimit-Bucket": "reads"},
    )
    with pytest.raises(PermissionDeniedError) as denied:
        transport.request("POST", "/agent-runs", json_body={})
    assert denied.value.code == "api_keys_plan"
    assert denied.value.message == "API keys need a paid plan"
    with pytest.raises(RateLimitError) as limited:
        transport.request("GET", "/models")
    assert limited.value.code == "rate_limit_exceeded"
    assert limited.value.retry_after == 12.0


def test_body_cut_short_is_a_transport_error() -> None:
    import socket
    import threading

    from mantyx_sync.config import ClientConfig

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]

    def serve() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                # Promise 100 bytes, send 5, hang up.
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n"
                    b'Content-Type: application/json\r\n\r\n{"a":'
                )

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    cfg = ClientConfig(api_key=KEY, workspace="w", base_url=f"http://127.0.0.1:{port}")
    transport = Api(cfg)
    try:
        with pytest.raises(APIConnectionError):
            transport.request("GET", "/models")
        with pytest.raises(APIConnectionError):
            transport.request("POST", "/agent-runs/r/tool-results", json_body={"toolUseId": "t"})
    finally:
        server.join(5)
        listener.close()
        transport.close()


def test_ca_bundle_from_the_environment_reaches_tls_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bundle is the session's verify setting and goes with every https
    # request and every proxied one; a direct http:// request gets True, which
    # urllib3 treats the same (an http pool drops every TLS setting) without
    # requests stat'ing the bundle path on each request.
    from mantyx_sync._http.pools import adapter_verify, new_session

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/corp/ca.pem")
    plain = new_session("http://127.0.0.1:8080")
    assert plain.verify == "/etc/corp/ca.pem"
    assert adapter_verify(plain, "http://127.0.0.1:8080/api/v1/x") is True
    assert adapter_verify(plain, "https://api.example.test/api/v1/x") == "/etc/corp/ca.pem"

    monkeypatch.setenv("HTTP_PROXY", "http://proxy.corp.test:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    proxied = new_session("http://mantyx.corp.test")
    assert proxied.proxies
    assert adapter_verify(proxied, "http://mantyx.corp.test/api/v1/x") == "/etc/corp/ca.pem"

    monkeypatch.delenv("REQUESTS_CA_BUNDLE")
    assert (
        adapter_verify(new_session("https://api.example.test"), "https://api.example.test/x")
        is True
    )


# requests before 2.32.2 looks a pool up through get_connection, which keeps nothing.
_FINDS_POOLS_BY_TLS_CONTEXT = hasattr(
    requests.adapters.HTTPAdapter, "get_connection_with_tls_context"
)
_OLD_REQUESTS = "requests < 2.32.2 finds pools through get_connection: nothing is kept"


@pytest.mark.skipif(not _FINDS_POOLS_BY_TLS_CONTEXT, reason=_OLD_REQUESTS)
def test_a_server_s_pool_is_found_once_and_is_always_the_pool_manager_s() -> None:
    # Our adapter keeps the pool it found for a server (no proxy) instead of
    # looking it up per request; what it hands out must still be the pool
    # manager's own (which the session closes), however many servers it meets.
    from requests.adapters import HTTPAdapter

    from mantyx_sync._http.pools import new_session
    from mantyx_sync._http.pools import prepare as prepared

    session = new_session("http://127.0.0.1:9")
    adapter = session.get_adapter("http://127.0.0.1:9")
    capacity = adapter._pools_kept
    origins = [f"http://127.0.0.{n}:9" for n in range(1, capacity + 3)]
    for origin in [*origins, origins[0], *origins[::-1], origins[2], origins[2]]:
        request = prepared("GET", f"{origin}/api/v1/x?y=1", {}, None)
        pool = adapter.get_connection_with_tls_context(request, True)
        # What requests itself would find (the pool manager's current pool):
        assert pool is HTTPAdapter.get_connection_with_tls_context(adapter, request, True)
        assert pool is adapter.get_connection_with_tls_context(request, True)
        assert len(adapter._direct) <= capacity
    session.close()
    assert adapter._direct == {}


@pytest.mark.skipif(not _FINDS_POOLS_BY_TLS_CONTEXT, reason=_OLD_REQUESTS)
def test_requests_reuse_the_server_s_pool() -> None:
    from mantyx_sync.testing import LocalMantyx
    from mantyx_sync.transport import HttpRequest

    with LocalMantyx() as server:
        transport = RequestsTransport(server.base_url)
        url = f"{server.base_url}/api/v1/workspaces/{server.workspace}/agent-runs"
        request = HttpRequest("GET", url, {"Authorization": f"Bearer {server.api_key}"})
        try:
            assert transport.send(request).status == 200
            adapter = transport._get_session().get_adapter(url)
            [pool] = adapter._direct.values()
            assert transport.send(request).status == 200
            assert list(adapter._direct.values()) == [pool]
        finally:
            transport.close()
