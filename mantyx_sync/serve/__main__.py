"""``python -m mantyx_sync.serve a2a|agent-api --agent module:attr --port N``.

Serves one agent (on 127.0.0.1 unless ``--host``) with werkzeug's development
server, for quick trials. Not for production: mount the app in a real WSGI
server instead. Without a token it warns at start, and refuses a host other
than loopback unless ``--insecure``. It serves at most ``--max-connections``
requests at once and drops a connection silent for ``--idle-timeout`` seconds.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..agent import Agent
from ..cli._exit import UsageError
from ..cli._tools import import_target
from ..errors import SpecError
from . import a2a_app, agent_api_app, bearer_token
from ._wsgi import ServedApp

__all__ = ["main"]

_DESCRIPTION = (
    "Serve a MANTYX agent on 127.0.0.1 for a quick trial, with werkzeug's development "
    "server. NOT FOR PRODUCTION: mount mantyx_sync.serve.a2a_app(...) / agent_api_app(...) "
    "in a real WSGI server (gunicorn, mod_wsgi) or in Flask/Django instead. "
    "Needs werkzeug: pip install 'mantyx-sync[serve]'."
)
TOKEN_ENV = "MANTYX_SERVE_TOKEN"
MAX_CONNECTIONS = 32
IDLE_TIMEOUT_S = 30.0
_APPS: dict[str, Callable[..., Any]] = {"a2a": a2a_app, "agent-api": agent_api_app}


def _is_loopback(host: str) -> bool:
    host = host.strip("[]")
    try:
        return host.lower() == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        value = kind(text)
        if not value > 0:
            raise ValueError(text)
        return value

    parse.__name__ = f"positive {kind.__name__}"  # how argparse names a bad value
    return parse


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def load_agent(target: str) -> Agent:
    """The :class:`Agent` ``module:attr`` names (or a factory of one there returns).

    :raises UsageError: the target cannot be imported or is not an Agent.
    """
    value = import_target(target, "--agent", "module:attr, e.g. myapp:agent")
    if callable(value) and not isinstance(value, Agent):
        value = value()
    if not isinstance(value, Agent):
        raise UsageError(f"--agent {target}: a {type(value).__name__}, not a mantyx_sync.Agent")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and serve until interrupted; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m mantyx_sync.serve", description=_DESCRIPTION)
    parser.add_argument("protocol", choices=sorted(_APPS), help="the protocol to speak")
    parser.add_argument(
        "--agent", required=True, help="module:attr of a mantyx_sync.Agent (or a factory)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1); a non-loopback one needs a token",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV) or None,
        help=f"bearer token callers must send (default: ${TOKEN_ENV}; prefer the variable, "
        "as other users of this machine can read a command line)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name to answer to besides loopback names and --host (repeatable)",
    )
    limits = (
        ("--max-body-bytes", int, ServedApp.MAX_BODY_BYTES, "N", "largest request body accepted"),
        ("--max-connections", int, MAX_CONNECTIONS, "N", "requests served at once, a thread each"),
        ("--idle-timeout", float, IDLE_TIMEOUT_S, "SECONDS", "close a connection silent this long"),
    )
    for option, kind, default, metavar, text in limits:
        parser.add_argument(
            option,
            type=_positive(kind),
            default=default,
            metavar=metavar,
            help=f"{text} (default %(default)s)",
        )
    parser.add_argument(
        "--public-url",
        default=None,
        metavar="URL",
        help="a2a: the URL clients reach the agent at (e.g. behind a proxy), which its card "
        "advertises; its host is answered to",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="serve a host other than loopback without a token (anyone reaching it can "
        "run the agent, and its local tools, on your account)",
    )
    args = parser.parse_args(argv)
    url = _url(args.host, args.port)
    if not args.token:
        if not (_is_loopback(args.host) or args.insecure):
            parser.error(
                f"refusing to serve {url} without authentication: anyone who can reach it "
                f"could run this agent, and its local tools, on your account. Set {TOKEN_ENV} "
                "(or pass --token), or pass --insecure if that is really what you want."
            )
        print(
            f"WARNING: no authentication: any program that can reach {url} can run this "
            f"agent, and its local tools, on your account; set {TOKEN_ENV} (or pass --token) "
            "to require a bearer token.",
            file=sys.stderr,
        )
    try:
        from ._devserver import BoundedServer  # werkzeug: the [serve] extra
    except ImportError:  # pragma: no cover - depends on the environment
        print("this runner needs werkzeug: pip install 'mantyx-sync[serve]'", file=sys.stderr)
        return 2
    try:
        agent = load_agent(args.agent)
    except UsageError as exc:  # one line, exit 2, as the mantyx-sync command says it
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    options: dict[str, Any] = {}
    if args.public_url is not None:
        if args.protocol != "a2a":
            parser.error("--public-url is for the a2a protocol")
        options["public_url"] = args.public_url
    try:
        app = _APPS[args.protocol](
            agent,
            authenticate=bearer_token(args.token) if args.token else None,
            # The address it listens on is a name its callers use; a wildcard
            # (0.0.0.0, ::) lets in any of the machine's addresses, with the token.
            allowed_hosts=[args.host.strip("[]"), *args.allowed_host],
            max_body_bytes=args.max_body_bytes,
            **options,
        )
    except SpecError as exc:  # an --allowed-host that is no host name, a bad --public-url
        message = str(exc).replace("allowed_hosts", "--allowed-host")
        parser.error(message.replace("public_url", "--public-url"))
    print(
        f"serving {args.protocol} on {url} "
        "(development server, not for production; Ctrl-C to stop)",
        file=sys.stderr,
    )
    server = BoundedServer(
        args.host.strip("[]"),
        args.port,
        app,
        max_connections=args.max_connections,
        idle_timeout=args.idle_timeout,
    )
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
