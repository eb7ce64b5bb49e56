"""The one-shot commands: ``run``, ``models``, ``run-info``, ``cancel``, ``emulator``."""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._display.text import one_line
from .._http.progress import Progress, reporting
from ..client import Client
from ..errors import ConnectError, MantyxError
from ..messages import Attachment
from ..run import Run
from ..spec import AgentSpec, OverrideKeywords
from ..testing import LocalMantyx
from ._exit import ALREADY_ENDED, INTERRUPTED, OK, UsageError
from ._parser import SPEC_OPTIONS
from ._term import Terminal
from ._tools import load_tools
from ._view import JsonView, RunView, follow

if TYPE_CHECKING:
    from ..history import RunSummary, SessionSummary

__all__ = [
    "agent_spec",
    "cmd_cancel",
    "cmd_emulator",
    "cmd_models",
    "cmd_run",
    "cmd_run_info",
    "cmd_runs",
    "cmd_sessions",
    "confirm_cancel",
    "message_overrides",
    "reaching",
]

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."


def agent_spec(args: argparse.Namespace, tools: list[Any]) -> AgentSpec:
    """The spec the agent options (:data:`SPEC_OPTIONS`) and ``tools`` describe.

    :raises SpecError: a field breaks a documented limit (nothing is sent).
    """
    fields = {keyword: getattr(args, keyword) for keyword in SPEC_OPTIONS}
    if fields["agent_id"] is None and fields["system_prompt"] is None:
        fields["system_prompt"] = DEFAULT_SYSTEM_PROMPT
    return AgentSpec.build(tools=tools, **fields)


def message_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The agent options a session message may give for its one run.

    :raises UsageError: ``--session`` with an option only a new agent takes.
    """
    given = {k: getattr(args, k) for k in SPEC_OPTIONS if getattr(args, k) is not None}
    fixed = [SPEC_OPTIONS[k] for k in given if k not in OverrideKeywords.__annotations__]
    if args.session and fixed:
        raise UsageError(
            f"--session continues an existing session with its own agent; drop {', '.join(fixed)}"
        )
    return {k: v for k, v in given.items() if k in OverrideKeywords.__annotations__}


def _attempt_text(
    what: Progress, n: int, limit: int, error: BaseException | None, host: str
) -> str | None:
    if what == "reconnected":
        return None
    if what == "reconnecting":
        return f"reconnecting to {host} (attempt {n} of {limit})…"
    verb = "connecting to" if isinstance(error, ConnectError) else "retrying"
    return f"{verb} {host} (attempt {n} of {limit})…"


@contextlib.contextmanager
def reaching(
    client: Client, term: Terminal, view: RunView | JsonView | None = None
) -> Iterator[None]:
    """Around a command's calls to the server: on a terminal, the spinner says
    which server it is connecting to, then each retry and reconnect with its
    attempt count (through ``view`` while it follows a run; none for ``--json``
    or ``--quiet``); it stops with the block.
    """
    host = urlsplit(client.config.base_url).netloc or client.config.base_url
    shown = view is None or (isinstance(view, RunView) and not view.quiet)
    if shown:
        term.status(f"connecting to {host}…")

    def show(what: Progress, n: int, limit: int, error: BaseException | None) -> None:
        text = _attempt_text(what, n, limit, error, host)
        if isinstance(view, RunView):
            view.trouble(text)
        elif shown:
            term.status(text or f"connecting to {host}…")

    try:
        with reporting(show):
            yield
    finally:
        term.status(None)


def _prompt(args: argparse.Namespace) -> str:
    if args.prompt is not None:
        prompt: str = args.prompt
    elif not sys.stdin.isatty():
        prompt = sys.stdin.read()
    else:
        raise UsageError('give a prompt: mantyx-sync run "your question" (or pipe it on stdin)')
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    return prompt


def confirm_cancel(run: Run, term: Terminal) -> None:
    """After Ctrl-C, make sure ``run`` is cancelled and say so.

    The :class:`Run` already sent a best-effort cancel with a short timeout;
    this one is retried like any safe request (cancelling is idempotent), so
    "cancelled" is only printed once the server has agreed.
    """
    if run.done:
        term.note(term.dim(f"interrupted: run {run.id} had already ended"))
        return
    try:
        run.cancel()
    except MantyxError as exc:
        term.error(f"interrupted, but run {run.id} could not be cancelled: {exc}")
        return
    term.note(term.dim(f"interrupted: run {run.id} cancelled"))


def cmd_run(args: argparse.Namespace, term: Terminal) -> int:
    prompt = _prompt(args)
    overrides = message_overrides(args)
    attachments = [
        Attachment.from_url(item) if item.startswith("https://") else Attachment.from_path(item)
        for item in args.attach
    ]
    tools = load_tools(args.tool, args.mcp, args.mcp_url)
    view: RunView | JsonView
    if args.json:
        view = JsonView(term)
    else:
        view = RunView(term, quiet=args.quiet, show_thinking=args.reasoning_level is not None)
    with Client() as client, reaching(client, term, view):
        if args.session:
            session = client.sessions.resume(args.session, tools=tools)
            run = session.start(
                prompt, attachments=attachments or None, run_timeout=args.timeout, **overrides
            )
        else:
            run = client.runs.start(
                agent_spec(args, tools),
                prompt,
                attachments=attachments or None,
                run_timeout=args.timeout,
            )
        try:
            follow(run, view)
        except KeyboardInterrupt:
            confirm_cancel(run, term)
            return INTERRUPTED
    return OK


def cmd_models(args: argparse.Namespace, term: Terminal) -> int:
    """``mantyx-sync models``: one line per model, the default marked ``*``."""
    with Client() as client, reaching(client, term):
        catalog = client.models.list()
    if args.json:
        rows = [
            {
                "id": m.id,
                "label": m.label,
                "provider": m.provider,
                "contextWindowTokens": m.context_window_tokens,
                "default": m.id == catalog.default_model_id,
            }
            for m in catalog
        ]
        term.line(json.dumps(rows, ensure_ascii=False))
        return OK
    width = max((len(m.id) for m in catalog), default=0)
    for model in catalog:
        mark = "*" if model.id == catalog.default_model_id else " "
        window = model.context_window_tokens
        parts = (model.label, model.provider, f"{window} tokens" if window else None)
        details = " · ".join(part for part in parts if part)
        term.line(f"{mark} {model.id.ljust(width)}  {details}".rstrip())
    if catalog.default_model_id:
        term.note(term.dim("* the workspace default"))
    return OK


def cmd_run_info(args: argparse.Namespace, term: Terminal) -> int:
    """``mantyx-sync run-info ID``: the run's state, usage and answer."""
    with Client() as client, reaching(client, term):
        snapshot = client.runs.get(args.run_id)
    if args.json:
        term.line(json.dumps(snapshot.raw, ensure_ascii=False, default=str))
        return OK
    term.line(f"run      {snapshot.id}")
    term.line(f"status   {snapshot.status or 'unknown'}")
    if snapshot.session_id:
        term.line(f"session  {snapshot.session_id}")
    if snapshot.model is not None and snapshot.model.id:
        term.line(f"model    {snapshot.model.id}")
    if snapshot.tokens is not None:
        tokens = snapshot.tokens
        term.line(
            f"tokens   {tokens.total_tokens} ({tokens.input_tokens} in, {tokens.output_tokens} out)"
        )
    if snapshot.turns is not None:
        term.line(f"turns    {snapshot.turns}")
    if snapshot.error:
        term.line(f"error    {snapshot.error}")
    if snapshot.final_text:
        term.line("")
        term.line(snapshot.final_text)
    return OK


