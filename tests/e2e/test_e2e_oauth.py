"""OAuth end to end on the emulator: PKCE sign-in, refreshing token sources under
concurrency, scope errors, revocation, and no token anywhere it should not be."""

from __future__ import annotations

import io
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest
import requests

import mantyx_sync
from mantyx_sync import (
    AuthError,
    Client,
    ConfigurationError,
    OAuth,
    PermissionDeniedError,
    SignInError,
    TokenSet,
)
from mantyx_sync.oauth import RefreshingTokenSource
from mantyx_sync.testing import LocalMantyx

CLIENT_ID = "mantyx-test-client"
SCOPES = ["models:read", "runs:read", "runs:write", "mantyx.identity:read"]
SYSTEM = "You are a test agent."


def follow_redirect(url: str) -> None:
    """What the browser does: ask the server, then go where it redirects (our listener)."""
    answer = requests.get(url, allow_redirects=False, timeout=5)
    assert answer.status_code == 302, answer.text
    landing = requests.get(answer.headers["Location"], allow_redirects=False, timeout=5)
    assert landing.status_code in (200, 400)


def tamper_state(url: str) -> None:
    answer = requests.get(url, allow_redirects=False, timeout=5)
    parts = urlsplit(answer.headers["Location"])
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    query["state"] = "forged"
    requests.get(urlunsplit(parts._replace(query=urlencode(query))), timeout=5)


@pytest.fixture
def srv() -> Iterator[LocalMantyx]:
    with LocalMantyx() as server:
        yield server


@pytest.fixture
def oauth(srv: LocalMantyx) -> OAuth:
    return OAuth(CLIENT_ID, base_url=srv.base_url)


def _sign_in(oauth: OAuth, scopes: list[str] = SCOPES) -> TokenSet:
    return oauth.sign_in(scopes, open_browser=False, on_url=follow_redirect, timeout=10)


def test_pkce_sign_in_then_a_client_on_the_token_source(srv: LocalMantyx, oauth: OAuth) -> None:
    tokens = _sign_in(oauth)
    assert tokens.access_token.startswith("mantyx_at_") and tokens.refresh_token
    assert set(tokens.scopes) == set(SCOPES)
    assert oauth.metadata().discovered
    source = oauth.refresh_token_source(tokens)
    # base_url from the source; the workspace is the only one the token reaches.
    with Client(token_source=source) as client:
        assert client.config.workspace == srv.workspace
        assert client.config.base_url == srv.base_url
        assert client.models.list().default_model_id
        result = mantyx_sync.Agent(client, system_prompt=SYSTEM).run("hi")
        assert result.text
    assert source.refresh_count == 0  # the signed-in access token was still good
    authorize = next(r for r in srv.requests if r.path == "/api/oauth/authorize")
    assert authorize.query["code_challenge_method"] == "S256"
    assert authorize.query["redirect_uri"].startswith("http://127.0.0.1:")
    assert authorize.query["state"] and len(authorize.query["code_challenge"]) == 43


