"""``python -m mantyx_sync.serve a2a|agent-api --agent module:attr --port N``.

Serves one agent on 127.0.0.1 with werkzeug's development server, for quick
trials. Not for production: mount the app in a real WSGI server instead.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..agent import Agent
from . import a2a_app, agent_api_app

__all__ = ["main"]

_DESCRIPTION = (
    "Serve a MANTYX agent on 127.0.0.1 for a quick trial, with werkzeug's development "
    "server. NOT FOR PRODUCTION: mount mantyx_sync.serve.a2a_app(...) / agent_api_app(...) "
    "in a real WSGI server (gunicorn, mod_wsgi) or in Flask/Django instead. "
    "Needs werkzeug: pip install 'mantyx-sync[serve]'."
)


def _apps() -> dict[str, Callable[[Agent], Any]]:
    apps: dict[str, Callable[[Agent], Any]] = {"a2a": a2a_app, "agent-api": agent_api_app}
    return apps


def load_agent(target: str) -> Agent:
    """Import ``module:attr`` and return the :class:`Agent` it names.

    :raises SystemExit: the target cannot be imported or is not an Agent.
    """
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise SystemExit(f"--agent must look like module:attr, got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"cannot import {module_name!r}: {exc}") from exc
    value: Any = module
    for part in attr.split("."):
        value = getattr(value, part, None)
        if value is None:
            raise SystemExit(f"{module_name!r} has no attribute {attr!r}")
    if callable(value) and not isinstance(value, Agent):
        value = value()
    if not isinstance(value, Agent):
        raise SystemExit(f"{target} is a {type(value).__name__}, not a mantyx_sync.Agent")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and serve until interrupted; returns the exit status."""
    apps = _apps()
    parser = argparse.ArgumentParser(prog="python -m mantyx_sync.serve", description=_DESCRIPTION)
    parser.add_argument("protocol", choices=sorted(apps), help="the protocol to speak")
    parser.add_argument(
        "--agent", required=True, help="module:attr of a mantyx_sync.Agent (or a factory)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    args = parser.parse_args(argv)
    try:
        from werkzeug.serving import run_simple
    except ImportError:  # pragma: no cover - depends on the environment
        print("this runner needs werkzeug: pip install 'mantyx-sync[serve]'", file=sys.stderr)
        return 2
    sys.path.insert(0, "")
    app = apps[args.protocol](load_agent(args.agent))
    print(
        f"serving {args.protocol} on http://127.0.0.1:{args.port}/ "
        "(development server, not for production; Ctrl-C to stop)",
        file=sys.stderr,
    )
    run_simple("127.0.0.1", args.port, app, threaded=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
