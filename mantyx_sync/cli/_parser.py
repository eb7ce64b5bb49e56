"""The ``mantyx-sync`` command line: every command and option, nothing else."""

from __future__ import annotations

import argparse
from typing import Final, NoReturn

from .._version import __version__

__all__ = ["SPEC_OPTIONS", "build_parser"]

RUN_STATUSES: Final = ("queued", "running", "succeeded", "failed", "cancelled")
"""What ``runs --status`` takes: the statuses a run goes through."""

SPEC_OPTIONS: Final = {
    "agent_id": "--agent-id",
    "system_prompt": "--system-prompt",
    "model_id": "--model",
    "reasoning_level": "--reasoning",
}
"""The agent options, by the spec keyword each sets (its ``dest``)."""

_EPILOG = """\
Configuration comes from the environment: MANTYX_API_KEY, MANTYX_WORKSPACE and
MANTYX_BASE_URL (try `mantyx-sync emulator` for a local MANTYX).

exit codes: 0 success, 1 the run failed, 2 usage or spec error,
3 authentication or permission, 4 transport or stream failure,
5 cancel: the run had already ended, 130 interrupted.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to read more), like any other."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _agent_options(parser: argparse.ArgumentParser) -> None:
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--agent-id", help="run a persisted workspace agent")
    who.add_argument(
        "--system-prompt",
        help="the agent's system prompt (default: 'You are a helpful assistant.')",
    )
    parser.add_argument("--model", dest="model_id", metavar="MODEL", help="model id (see `models`)")
    for flag, metavar, what in (
        ("--tool", "MODULE:FUNCTION", "a typed Python function the model may call"),
        ("--mcp", "CMD", "a stdio MCP server to start, e.g. --mcp 'npx -y @scope/server'"),
        ("--mcp-url", "URL", "a Streamable HTTP MCP server"),
    ):
        parser.add_argument(
            flag, action="append", default=[], metavar=metavar, help=f"{what} (repeatable)"
        )
    parser.add_argument(
        "--session", metavar="ID", help="continue this session (its history is on the server)"
    )
    parser.add_argument(
        "--reasoning",
        dest="reasoning_level",
        choices=("low", "medium", "high"),
        help="reasoning effort",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``mantyx-sync``."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of an error",
    )
    parser = _Parser(
        prog="mantyx-sync",
        description="Run MANTYX agents from the terminal.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"mantyx-sync {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run", parents=[common], help="run an agent once and stream its answer"
    )
    run.add_argument("prompt", nargs="?", help="the prompt (default: read from stdin)")
    _agent_options(run)
    run.add_argument(
        "--attach",
        action="append",
        default=[],
        metavar="FILE",
        help="a file (or https URL) for the model to read (repeatable)",
    )
    run.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="cancel the run and exit 4 if it has not ended after this long",
    )
    output = run.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="one JSON event per line")
    output.add_argument("--quiet", "-q", action="store_true", help="only the answer text")

    chat = commands.add_parser(
        "chat", parents=[common], help="an interactive session (/history, /cancel, /end)"
    )
    _agent_options(chat)

    models = commands.add_parser("models", parents=[common], help="the models you can run")
    models.add_argument("--json", action="store_true", help="the catalog as JSON")

    runs = commands.add_parser("runs", parents=[common], help="recent runs, newest first")
    runs.add_argument("--status", choices=RUN_STATUSES, help="only runs with this status")
    runs.add_argument("--limit", type=_positive, default=20, help="at most this many (20)")
    runs.add_argument("--json", action="store_true", help="one run per line, as the server sent it")

    sessions = commands.add_parser("sessions", parents=[common], help="sessions, newest first")
    sessions.add_argument("--status", choices=("active", "ended"), help="only these sessions")
    sessions.add_argument("--limit", type=_positive, default=20, help="at most this many (20)")
    sessions.add_argument(
        "--json", action="store_true", help="one session per line, as the server sent it"
    )

    info = commands.add_parser("run-info", parents=[common], help="a run's state and answer")
    info.add_argument("run_id", metavar="ID", help="the run's id (see `runs`)")
    info.add_argument("--json", action="store_true", help="the run as the server sent it")

    cancel = commands.add_parser(
        "cancel", parents=[common], help="cancel a run (exit 5 if it had already ended)"
    )
    cancel.add_argument("run_id", metavar="ID", help="the run's id (see `runs`)")

    emulator = commands.add_parser(
        "emulator", parents=[common], help="serve a local MANTYX emulator until Ctrl-C"
    )
    emulator.add_argument(
        "--port", type=int, default=8765, help="the port to listen on (8765; 0 picks a free one)"
    )
    emulator.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (127.0.0.1)"
    )
    emulator.add_argument(
        "--workspace", default="test-ws", help="the workspace slug it serves (test-ws)"
    )
    return parser