def test_default_path_opens_the_browser_and_shows_the_url(
    oauth: OAuth, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    opened: list[str] = []

    def browser(url: str, new: int = 0) -> bool:
        opened.append(url)
        follow_redirect(url)
        return True

    monkeypatch.setattr("webbrowser.open", browser)
    tokens = oauth.sign_in(SCOPES, timeout=10)
    assert tokens.access_token
    err = capsys.readouterr().err
    assert "browser window should open" in err and opened[0] in err


def test_without_a_browser_the_url_is_shown_and_the_wait_times_out(
    oauth: OAuth, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SignInError) as info:
        oauth.sign_in(SCOPES, open_browser=False, timeout=0.3)
    assert info.value.code == "timeout"
    err = capsys.readouterr().err
    assert "To sign in to MANTYX, open this URL in a browser:" in err
    assert "/api/oauth/authorize?" in err and "code_challenge=" in err


class PersonAtTerminal(io.StringIO):
    """A stderr read by a person: a sign-in URL written to it is opened in their browser."""

    def __init__(self) -> None:
        super().__init__()
        self.visits: list[threading.Thread] = []

    def write(self, text: str) -> int:
        found = re.search(r"http://\S+/api/oauth/authorize\?\S+", text)
        if found:
            visit = threading.Thread(target=follow_redirect, args=(found.group(0),))
            visit.start()
            self.visits.append(visit)
        return super().write(text)


def test_when_no_browser_opens_the_url_on_stderr_completes_the_sign_in(
    oauth: OAuth, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webbrowser.open", lambda url, new=0: False)  # e.g. a headless box
    terminal = PersonAtTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    tokens = oauth.sign_in(SCOPES, timeout=10)
    for visit in terminal.visits:
        visit.join(10)
    assert tokens.access_token and len(terminal.visits) == 1
    assert terminal.getvalue().startswith("To sign in to MANTYX, open this URL in a browser:")


def test_a_timed_out_sign_in_leaves_no_listener_behind(
    oauth: OAuth, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SignInError, match=r"no sign-in redirect within 0\.2s"):
        oauth.sign_in(SCOPES, open_browser=False, timeout=0.2)
    url = capsys.readouterr().err.split()[-1]
    redirect_uri = parse_qs(urlsplit(url).query)["redirect_uri"][0]
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{redirect_uri}?code=late&state=x", timeout=5)
    assert not [t for t in threading.enumerate() if t.name == "mantyx-oauth-redirect"]


def test_a_denied_sign_in_and_a_forged_state_fail_clearly(srv: LocalMantyx, oauth: OAuth) -> None:
    srv.oauth.deny_next()
    with pytest.raises(SignInError) as denied:
        _sign_in(oauth)
    assert denied.value.code == "access_denied"
    # A forged redirect alone: ignored, so the wait ends without a genuine one.
    with pytest.raises(SignInError, match="1 request\\(s\\) with the wrong state") as forged:
        oauth.sign_in(SCOPES, open_browser=False, on_url=tamper_state, timeout=0.5)
    assert forged.value.code == "state_mismatch"
    assert srv.oauth.code_exchanges == 0


# Regression (issue #20 item 5): one forged callback aborted the real sign-in,
# and the genuine redirect then got 409.
def test_forged_callbacks_are_refused_and_the_genuine_redirect_completes(
    srv: LocalMantyx, oauth: OAuth, caplog: pytest.LogCaptureFixture
) -> None:
    pages: list[int] = []

    def forge_then_follow(url: str) -> None:
        redirect_uri = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        for params in (
            {"code": "forged", "state": "forged"},
            {"code": "forged"},  # no state at all
            {"error": "access_denied", "state": "forged"},
        ):
            pages.append(requests.get(redirect_uri, params=params, timeout=5).status_code)
        answer = requests.get(url, allow_redirects=False, timeout=5)
        landing = requests.get(answer.headers["Location"], allow_redirects=False, timeout=5)
        pages.append(landing.status_code)

    tokens = oauth.sign_in(SCOPES, open_browser=False, on_url=forge_then_follow, timeout=10)
    assert tokens.access_token and pages == [400, 400, 400, 200]
    assert srv.oauth.code_exchanges == 1
    assert caplog.text.count("ignored a redirect with the wrong state") == 3


def test_a_non_ascii_state_is_a_mismatch_not_a_crash(
    oauth: OAuth, capsys: pytest.CaptureFixture[str]
) -> None:
    def forge(url: str) -> None:
        redirect_uri = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        page = requests.get(redirect_uri, params={"code": "x", "state": "état"}, timeout=5)
        assert page.status_code == 400

    with pytest.raises(SignInError) as info:
        oauth.sign_in(SCOPES, open_browser=False, on_url=forge, timeout=0.5)
    assert info.value.code == "state_mismatch"
    assert capsys.readouterr().err == "", "no traceback from the listener on stderr"


def test_a_stalled_connection_does_not_hold_up_the_redirect(oauth: OAuth) -> None:
    stalled: list[socket.socket] = []

    def preconnect_then_follow(url: str) -> None:
        # A browser's speculative connection to the listener that never sends a request.
        redirect_uri = urlsplit(parse_qs(urlsplit(url).query)["redirect_uri"][0])
        assert redirect_uri.hostname is not None and redirect_uri.port is not None
        stalled.append(socket.create_connection((redirect_uri.hostname, redirect_uri.port)))
        follow_redirect(url)

    try:
        tokens = oauth.sign_in(
            SCOPES, open_browser=False, on_url=preconnect_then_follow, timeout=10
        )
    finally:
        for sock in stalled:
            sock.close()
    assert tokens.access_token and len(stalled) == 1


def test_a_redirect_port_in_use_is_a_clear_sign_in_error(srv: LocalMantyx, oauth: OAuth) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SignInError, match=f"127.0.0.1:{port}") as info:
            oauth.sign_in(SCOPES, open_browser=False, redirect_port=port, on_url=follow_redirect)
    assert info.value.code == "listener_unavailable"
    assert not [r for r in srv.requests if r.path == "/api/oauth/authorize"]


def test_fallback_endpoints_without_metadata() -> None:
    with LocalMantyx(oauth_metadata=False) as server:
        oauth = OAuth(CLIENT_ID, base_url=server.base_url)
        tokens = _sign_in(oauth)
        assert not oauth.metadata().discovered
        assert oauth.metadata().token_endpoint == f"{server.base_url}/api/oauth/token"
        assert oauth.userinfo(tokens).workspaces == (server.workspace,)


def _hammer(client: Client, threads: int = 50) -> list[BaseException]:
    barrier = threading.Barrier(threads, timeout=10)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            barrier.wait()
            client.models.list()
        except BaseException as exc:  # collected for the assertion
            errors.append(exc)

    workers = [threading.Thread(target=call) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    return errors


def test_fifty_threads_on_a_due_token_cause_one_refresh(srv: LocalMantyx, oauth: OAuth) -> None:
    now = [time.time()]
    source = oauth.refresh_token_source(_sign_in(oauth), clock=lambda: now[0])
    with Client(token_source=source) as client:
        client.models.list()
        assert srv.oauth.refreshes == 0
        now[0] += 3600 - 30  # inside the 60 s before expiry: due on this side
        srv.advance_clock(3600 - 30)
        assert _hammer(client) == []
    assert srv.oauth.refreshes == 1 and source.refresh_count == 1


def test_fifty_threads_on_a_refused_token_cause_one_refresh(srv: LocalMantyx, oauth: OAuth) -> None:
    source = oauth.refresh_token_source(_sign_in(oauth))
    with Client(token_source=source) as client:
        client.models.list()
        srv.oauth.expire_access_tokens()  # the client still believes it is good: 401s
        assert _hammer(client) == []
    assert srv.oauth.refreshes == 1 and source.refresh_count == 1
    statuses = [r.status for r in srv.requests if r.path.endswith("/models")]
    assert statuses.count(401) >= 1 and statuses.count(200) == 51


def test_fifty_threads_on_a_revoked_refresh_token_ask_the_server_once(
    srv: LocalMantyx, oauth: OAuth
) -> None:
    source = oauth.refresh_token_source(_sign_in(oauth))
    with Client(token_source=source) as client:
        client.models.list()
        oauth.revoke(source)  # signed out elsewhere: access and refresh token both dead
        srv.clear_requests()
        errors = _hammer(client)
        assert len(errors) == 50 and all(isinstance(e, AuthError) for e in errors)
        assert {getattr(e, "code", None) for e in errors} == {"invalid_grant"}
        dead = source.tokens
        assert dead is not None
        with pytest.raises(AuthError, match="invalid or revoked"):
            source.refresh(dead.access_token)
    refreshes = [r.status for r in srv.requests if r.path == "/api/oauth/token"]
    assert refreshes == [400], "the refusal is final: one refresh attempt for every caller"
    assert source.refresh_count == 0


def test_refresh_keeps_a_non_rotating_refresh_token_and_follows_a_rotating_one(
    srv: LocalMantyx, oauth: OAuth
) -> None:
    tokens = _sign_in(oauth)
    source = oauth.refresh_token_source(tokens.refresh_token or "")
    first = source.token()  # no access token yet: refresh
    assert source.refresh_token == tokens.refresh_token and first != tokens.access_token
    srv.oauth.rotate_refresh_tokens = True
    srv.oauth.expire_access_tokens()
    source.refresh(first)
    assert source.refresh_token != tokens.refresh_token
    assert srv.oauth.is_active(source.refresh_token)


def test_scope_errors_name_the_missing_scope(srv: LocalMantyx, oauth: OAuth) -> None:
    tokens = _sign_in(oauth, ["models:read", "runs:read"])
    client = Client(token_source=oauth.refresh_token_source(tokens), workspace=srv.workspace)
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM)
    with pytest.raises(PermissionDeniedError) as body_form:
        agent.run("hi")
    assert body_form.value.required_scopes == ["runs:write"]
    assert "runs:write" in str(body_form.value)
    # A server that names the scope only in the WWW-Authenticate challenge.
    srv.fail_next(
        "GET",
        "/models$",
        403,
        json={"error": "insufficient_scope"},
        headers={"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="models:read"'},
    )
    with pytest.raises(PermissionDeniedError) as header_form:
        client.models.list()
    assert header_form.value.required_scopes == ["models:read"]
    assert header_form.value.code == "insufficient_scope"


def test_workspace_discovery_needs_the_identity_scope(srv: LocalMantyx, oauth: OAuth) -> None:
    tokens = _sign_in(oauth, ["models:read"])
    with pytest.raises(ConfigurationError, match="pass workspace=") as info:
        Client(token_source=oauth.refresh_token_source(tokens))
    assert isinstance(info.value.__cause__, PermissionDeniedError)
    assert info.value.__cause__.required_scopes == ["mantyx.identity:read"]
    srv.oauth.workspaces = ["acme", "beta"]
    rich = _sign_in(oauth)
    with pytest.raises(ConfigurationError, match=r"2 workspaces \(acme, beta\)"):
        Client(token_source=oauth.refresh_token_source(rich))
    assert oauth.userinfo().workspaces == ("acme", "beta")


def test_revoked_tokens_end_in_a_clear_auth_error(srv: LocalMantyx, oauth: OAuth) -> None:
    tokens = _sign_in(oauth)
    source = oauth.refresh_token_source(tokens)
    client = Client(token_source=source)
    oauth.revoke(source)
    assert not srv.oauth.is_active(tokens.access_token)
    with pytest.raises(AuthError) as info:
        client.models.list()
    assert info.value.code == "invalid_grant"
    oauth.revoke("mantyx_at_never_issued")  # unknown tokens are fine (RFC 7009)


def test_confidential_client() -> None:
    with LocalMantyx(oauth_clients={"app": "s3cret-value"}) as server:
        good = OAuth("app", "s3cret-value", base_url=server.base_url)
        tokens = _sign_in(good)
        assert good.refresh(tokens.refresh_token or "").access_token != tokens.access_token
        bad = OAuth("app", "wrong-secret", base_url=server.base_url)
        with pytest.raises(AuthError) as info:
            bad.refresh(tokens.refresh_token or "")
        assert info.value.code == "invalid_client"
        assert "s3cret" not in repr(good) and "wrong-secret" not in repr(bad)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda o: o.sign_in([]), "non-empty list of scope"),
        (lambda o: o.sign_in(["runs read"]), "bad: \\['runs read'\\]"),
        (lambda o: o.sign_in(["runs:read"], redirect_port=70000), "redirect_port"),
        (lambda o: o.sign_in(["runs:read"], timeout="5"), "timeout must be a number"),
        (lambda o: o.refresh_token_source(TokenSet(access_token="a" * 10)), "no refresh token"),
        (lambda o: o.refresh(""), "refresh_token"),
        (lambda o: o.userinfo(), "sign in first"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_sent(
    srv: LocalMantyx, call: Callable[[OAuth], object], message: str
) -> None:
    oauth = OAuth(CLIENT_ID, base_url=srv.base_url)
    with pytest.raises(ConfigurationError, match=message):
        call(oauth)
    assert srv.requests == []
    with pytest.raises(ConfigurationError, match="client_id"):
        OAuth("", base_url=srv.base_url)


def test_no_token_in_logs_reprs_errors_or_output(
    srv: LocalMantyx,
    oauth: OAuth,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    tokens = _sign_in(oauth)
    source = oauth.refresh_token_source(tokens)
    client = Client(token_source=source)
    client.models.list()
    srv.oauth.expire_access_tokens()
    client.models.list()  # 401, refresh, retry
    refreshed = source.tokens
    assert refreshed is not None
    oauth.revoke(source)
    with pytest.raises(AuthError) as failure:
        client.models.list()
    texts = [
        caplog.text,
        repr(tokens),
        str(tokens),
        repr(refreshed),
        repr(source),
        repr(client),
        repr(oauth),
        str(failure.value),
        repr(failure.value),
        *capsys.readouterr(),
    ]
    secrets = [tokens.access_token, tokens.refresh_token, refreshed.access_token]
    for secret in secrets:
        assert secret and len(secret) > 20
        for text in texts:
            assert secret not in text
    assert "refreshing it and trying once more" in caplog.text  # the logs were captured
    assert "***" in repr(tokens)
    assert isinstance(source, RefreshingTokenSource)


def test_a_short_lived_token_is_not_refreshed_on_every_call(srv: LocalMantyx) -> None:
    # Lifetimes under two minutes are due halfway, not 60 s before expiry.
    srv.oauth.access_token_ttl = 30
    oauth = OAuth(CLIENT_ID, base_url=srv.base_url)
    source = oauth.refresh_token_source(_sign_in(oauth))
    with Client(token_source=source) as client:
        for _ in range(3):
            client.models.list()
    assert source.refresh_count == 0 and srv.oauth.refreshes == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_mid_refresh_still_refreshes(srv: LocalMantyx, oauth: OAuth) -> None:
    source = oauth.refresh_token_source(_sign_in(oauth))
    client = Client(token_source=source)
    client.models.list()  # pools hold live connections in the parent
    srv.oauth.expire_access_tokens()
    with source._lock:  # as if another thread were refreshing when the fork came
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                signal.alarm(20)  # never let a broken child hang the suite
                client.models.list()
                code = 0 if source.refresh_count == 1 else 2
            except BaseException as exc:
                print(f"child failed: {exc!r}", file=sys.stderr)
            finally:
                os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    client.models.list()  # and the parent refreshes on its own
    assert source.refresh_count == 1 and srv.oauth.refreshes == 2
