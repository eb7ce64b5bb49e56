"""Sign in with OAuth, stay signed in, and watch the rate-limit budget.

Against MANTYX when MANTYX_OAUTH_CLIENT_ID is set (and MANTYX_OAUTH_CLIENT_SECRET
for a confidential app): a browser opens for the sign-in, the tokens are kept
with ``mantyx_sync.credentials`` so the next run signs in silently.

Otherwise against the bundled local emulator (``mantyx_sync.testing``), which
approves sign-ins automatically; this script then plays the browser itself, so
it runs offline with no account:

    python examples/sign_in.py
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time

import requests

import mantyx_sync
from mantyx_sync import credentials

SCOPES = ["models:read", "runs:read", "runs:write", "mantyx.identity:read"]


def play_the_browser(url: str) -> None:
    """What a person's browser does with the sign-in URL on the emulator: open it
    (approved at once) and follow the redirect back to the waiting script."""
    approval = requests.get(url, allow_redirects=False, timeout=10)
    requests.get(approval.headers["Location"], timeout=10)


def main() -> int:
    with contextlib.ExitStack() as stack:
        client_id = os.environ.get("MANTYX_OAUTH_CLIENT_ID")
        if client_id:
            oauth = mantyx_sync.OAuth(client_id, os.environ.get("MANTYX_OAUTH_CLIENT_SECRET"))
            store: str | None = None  # the user's config directory
            on_url = None  # show the URL and open a browser
            emulator = None
        else:
            from mantyx_sync.testing import LocalMantyx

            # 3 run starts per 2-second window (the real server: 120 per minute).
            emulator = stack.enter_context(
                LocalMantyx(rate_limits={"runs": 3}, rate_limit_window=2.0)
            )
            print(
                "MANTYX_OAUTH_CLIENT_ID is not set: using the local MANTYX emulator at "
                f"{emulator.base_url}\n"
            )
            oauth = mantyx_sync.OAuth("mantyx-test-client", base_url=emulator.base_url)
            store = stack.enter_context(tempfile.TemporaryDirectory())
            on_url = play_the_browser

        tokens = credentials.load(directory=store)
        if tokens is None:
            tokens = oauth.sign_in(SCOPES, open_browser=on_url is None, on_url=on_url)
            path = credentials.save(tokens, directory=store)
            print(f"Signed in with scopes {' '.join(tokens.scopes)}; tokens saved to {path}")
        print(f"The token set shows no secret: {tokens!r}")

        source = oauth.refresh_token_source(tokens)
        client = stack.enter_context(mantyx_sync.Client(token_source=source))
        print(f"Workspace (found through userinfo): {client.config.workspace}")

        agent = mantyx_sync.Agent(client, system_prompt="You are terse.")
        for i in range(4):
            started = time.monotonic()
            agent.run(f"Say hello #{i + 1}")
            runs = client.rate_limits.get("runs")
            if runs is None:
                print(f"run {i + 1}: the server sent no rate-limit headers")
                continue
            waited = time.monotonic() - started
            note = f" (waited {waited:.1f}s for the window to refill)" if waited > 0.5 else ""
            print(f"run {i + 1}: {runs.remaining}/{runs.limit} run starts left{note}")

        if emulator is not None:
            emulator.advance_clock(3600)  # an hour later: the access token has expired
            client.models.list()
            print(f"An hour later the token was refreshed {source.refresh_count} time(s)")
            oauth.revoke(source)
            print("Signed out: the refresh token is revoked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
