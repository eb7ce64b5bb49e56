"""The emulator's OAuth server and rate-limit buckets, over raw HTTP (never the SDK)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

TIMEOUT = 5.0
Api = Any  # the `api` fixture of tests/testing/conftest.py

REDIRECT = "http://127.0.0.1:53682/callback"
CLIENT = "mantyx-test-client"


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _authorize(api: Api, challenge: str, **overrides: str) -> requests.Response:
    params = {
        "response_type": "code",
        "client_id": CLIENT,
        "redirect_uri": REDIRECT,
        "scope": "runs:read models:read",
        "state": "st-1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        **overrides,
    }
    return requests.get(
        f"{api.server.base_url}/api/oauth/authorize",
        params=params,
        allow_redirects=False,
        timeout=TIMEOUT,
    )


def _redirect_params(response: requests.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text
    location = urlsplit(response.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT
    return {k: v[0] for k, v in parse_qs(location.query).items()}


def _token(api: Api, auth: Any = None, **form: str) -> requests.Response:
    return requests.post(
        f"{api.server.base_url}/api/oauth/token", data=form, auth=auth, timeout=TIMEOUT
    )


def _sign_in(api: Api, scope: str = "runs:read models:read") -> dict[str, Any]:
    verifier, challenge = _pkce()
    code = _redirect_params(_authorize(api, challenge, scope=scope))["code"]
    response = _token(
        api,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT,
        client_id=CLIENT,
        code_verifier=verifier,
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_metadata_names_every_endpoint(api: Api) -> None:
    base = api.server.base_url
    body = requests.get(f"{base}/.well-known/oauth-authorization-server", timeout=TIMEOUT).json()
    assert body["issuer"] == base
    assert body["authorization_endpoint"] == f"{base}/api/oauth/authorize"
    assert body["token_endpoint"] == f"{base}/api/oauth/token"
    assert body["revocation_endpoint"] == f"{base}/api/oauth/revoke"
    assert body["userinfo_endpoint"] == f"{base}/api/oauth/userinfo"
    assert body["code_challenge_methods_supported"] == ["S256"]


def test_metadata_can_be_switched_off(make_api: Any) -> None:
    api = make_api(oauth_metadata=False)
    url = f"{api.server.base_url}/.well-known/oauth-authorization-server"
    assert requests.get(url, timeout=TIMEOUT).status_code == 404


def test_pkce_code_flow_then_the_token_works_within_its_scopes(api: Api) -> None:
    tokens = _sign_in(api)
    assert tokens["access_token"].startswith("mantyx_at_")
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600
    assert tokens["scope"] == "models:read runs:read"
    assert api.get("/models", headers=_bearer(tokens["access_token"])).status_code == 200
    denied = api.post("/agent-runs", {"prompt": "x"}, headers=_bearer(tokens["access_token"]))
    assert denied.status_code == 403
    assert denied.json()["error"] == "insufficient_scope"
    assert denied.headers["WWW-Authenticate"] == (
        'Bearer error="insufficient_scope", scope="runs:write"'
    )
    assert api.server.oauth.code_exchanges == 1


def test_state_comes_back_and_a_denial_redirects_with_the_error(api: Api) -> None:
    api.server.oauth.deny_next()
    params = _redirect_params(_authorize(api, _pkce()[1], state="xyz"))
    assert params == {"error": "access_denied", "state": "xyz"}
    assert "code" in _redirect_params(_authorize(api, _pkce()[1]))


@pytest.mark.parametrize(
    ("overrides", "status", "error"),
    [
        ({"redirect_uri": "https://evil.example/cb"}, 400, "invalid_request"),
        ({"client_id": "nobody"}, 400, "invalid_client"),
        ({"code_challenge_method": "plain"}, 302, "invalid_request"),
        ({"scope": ""}, 302, "invalid_scope"),
    ],
)
def test_bad_authorization_requests(
    api: Api, overrides: dict[str, str], status: int, error: str
) -> None:
    response = _authorize(api, _pkce()[1], **overrides)
    assert response.status_code == status
    found = _redirect_params(response)["error"] if status == 302 else response.json()["error"]
    assert found == error


def test_wrong_verifier_and_replayed_code_are_refused(api: Api) -> None:
    verifier, challenge = _pkce()
    code = _redirect_params(_authorize(api, challenge))["code"]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": CLIENT,
    }
    wrong = _token(api, **form, code_verifier=_pkce()[0])
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    good = _token(api, **form, code_verifier=verifier)
    assert good.status_code == 200
    replay = _token(api, **form, code_verifier=verifier)
    assert (replay.status_code, replay.json()["error"]) == (400, "invalid_grant")
    # The replay revoked what the code gave.
    assert not api.server.oauth.is_active(good.json()["refresh_token"])


def test_refresh_is_non_rotating_and_expiry_follows_the_clock(api: Api) -> None:
    tokens = _sign_in(api)
    api.server.advance_clock(3601)
    expired = api.get("/models", headers=_bearer(tokens["access_token"]))
    assert expired.status_code == 401
    assert 'error="invalid_token"' in expired.headers["WWW-Authenticate"]
    fresh = _token(
        api, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=CLIENT
    ).json()
    assert fresh["refresh_token"] == tokens["refresh_token"]
    assert fresh["access_token"] != tokens["access_token"]
    assert api.get("/models", headers=_bearer(fresh["access_token"])).status_code == 200
    assert api.server.oauth.refreshes == 1


def test_revoking_the_refresh_token_ends_its_access_tokens(api: Api) -> None:
    tokens = _sign_in(api)
    revoke = requests.post(
        f"{api.server.base_url}/api/oauth/revoke",
        data={"token": tokens["refresh_token"], "client_id": CLIENT},
        timeout=TIMEOUT,
    )
    assert revoke.status_code == 200
    assert api.get("/models", headers=_bearer(tokens["access_token"])).status_code == 401
    again = _token(
        api, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=CLIENT
    )
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")
    unknown = requests.post(
        f"{api.server.base_url}/api/oauth/revoke",
        data={"token": "mantyx_at_unknown", "client_id": CLIENT},
        timeout=TIMEOUT,
    )
    assert unknown.status_code == 200  # RFC 7009: unknown tokens are not an error


def test_confidential_clients_must_authenticate(make_api: Any) -> None:
    api = make_api(oauth_clients={"app": "s3cret"})
    tokens = api.server.oauth.issue_tokens(["runs:read"], client_id="app")
    form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    assert _token(api, **form, client_id="app").status_code == 401
    assert _token(api, **form, client_id="app", client_secret="nope").status_code == 401
    assert _token(api, **form, client_id="app", client_secret="s3cret").status_code == 200
    assert _token(api, auth=("app", "s3cret"), **form).status_code == 200


def test_userinfo_needs_the_identity_scope(api: Api) -> None:
    url = f"{api.server.base_url}/api/oauth/userinfo"
    plain = api.server.oauth.issue_tokens(["runs:read"])
    denied = requests.get(url, headers=_bearer(plain["access_token"]), timeout=TIMEOUT)
    assert denied.status_code == 403
    assert denied.json() == {"error": "insufficient_scope", "required": "mantyx.identity:read"}
    identity = api.server.oauth.issue_tokens(["mantyx.identity:read"])
    body = requests.get(url, headers=_bearer(identity["access_token"]), timeout=TIMEOUT).json()
    assert body["workspaces"] == [{"slug": "test-ws", "name": "test-ws"}]
    assert requests.get(url, timeout=TIMEOUT).status_code == 401


def test_rate_limit_buckets_send_headers_and_429(make_api: Any) -> None:
    api = make_api(rate_limits={"runs": 2}, rate_limit_window=60)
    for remaining in (1, 0):
        response = api.post("/agent-runs", {"systemPrompt": "s", "prompt": "p"})
        assert response.status_code == 202
        assert response.headers["X-RateLimit-Bucket"] == "runs"
        assert response.headers["X-RateLimit-Limit"] == "2"
        assert response.headers["X-RateLimit-Remaining"] == str(remaining)
        assert 0 < int(response.headers["X-RateLimit-Reset"]) <= 60
    refused = api.post("/agent-runs", {"systemPrompt": "s", "prompt": "p"})
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limit_exceeded"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    # Other buckets are not limited and say nothing.
    assert "X-RateLimit-Limit" not in api.get("/models").headers
    api.server.advance_clock(60)
    assert api.post("/agent-runs", {"systemPrompt": "s", "prompt": "p"}).status_code == 202
    assert api.server.rate_limiter.rejected == 1


def test_rate_limit_reset_as_epoch_and_per_credential(make_api: Any) -> None:
    api = make_api(rate_limits={"reads": 1}, rate_limit_reset="epoch")
    first = api.get("/models")
    assert int(first.headers["X-RateLimit-Reset"]) > 1_000_000_000
    assert api.get("/models").status_code == 429
    other = api.server.oauth.issue_tokens(["models:read"])
    assert api.get("/models", headers=_bearer(other["access_token"])).status_code == 200
