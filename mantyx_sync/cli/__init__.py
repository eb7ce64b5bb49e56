"""``mantyx-sync`` (or ``python -m mantyx_sync``): MANTYX agents from a terminal, a script, cron.

:func:`main` turns every error into one line on stderr and an exit code
(:mod:`._exit`); the commands and their options are in :mod:`._parser`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from types import FrameType
from typing import TextIO

from ..errors import SpecError
from ._exit import INTERRUPTED, exit_code_for
from ._parser import SPEC_OPTIONS, build_parser
from ._term import Terminal

__all__ = ["main"]

_Command = Callable[[argparse.Namespace, Terminal], int]


def _command(name: str) -> _Command:
    # The commands (and through them the SDK, requests and the emulator) are
    # imported only once one is chosen: `--help`, `--version` and a usage
    # error load nothing but the parser.
    from ._chat import cmd_chat
    from ._commands import (
        cmd_cancel,
        cmd_emulator,
        cmd_models,
        cmd_run,
        cmd_run_info,
        cmd_runs,
        cmd_sessions,
    )

    commands: dict[str, _Command] = {
        "run": cmd_run,
        "chat": cmd_chat,
        "models": cmd_models,
        "runs": cmd_runs,
        "sessions": cmd_sessions,
        "run-info": cmd_run_info,
        "cancel": cmd_cancel,
        "emulator": cmd_emulator,
    }
    return commands[name]


def _terminate(signum: int, frame: FrameType | None) -> None:
    # `timeout`, systemd and cron stop a job with SIGTERM: treat it as Ctrl-C
    # so the run is cancelled on the server rather than left burning tokens.
    raise KeyboardInterrupt


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    args = build_parser().parse_args(argv)
    term = Terminal.detect(out, err)
    debug = bool(getattr(args, "debug", False))
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _command(args.command)(args, term)
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        # `mantyx-sync run ... | head`: the reader left; that is not an error.
        return 0
    except Exception as exc:  # the one place that turns errors into exit codes
        term.status(None)
        if debug:
            term.note("".join(traceback.format_exception(exc)).rstrip("\n"))
        term.error(_one_line(exc))
        if not debug and exit_code_for(exc) == 1 and not _is_ours(exc):
            term.note(term.dim("(run again with --debug for the traceback)"))
        return exit_code_for(exc)
    finally:
        term.close()
        signal.signal(signal.SIGTERM, previous)


def _is_ours(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("mantyx_sync")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    # A spec keyword an option set is named as that option: `--model`, not `model_id`.
    keyword = (exc.path or "") if isinstance(exc, SpecError) else ""
    if keyword in SPEC_OPTIONS and text.startswith(f"{keyword}:"):
        text = SPEC_OPTIONS[keyword] + text[len(keyword) :]
    return text if _is_ours(exc) else f"{type(exc).__name__}: {text}"


def console_main() -> None:
    """The ``mantyx-sync`` console script."""
    sys.exit(main())
