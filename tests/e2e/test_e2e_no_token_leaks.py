"""No OAuth token, authorization code or client secret leaks: one whole signed-in
session on the emulator, then every log record (all loggers, DEBUG, unredacted:
the test's own handler, not the package's redacting formatter), everything
written to the process's stdout/stderr, the repr of every value handed out and
the text of every error raised is scanned for every secret the server ever
issued."""

from __future__ import annotations

import logging
import urllib.request
from pathlib import Path

import pytest

import mantyx_sync
from mantyx_sync import AuthError, Client, OAuth, PermissionDeniedError, credentials
from mantyx_sync.testing import LocalMantyx

CLIENT_ID = "leak-check-app"
CLIENT_SECRET = "leak-check-client-secret-0123456789"
SCOPES = ["models:read", "runs:read", "runs:write", "sessions:read", "sessions:write",
          "mantyx.identity:read"]  # fmt: skip


def a_browser(url: str) -> None:
    """A browser (urllib: it logs nothing): open the sign-in URL, follow the redirect home."""
    with urllib.request.urlopen(url, timeout=10) as landing:
        assert landing.status == 200


def test_no_secret_in_logs_output_reprs_or_errors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    shown: list[object] = []
    errors: list[BaseException] = []
    with LocalMantyx(oauth_clients={CLIENT_ID: CLIENT_SECRET}, rate_limits={"runs": 100}) as server:
        oauth = OAuth(CLIENT_ID, CLIENT_SECRET, base_url=server.base_url)
        tokens = oauth.sign_in(SCOPES, open_browser=False, on_url=a_browser, timeout=10)
        credentials.save(tokens, directory=tmp_path)
        stored = credentials.load(directory=tmp_path)
        source = oauth.refresh_token_source(stored or tokens)
        client = Client(token_source=source)
        agent = mantyx_sync.Agent(client, system_prompt="s")
        result = agent.run("hello")
        with agent.session() as chat:
            chat.run("hi")
            shown.extend(chat.events())
        shown.extend(client.runs.list(include_total=True))
        shown.extend(client.sessions.list())
        try:
            client.feedback.create(result.run_id, "up")  # no feedback:write scope
        except PermissionDeniedError as exc:
            errors.append(exc)
        server.oauth.expire_access_tokens()
        client.models.list()  # 401, one refresh, the request again
        server.advance_clock(3600)
        client.models.list()  # due: refreshed before sending
        shown.extend([oauth.userinfo(), oauth.metadata(), source.tokens])
        shown.extend([tokens, stored, source, client, oauth, client.rate_limits, result])
        shown.extend(server.requests)
        old_refresh = source.refresh_token
        oauth.revoke(source)
        for call in (client.models.list, lambda: oauth.refresh(old_refresh)):
            try:
                call()
            except AuthError as exc:
                errors.append(exc)
        secrets = [*server.oauth.secrets(), CLIENT_SECRET]
    assert source.refresh_count == 2 and len(errors) == 3
    assert len(secrets) >= 6  # the code, three access tokens, a refresh token, the secret

    out, err = capfd.readouterr()
    texts = {
        "log": "\n".join(
            f"{r.name} {r.levelname} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records
        ),
        "stdout": out,
        "stderr": err,
        **{f"repr #{i}": repr(value) for i, value in enumerate(shown)},
        **{f"str #{i}": str(value) for i, value in enumerate(shown)},
        **{f"error #{i}": f"{exc!s} {exc!r} {vars(exc)!r}" for i, exc in enumerate(errors)},
    }
    leaks = [
        (where, secret[:12] + "…")
        for secret in secrets
        for where, text in texts.items()
        if secret in text
    ]
    assert leaks == []
    # The scan saw real traffic: requests, a refresh after the 401, the refusals.
    assert "refreshing it and trying once more" in texts["log"]
    assert any("invalid_grant" in text for text in texts.values())
