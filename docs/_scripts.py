"""Each guide page's visible Python, run in order as one script, as a reader would.

A reader who copies a page's code blocks in order into one file gets a working
script, given only ``MANTYX_*`` pointing at a local emulator (``mantyx-sync
emulator``, :doc:`guide/first-run`). This module holds that rule: :func:`script`
turns a page into that file (each block at its own line numbers, so a traceback
names the page and its line), :func:`check` runs it in a fresh interpreter and
compares what each block prints with the ``testoutput`` shown after it, and
:func:`hidden` lists the blocks a reader cannot see. The doctest build runs
:func:`check` on every guide page (``conf.py``) and so does ``tests/docs``.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "PageFailure", "blocks", "check", "checkout", "hidden", "reader", "script"]

HERE = Path(__file__).resolve().parent
GUIDE = HERE / "guide"

_DIRECTIVE = re.compile(r"^(\s*)\.\. (testcode|testoutput|testsetup|testcleanup|doctest)::")
_MARK = "\x1e{}\x1e"  # a line no example prints: where each block's output starts


@dataclass(frozen=True)
class Block:
    """One code block of a page: its directive, the line after it (1-based), its text
    from there (options blanked) and whether it is ``:hide:``."""

    kind: str
    line: int
    text: str
    hide: bool


@dataclass(frozen=True)
class PageFailure:
    """Why a page's script fails: a message naming the page and its line."""

    message: str


def blocks(text: str) -> list[Block]:
    """The page's doctest directives, in order, plus its bare ``>>>`` paragraphs."""
    lines = text.splitlines()
    found: list[Block] = []
    number = 0
    while number < len(lines):
        match = _DIRECTIVE.match(lines[number])
        if match is None:
            if lines[number].lstrip().startswith(">>> ") and (
                number == 0 or not lines[number - 1].strip()
            ):
                found.append(Block("doctest", number + 1, lines[number], hide=False))
            number += 1
            continue
        indent, kind = len(match.group(1)), match.group(2)
        start, number, hide = number + 1, number + 1, False
        body: list[str] = []
        while number < len(lines):
            line = lines[number]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            if not body and line.strip().startswith(":"):
                hide = hide or line.strip() == ":hide:"
                line = ""
            body.append(line)
            number += 1
        found.append(Block(kind, start + 1, "\n".join(body), hide))
    return found


def hidden(text: str) -> list[int]:
    """The lines of the blocks a reader never sees: setup, cleanup, ``:hide:`` code."""
    return [
        block.line - 1
        for block in blocks(text)
        if block.kind in {"testsetup", "testcleanup"} or (block.kind == "testcode" and block.hide)
    ]


def script(text: str) -> tuple[str, list[str | None]]:
    """A page's visible code as one script, each block at its own lines.

    Returns the script and, for each block it runs in order, the output its
    ``testoutput`` shows (``None`` where none follows). A ``>>>`` paragraph is
    not a script and is refused: write a ``testcode`` block instead.
    """
    out = [""] * (len(text.splitlines()) + 1)
    wanted: list[str | None] = []
    running = False
    for block in blocks(text):
        if block.kind == "doctest":
            raise ValueError(f"line {block.line}: a '>>>' example; write a testcode block")
        if block.kind == "testoutput":
            if running and wanted[-1] is None:
                wanted[-1] = textwrap.dedent(block.text).strip("\n") + "\n"
            continue
        running = block.kind == "testcode" and not block.hide
        if not running:
            continue
        out[block.line - 1] = f"print({_MARK.format(len(wanted))!r})"  # the directive's line
        for offset, line in enumerate(textwrap.dedent(block.text).splitlines()):
            out[block.line + offset] = line
        wanted.append(None)
    return "\n".join(out[1:]) + "\n", wanted


def reader(folder: str) -> dict[str, str]:
    """What stands in for a reader's machine, beside ``MANTYX_*``: a home of its
    own in ``folder`` (where ``credentials`` saves), a browser that approves the
    OAuth page's sign-in, and this checkout's package on the path."""
    return {
        "HOME": folder,
        "MANTYX_CONFIG_DIR": folder,
        "BROWSER": f"{sys.executable} {HERE / '_browser.py'} %s",
        "PYTHONPATH": str(HERE.parent),
    }


def checkout(folder: str) -> None:
    """Make ``folder`` stand for the root of a checkout: the examples are there."""
    (Path(folder) / "examples").symlink_to(HERE.parent / "examples")


def check(page: Path, mantyx: dict[str, str], *, timeout: float = 120.0) -> list[PageFailure]:
    """Run ``page``'s visible code as one script, in a fresh interpreter in an
    empty folder, with no environment but ``PATH``, ``mantyx`` (the ``MANTYX_*``
    variables that reach an emulator) and :func:`reader`'s; what failed, naming
    the page and its line."""
    text = page.read_text(encoding="utf-8")
    name = str(page.relative_to(HERE.parent) if page.is_relative_to(HERE.parent) else page)
    lines = hidden(text)
    if lines:
        return [PageFailure(f"{name}:{n}: hidden setup a reader cannot see") for n in lines]
    try:
        source, wanted = script(text)
    except ValueError as exc:
        return [PageFailure(f"{name}: {exc}")]
    runner = (
        "import sys; path, source = sys.argv[1], open(sys.argv[2], encoding='utf-8').read(); "
        "exec(compile(source, path, 'exec'), {'__name__': '__main__'})"
    )
    with tempfile.TemporaryDirectory() as folder:
        checkout(folder)
        file = Path(folder) / "page.py"
        file.write_text(source, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-c", runner, str(page), str(file)],
            cwd=folder,
            env={"PATH": os.environ.get("PATH", ""), **mantyx, **reader(folder)},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    if done.returncode != 0:
        return [PageFailure(f"{name}: the script fails:\n{done.stderr[-3000:]}")]
    return _compare(name, text, done.stdout, wanted)


def _compare(name: str, text: str, stdout: str, wanted: list[str | None]) -> list[PageFailure]:
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.DONT_ACCEPT_TRUE_FOR_1
    pieces = re.split("\x1e(\\d+)\x1e\n", stdout)[1:]
    printed = {int(pieces[i]): pieces[i + 1] for i in range(0, len(pieces), 2)}
    code = [block for block in blocks(text) if block.kind == "testcode" and not block.hide]
    failures = []
    for index, want in enumerate(wanted):
        got = printed.get(index, "")
        if want is not None and not checker.check_output(want, got, flags):
            failures.append(
                PageFailure(f"{name}:{code[index].line}: prints\n{got}but the page shows\n{want}")
            )
    return failures