_ENDED = frozenset({"succeeded", "failed", "cancelled"})


def cmd_cancel(args: argparse.Namespace, term: Terminal) -> int:
    """``mantyx-sync cancel ID``: cancel the run, or say it had already ended (exit 5)."""
    with Client() as client, reaching(client, term):
        status = client.runs.get(args.run_id).status
        if status not in _ENDED:
            client.runs.cancel(args.run_id)
            # It may have ended on its own just before the cancel reached it.
            status = client.runs.get(args.run_id).status
            if status not in ("succeeded", "failed"):
                term.note(f"cancelled run {args.run_id}")
                return OK
    term.note(f"run {args.run_id} had already ended ({status}): nothing to cancel")
    return ALREADY_ENDED


def _check_port_free(host: str, port: int) -> None:
    # werkzeug exits the process itself on a busy port; say it our way first.
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            reason = exc.strerror or exc
            raise UsageError(f"cannot listen on {host}:{port}: {reason}") from exc


def cmd_emulator(args: argparse.Namespace, term: Terminal) -> int:
    """``mantyx-sync emulator``: a local MANTYX until Ctrl-C (or SIGTERM)."""
    _check_port_free(args.host, args.port)
    server = LocalMantyx(host=args.host, port=args.port, workspace=args.workspace)
    try:
        server.start()
    except RuntimeError as exc:
        if isinstance(exc.__cause__, ImportError):
            raise UsageError("the emulator needs werkzeug: pip install 'mantyx-sync[cli]'") from exc
        raise UsageError(str(exc)) from exc
    try:
        term.line(f"MANTYX emulator listening on {server.base_url}")
        term.line("Use it from another terminal with:")
        term.line(f"  export MANTYX_BASE_URL={server.base_url}")
        term.line(f"  export MANTYX_WORKSPACE={server.workspace}")
        term.line(f"  export MANTYX_API_KEY={server.api_key}")
        term.line("Press Ctrl-C to stop.")
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    finally:
        server.stop()
    return OK


def _run_row(summary: RunSummary) -> str:
    tokens = f"{summary.tokens.total_tokens} tokens" if summary.tokens is not None else ""
    return (
        f"{summary.id}  {(summary.status or '?'):<10} {summary.created_at or '':<25} "
        f"{tokens:>12}  {one_line(summary.input_preview or '', 50)}"
    )


def _session_row(summary: SessionSummary) -> str:
    when = summary.last_interaction_at or summary.created_at or ""
    return (
        f"{summary.id}  {(summary.status or '?'):<7} {when:<25} "
        f"{one_line(summary.summary or '', 50)}"
    )


def _listing(
    args: argparse.Namespace, term: Terminal, items: list[Any], row: Callable[[Any], str], kind: str
) -> int:
    """One line per item, ``row(item)`` or (``--json``) the item as the server sent it."""
    for item in items:
        term.line(
            json.dumps(item.raw, ensure_ascii=False, default=str)
            if args.json
            else row(item).rstrip()
        )
    if not items and not args.json:
        term.note(term.dim(f"no {kind}"))
    return OK


def cmd_runs(args: argparse.Namespace, term: Terminal) -> int:
    """``mantyx-sync runs``: recent runs, newest first."""
    with Client() as client, reaching(client, term):
        runs = list(client.runs.list(status=args.status, max_items=args.limit))
    return _listing(args, term, runs, _run_row, "runs")


def cmd_sessions(args: argparse.Namespace, term: Terminal) -> int:
    """``mantyx-sync sessions``: sessions, newest first."""
    with Client() as client, reaching(client, term):
        sessions = list(client.sessions.list(status=args.status, max_items=args.limit))
    return _listing(args, term, sessions, _session_row, "sessions")
