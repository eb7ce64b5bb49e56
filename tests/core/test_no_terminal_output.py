"""Library code never writes to the terminal (STYLE: log, never print), enforced with ``ast``.

``print(...)`` and any use of ``sys.stdout`` / ``sys.stderr`` fail the test,
wherever they sit, unless the place is one whose *purpose* is output to a
person. Those are listed below with the reason, each a deliberate,
documented choice:

* the command line and the ``python -m`` runners write what their user asked for;
* ``notebook.show`` streams a run as text outside IPython, to its ``out=``
  argument (default ``sys.stdout``);
* ``OAuth.sign_in`` shows its sign-in URL: a person must open it even when no
  browser can be launched and logging is off. It goes to stderr unless the
  caller passes ``on_url=`` (README "Signing in", the ``sign_in`` docstring).

A new place that writes to the terminal must be added here, with its reason.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mantyx_sync"

# Whole modules whose job is terminal output.
OUTPUT_MODULES = frozenset(
    {
        "__main__.py",
        "cli/",
        "serve/__main__.py",
        "testing/__main__.py",
    }
)
# (module, enclosing function) where one deliberate write is allowed.
ALLOWED = {
    ("notebook.py", "_plain"): "notebook.show's plain-text output, to out= (default stdout)",
    ("oauth/_redirect.py", "show_url"): "the sign-in URL a person must open (on_url= replaces it)",
}


def _is_output_module(relative: str) -> bool:
    return any(
        relative == name or (name.endswith("/") and relative.startswith(name))
        for name in OUTPUT_MODULES
    )


def _writes(tree: ast.AST) -> list[tuple[int, str | None, str]]:
    """``(line, enclosing function, what)`` for each print call or sys.stdout/stderr use."""
    found: list[tuple[int, str | None, str]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "print"
        ):
            found.append((node.lineno, function, "print()"))
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
            and node.attr in ("stdout", "stderr", "__stdout__", "__stderr__")
        ):
            found.append((node.lineno, function, f"sys.{node.attr}"))
        if isinstance(node, ast.ImportFrom) and node.module == "sys":
            for alias in node.names:
                if alias.name in ("stdout", "stderr"):
                    found.append((node.lineno, function, f"from sys import {alias.name}"))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return found


def test_library_code_does_not_write_to_the_terminal() -> None:
    offenders = []
    used = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if _is_output_module(relative):
            continue
        for line, function, what in _writes(ast.parse(path.read_text(encoding="utf-8"))):
            if (relative, function) in ALLOWED:
                used.add((relative, function))
                continue
            offenders.append(f"mantyx_sync/{relative}:{line} ({function or 'module'}): {what}")
    assert offenders == [], (
        "log through logging.getLogger('mantyx_sync...') instead:\n" + "\n".join(offenders)
    )
    assert used == set(ALLOWED), f"stale allowances: {sorted(set(ALLOWED) - used)}"


def test_the_check_sees_prints_and_stream_writes() -> None:
    source = textwrap.dedent(
        """\
        import sys
        def f():
            print('x')
            sys.stderr.write('y')
        from sys import stdout
        """
    )
    assert [(line, what) for line, _, what in _writes(ast.parse(source))] == [
        (3, "print()"),
        (4, "sys.stderr"),
        (5, "from sys import stdout"),
    ]
