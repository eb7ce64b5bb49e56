"""``python -m mantyx_sync.testing serve``: run the local MANTYX emulator until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from .server import LocalMantyx

__all__ = ["main"]

_DEFAULT_KEY = "mantyx_test_key"


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and serve; returns the process exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m mantyx_sync.testing", description="Run a local MANTYX agent-runs emulator."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the emulator until Ctrl-C")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    serve.add_argument(
        "--api-key", default=None, help=f"the API key to accept (default {_DEFAULT_KEY})"
    )
    serve.add_argument("--workspace", default="test-ws")
    args = parser.parse_args(argv)

    server = LocalMantyx(
        host=args.host,
        port=args.port,
        api_key=args.api_key or _DEFAULT_KEY,
        workspace=args.workspace,
    )
    server.start()
    out = sys.stdout
    out.write(f"MANTYX emulator listening on {server.base_url}\n")
    out.write(f"workspace: {server.workspace}\n")
    if args.api_key is None:
        # Only the built-in test key is ever shown; a key the user chose stays private.
        out.write(f"api key: {server.api_key}\n")
    out.write("oauth client id: mantyx-test-client (sign-ins are approved automatically)\n")
    out.write("Press Ctrl-C to stop.\n")
    out.flush()

    # SIGTERM stops the server as Ctrl-C does (a wait on a lock is interruptible).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while True:
            threading.Event().wait(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
