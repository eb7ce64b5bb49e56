"""The sign-in's browser side: PKCE, the URL shown to a person, and the one-shot
loopback listener that takes the redirect (RFC 8252 §7.3)."""

from __future__ import annotations

import base64
import concurrent.futures
import hashlib
import html
import http.server
import logging
import secrets
import socketserver
import sys
import threading
import webbrowser
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..errors import SignInError

__all__ = ["LoopbackRedirect", "open_browser", "pkce_pair", "show_url"]

log = logging.getLogger(__name__)

_CALLBACK_PATH = "/callback"


def pkce_pair() -> tuple[str, str]:
    """``(verifier, S256 challenge)`` (RFC 7636 §4.1-4.2)."""
    verifier = secrets.token_urlsafe(64)  # 86 characters of [A-Za-z0-9_-]
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def show_url(url: str, browser_opened: bool) -> None:
    # The one place the library writes to the terminal: an interactive sign-in
    # must show its URL to a person even when logging is off (notebooks show
    # stderr). Pass on_url= to show it some other way.
    if browser_opened:
        lead = "A browser window should open to sign in to MANTYX. If it does not, open:"
    else:
        lead = "To sign in to MANTYX, open this URL in a browser:"
    sys.stderr.write(f"{lead}\n\n    {url}\n\n")
    sys.stderr.flush()


def open_browser(url: str) -> bool:
    try:
        return bool(webbrowser.open(url, new=1))
    except Exception as exc:  # webbrowser raises anything its launchers raise
        log.debug("could not open a browser: %s", type(exc).__name__)
        return False


_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>MANTYX sign-in</title></head>"
    "<body style='font-family:sans-serif;margin:3em'><h1>{title}</h1><p>{text}</p></body></html>"
)


def _handler_for(listener: LoopbackRedirect) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        # A connection that never sends its request (a browser's speculative
        # connect) is dropped instead of holding a thread until the sign-in ends.
        timeout = 30

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path != _CALLBACK_PATH or not ({"code", "error"} & set(query)):
                self._page(404, "Not found", "This address only takes the sign-in redirect.")
                return
            # Bytes: compare_digest refuses str with non-ASCII characters.
            sent_state = query.get("state", "").encode("utf-8")
            if not secrets.compare_digest(sent_state, listener.state.encode("ascii")):
                listener.refused.append(self.client_address[0])
                log.warning("sign-in: ignored a redirect with the wrong state (not this sign-in's)")
                self._page(400, "Sign-in failed", "The request did not match this sign-in.")
                return
            try:
                if "error" in query:
                    refusal, detail = query["error"], query.get("error_description")
                    said = f"{refusal} ({detail})" if detail else refusal
                    error = SignInError(f"the sign-in was refused: {said}", code=refusal)
                    listener.outcome.set_exception(error)
                    page = (400, "Sign-in refused", f"The server said: {refusal}.")
                else:
                    listener.outcome.set_result(query["code"])
                    page = (200, "Signed in to MANTYX", "You can close this tab.")
            except concurrent.futures.InvalidStateError:  # the first redirect settled it
                page = (409, "Already done", "This sign-in has already finished.")
            self._page(*page)

        def _page(self, status: int, title: str, text: str) -> None:
            body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            # The request line holds the authorization code: never log it.
            pass

    return Handler


class _Listener(http.server.ThreadingHTTPServer):
    """One thread per connection (daemon), so a stalled connection cannot hold
    up the redirect; a failing request is logged, never printed to stderr."""

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks up the host's FQDN, which can stall for
        # seconds on a machine with slow DNS; the name is known.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        log.debug("the sign-in listener failed on a request: %s", type(error).__name__)


class LoopbackRedirect:
    """A one-shot HTTP listener on ``127.0.0.1`` for the authorization redirect.

    Use it as a context manager: the listener serves on a daemon thread until
    the block ends. :meth:`wait` returns the code once the redirect came with
    the right ``state``; requests with another ``state`` are refused (400)
    without ending the wait.
    """

    def __init__(self, port: int = 0) -> None:
        #: The ``state`` value the redirect must carry back.
        self.state = secrets.token_urlsafe(32)
        #: The code or the server's refusal, from the first redirect with the right state.
        self.outcome: concurrent.futures.Future[str] = concurrent.futures.Future()
        # Callbacks with a wrong or missing state (their client addresses):
        # answered 400 and ignored, so a forged request cannot end the sign-in.
        self.refused: list[str] = []
        try:
            self._server = _Listener(("127.0.0.1", port), _handler_for(self))
        except OSError as exc:  # e.g. a fixed redirect_port another program holds
            raise SignInError(
                f"cannot listen on 127.0.0.1:{port} for the sign-in redirect "
                f"({exc.strerror or type(exc).__name__}): free it or pass another redirect_port",
                code="listener_unavailable",
            ) from exc
        self.redirect_uri = f"http://127.0.0.1:{self._server.server_address[1]}{_CALLBACK_PATH}"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="mantyx-oauth-redirect",
            daemon=True,
        )

    def __enter__(self) -> LoopbackRedirect:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def wait(self, timeout: float) -> str:
        """The authorization code, once the redirect with the right ``state`` arrives.

        :raises SignInError: ``timeout`` (``state_mismatch`` when only requests
            with the wrong state came) or the server's error.
        """
        if concurrent.futures.wait([self.outcome], timeout).done:
            return self.outcome.result()
        forged = len(self.refused)
        if forged:
            raise SignInError(
                f"no sign-in redirect within {timeout:g}s; {forged} request(s) with the "
                "wrong state (not started by this sign-in) were refused: run sign_in() again",
                code="state_mismatch",
            )
        raise SignInError(
            f"no sign-in redirect within {timeout:g}s: run sign_in() again", code="timeout"
        )
