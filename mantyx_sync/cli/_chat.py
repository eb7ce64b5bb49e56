"""``mantyx-sync chat``: an interactive session whose history lives on the server.

Lines are read with :func:`input`, which gives line editing and history
(arrow keys, Ctrl-R) once :mod:`readline` is loaded, where the platform has it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib

from ..client import Client
from ..errors import RunError
from ..session import Session
from ._commands import agent_spec, confirm_cancel, message_overrides, reaching
from ._exit import INTERRUPTED, OK
from ._term import Terminal
from ._tools import load_tools
from ._view import RunView, follow

__all__ = ["cmd_chat"]

_HELP = (
    "/history shows the conversation, /cancel cancels this session's running replies "
    "(e.g. one sent from another terminal with --session), /end ends the session"
)


def _enable_line_editing() -> None:
    # Importing readline is what switches input() to line editing; Windows has none.
    with contextlib.suppress(ImportError):
        importlib.import_module("readline")


def _show_history(session: Session, term: Terminal) -> None:
    messages = session.history()
    if not messages:
        term.note(term.dim("(no messages yet)"))
    for message in messages:
        term.line(f"{message.role}: {message.content}")


def _cancel_running(client: Client, session: Session, term: Terminal) -> None:
    # While this terminal waits at the prompt its own reply has ended; a run of
    # the session may still be going elsewhere (another terminal, a web app).
    running = [
        summary.id
        for summary in client.runs.list(status="running", max_items=200)
        if summary.session_id == session.id
    ]
    if not running:
        term.note(term.dim("nothing is running in this session (Ctrl-C stops a reply)"))
    for run_id in running:
        client.runs.cancel(run_id)
        term.note(term.dim(f"cancelled run {run_id}"))


def cmd_chat(args: argparse.Namespace, term: Terminal) -> int:
    """Read prompts until ``/end`` (ends the session) or end of input (keeps it)."""
    overrides = message_overrides(args)
    tools = load_tools(args.tool, args.mcp, args.mcp_url)
    _enable_line_editing()
    with Client() as client:
        with reaching(client, term):
            if args.session:
                session = client.sessions.resume(args.session, tools=tools)
            else:
                session = client.sessions.create(agent_spec(args, tools))
        term.note(term.dim(f"session {session.id} · {_HELP}"))
        while True:
            try:
                line = input("you> ")
            except EOFError:
                kept = f"session {session.id} kept; continue it with --session {session.id}"
                term.note(term.dim(kept))
                return OK
            except KeyboardInterrupt:
                term.note("")
                return INTERRUPTED
            prompt = line.strip()
            if not prompt:
                continue
            if prompt == "/end":
                session.end()
                term.note(term.dim(f"session {session.id} ended"))
                return OK
            if prompt == "/history":
                _show_history(session, term)
                continue
            if prompt == "/cancel":
                _cancel_running(client, session, term)
                continue
            if prompt.startswith("/"):
                term.note(term.dim(f"unknown command {prompt.split()[0]}; {_HELP}"))
                continue
            view = RunView(term, show_thinking=args.reasoning_level is not None)
            with reaching(client, term, view):
                run = session.start(prompt, **overrides)
                try:
                    follow(run, view)
                except KeyboardInterrupt:
                    confirm_cancel(run, term)
                except RunError as exc:
                    term.error(str(exc))
