"""The transport with a token source (OAuth): token per request, one refresh after a 401,
and the Client's token_source option. Scope errors from the body or the header."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest
import responses
from core_support import BASE, KEY, ROOT

from mantyx_sync import (
    AuthError,
    Client,
    ConfigurationError,
    PermissionDeniedError,
    TokenSet,
    TokenSource,
)
from mantyx_sync._http.api import Api
from mantyx_sync.config import ClientConfig
from mantyx_sync.oauth import RefreshingTokenSource
from mantyx_sync.oauth import source as _source


class FakeSource:
    """Hands out mantyx_at_1, then mantyx_at_2 ... one per refresh."""

    def __init__(self) -> None:
        self.generation = 1
        self.refreshed: list[str] = []
        self.lock = threading.Lock()

    def token(self) -> str:
        return f"mantyx_at_{self.generation}"

    def refresh(self, rejected: str) -> str:
        with self.lock:
            self.refreshed.append(rejected)
            if rejected == self.token():
                self.generation += 1
            return self.token()


class IdentitySource(FakeSource):
    def __init__(self, slugs: Sequence[str]) -> None:
        super().__init__()
        self.slugs = list(slugs)

    @property
    def base_url(self) -> str:
        return BASE

    def workspaces(self) -> Sequence[str]:
        return self.slugs


@pytest.fixture
def source() -> FakeSource:
    return FakeSource()


@pytest.fixture
def oauth_transport(source: FakeSource) -> Api:
    config = ClientConfig(api_key=None, workspace="acme", base_url=BASE, read_timeout=5.0)
    return Api(config, token_source=source)


def _auth_headers() -> list[str]:
    return [c.request.headers["Authorization"] for c in responses.calls]


@responses.activate
def test_token_is_asked_per_request(oauth_transport: Api, source: FakeSource) -> None:
    responses.get(f"{ROOT}/models", json={"models": []})
    oauth_transport.request("GET", "/models")
    source.generation = 5  # e.g. refreshed on schedule by the source itself
    oauth_transport.request("GET", "/models")
    assert _auth_headers() == ["Bearer mantyx_at_1", "Bearer mantyx_at_5"]
    assert source.refreshed == []


@responses.activate
def test_a_401_refreshes_once_and_repeats_the_request(
    oauth_transport: Api, source: FakeSource
) -> None:
    responses.post(f"{ROOT}/agent-runs", status=401, json={"error": "token_expired"})
    responses.post(f"{ROOT}/agent-runs", status=202, json={"runId": "r1"})
    reply = oauth_transport.request("POST", "/agent-runs", json_body={"prompt": "hi"})
    assert reply.body == {"runId": "r1"}
    assert source.refreshed == ["mantyx_at_1"]
    assert _auth_headers() == ["Bearer mantyx_at_1", "Bearer mantyx_at_2"]
    assert [c.request.body for c in responses.calls] == [b'{"prompt":"hi"}'] * 2


@responses.activate
def test_a_second_401_is_raised_without_another_refresh(
    oauth_transport: Api, source: FakeSource
) -> None:
    responses.get(f"{ROOT}/models", status=401, json={"error": "unauthorized"})
    with pytest.raises(AuthError) as info:
        oauth_transport.request("GET", "/models")
    assert len(responses.calls) == 2 and source.refreshed == ["mantyx_at_1"]
    assert "mantyx_at_" not in str(info.value) + repr(info.value)


@responses.activate
def test_stream_open_refreshes_after_a_401(oauth_transport: Api, source: FakeSource) -> None:
    responses.get(f"{ROOT}/agent-runs/r1/stream", status=401, json={"error": "unauthorized"})
    responses.get(
        f"{ROOT}/agent-runs/r1/stream",
        body="data: {}\n\n",
        content_type="text/event-stream",
    )
    events = oauth_transport.open_stream("/agent-runs/r1/stream", last_seq=None, idle_timeout=5)
    events.close()
    assert _auth_headers() == ["Bearer mantyx_at_1", "Bearer mantyx_at_2"]


@responses.activate
def test_an_api_key_401_is_not_repeated(transport: Api) -> None:
    responses.get(f"{ROOT}/models", status=401, json={"error": "unauthorized"})
    with pytest.raises(AuthError):
        transport.request("GET", "/models")
    assert _auth_headers() == [f"Bearer {KEY}"]


# Regression (issue #15 item 4): the scope named only in WWW-Authenticate was lost.
@pytest.mark.parametrize(
    ("body", "header", "expected"),
    [
        (
            {"error": "insufficient_scope"},
            'Bearer error="insufficient_scope", scope="runs:write"',
            ["runs:write"],
        ),
        (
            {"error": "insufficient_scope", "message": "nope"},
            'Bearer realm="mantyx", error="insufficient_scope", scope="runs:read sessions:read"',
            ["runs:read", "sessions:read"],
        ),
        (None, "Bearer error=insufficient_scope, scope=feedback:write", ["feedback:write"]),
        (
            {"error": "insufficient_scope", "required": ["runs:write", "runs:read"]},
            'Bearer error="insufficient_scope", scope="runs:write"',
            ["runs:write", "runs:read"],
        ),
    ],
)
@responses.activate
def test_insufficient_scope_read_from_the_header_when_the_body_does_not_say(
    transport: Api, body: object, header: str, expected: list[str]
) -> None:
    if body is None:
        responses.post(
            f"{ROOT}/agent-runs", status=403, body="", headers={"WWW-Authenticate": header}
        )
    else:
        responses.post(
            f"{ROOT}/agent-runs", status=403, json=body, headers={"WWW-Authenticate": header}
        )
    with pytest.raises(PermissionDeniedError) as info:
        transport.request("POST", "/agent-runs", json_body={})
    assert info.value.required_scopes == expected
    assert info.value.code == "insufficient_scope"
    assert expected[0] in str(info.value) or (body is not None and "message" in body)


@responses.activate
def test_a_plain_403_has_no_required_scopes(transport: Api) -> None:
    responses.get(
        f"{ROOT}/models", status=403, json={"error": "forbidden", "code": "oauth_apps_plan"}
    )
    with pytest.raises(PermissionDeniedError) as info:
        transport.request("GET", "/models")
    assert info.value.required_scopes == [] and info.value.code == "oauth_apps_plan"


def test_fake_sources_satisfy_the_protocol(source: FakeSource) -> None:
    assert isinstance(source, TokenSource)


def test_client_refuses_both_or_a_wrong_source(source: FakeSource) -> None:
    with pytest.raises(ConfigurationError, match="not both"):
        Client(KEY, token_source=source, workspace="acme")
    with pytest.raises(ConfigurationError, match="token_source must have"):
        Client(token_source="mantyx_at_x", workspace="acme")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="token_source="):
        Client(workspace="acme")


def test_client_with_a_source_ignores_the_env_key(
    source: FakeSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MANTYX_API_KEY", KEY)
    with responses.RequestsMock() as mock:
        mock.get(f"{ROOT}/models", json={"models": []})
        client = Client(token_source=source, workspace="acme", base_url=BASE)
        client.models.list()
        assert mock.calls[0].request.headers["Authorization"] == "Bearer mantyx_at_1"
    assert client.config.api_key is None
    assert "mantyx_at_" not in repr(client) and "token_source=***" in repr(client)


def test_client_picks_the_only_workspace_and_the_sources_server() -> None:
    client = Client(token_source=IdentitySource(["acme"]))
    assert client.config.workspace == "acme" and client.config.base_url == BASE


@pytest.mark.parametrize(
    ("slugs", "message"),
    [(["acme", "beta"], "2 workspaces \\(acme, beta\\)"), ([], "reaches no workspace")],
)
def test_client_says_which_workspaces_to_choose_from(slugs: list[str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Client(token_source=IdentitySource(slugs))
    assert Client(token_source=IdentitySource(slugs), workspace="beta").config.workspace == "beta"


@pytest.mark.parametrize(
    ("expires_in", "expires_at"),
    [(3600, 1_000_003_600.0), (59.5, 1_000_000_059.5), ("3600", 1_000_003_600.0),
     ("soon", None), (None, None), (True, None), (float("inf"), None)],
)  # fmt: skip
def test_token_response_lifetime(expires_in: object, expires_at: float | None) -> None:
    # RFC 6749 §5.1 says a number; some servers send a numeric string.
    body = {"access_token": "mantyx_at_lifetime_token", "expires_in": expires_in}
    tokens = TokenSet.from_token_response(body, now=1_000_000_000.0)
    assert tokens.expires_at == expires_at


def test_sources_share_one_fork_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    # os.register_at_fork hooks live for the process: one per source would pile up
    # in a program that makes a source per request.
    hooks: list[object] = []
    monkeypatch.setattr("os.register_at_fork", lambda **kw: hooks.append(kw))
    sources = [
        RefreshingTokenSource(
            f"mantyx_rt_fork_hook_{i}",
            refresh=lambda token, scopes: TokenSet(access_token="mantyx_at_unused"),
            userinfo=lambda source: None,  # type: ignore[arg-type,return-value]
            base_url=BASE,
        )
        for i in range(100)
    ]
    assert hooks == [] and all(s in _source._LIVE for s in sources)
    held = sources[0]
    held._lock.acquire()  # as if a parent thread were mid-refresh at fork()
    _source._new_locks()  # what the child runs
    assert held._lock.acquire(timeout=1)


def test_a_refused_refresh_token_is_raised_again_with_everything_the_server_said() -> None:
    calls: list[str] = []
    refusal = AuthError(
        "refresh token revoked",
        status=400,
        code="invalid_grant",
        hint="sign in again",
        candidates=["x"],
        body={"error": "invalid_grant"},
        request_id="req_1",
        retry_after=2.0,
    )

    def refuse(token: str, scopes: object) -> TokenSet:
        calls.append(token)
        raise refusal

    source = RefreshingTokenSource(
        "mantyx_rt_refused",
        refresh=refuse,
        userinfo=lambda source: None,  # type: ignore[arg-type,return-value]
        base_url=BASE,
    )
    with pytest.raises(AuthError) as first:
        source.token()
    with pytest.raises(AuthError) as again:
        source.token()
    assert calls == ["mantyx_rt_refused"]  # the refusal is final: asked once
    assert again.value is not first.value
    fields = ("message", "status", "code", "hint", "candidates", "body", "request_id")
    assert [getattr(again.value, f) for f in fields] == [getattr(first.value, f) for f in fields]
    assert again.value.retry_after == first.value.retry_after
    assert str(again.value) == str(first.value)
