"""Each fact of a run's events is read in one place, enforced with ``ast``.

* A tool call's arguments arrive as ``args`` (``input`` on some servers); the
  alias is declared once, on the payload classes in ``events.py`` (the
  converter's alias metadata), and everything else reads the typed attribute:
  no other module looks ``args``/``input`` up by key.
* Whether a run succeeded (a result's ``subtype`` or ``ok``) is decided once,
  by :class:`~mantyx_sync.events.RunOutcome`, from the typed payload: no module
  reads those keys out of event data.

A key read here stands for a different fact (an Agent API request's ``input``
messages, an evaluation case's ``input``, a cancel reply's ``ok``) and is
listed below with that fact.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mantyx_sync"

# The one module that knows the wire spelling of these facts.
DECLARED_IN = "events.py"
# (module, enclosing function) -> the other fact the key names there.
OTHER_FACTS = {
    ("serve/_agent_api_wire.py", "request_text"): "an Agent API request's input messages",
    ("evals.py", "_dataset_source"): "an inline evaluation case's input",
    ("_http/routes.py", "cancel_eval"): "the evaluation cancel reply's {ok}",
}
ARG_KEYS = frozenset({"args", "input"})
OUTCOME_KEYS = frozenset({"subtype", "ok"})


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if not name.startswith("testing/"):  # the emulator writes these facts; it shares nothing
            yield name, ast.parse(path.read_text(encoding="utf-8"))


def _key_reads(tree: ast.Module, keys: frozenset[str]) -> Iterator[tuple[str, int, str]]:
    """``(function, line, key)`` for each ``x.get(key)``, ``x[key]`` and each literal
    collection naming two of ``keys`` (a fallback list such as ``("args", "input")``)."""

    def constant(node: ast.AST | None) -> str | None:
        if isinstance(node, ast.Constant) and node.value in keys:
            return str(node.value)
        return None

    def walk(node: ast.AST, function: str) -> Iterator[tuple[str, int, str]]:
        for child in ast.iter_child_nodes(node):
            scope = child.name if isinstance(child, (ast.FunctionDef, ast.ClassDef)) else function
            key = None
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
                if child.func.attr == "get" and child.args:
                    key = constant(child.args[0])
            elif isinstance(child, ast.Subscript):
                key = constant(child.slice)
            elif isinstance(child, (ast.Tuple, ast.List, ast.Set)):
                named = {constant(e) for e in child.elts} - {None}
                key = "/".join(sorted(str(k) for k in named)) if len(named) > 1 else None
            if key is not None:
                yield scope, child.lineno, key
            yield from walk(child, scope)

    yield from walk(tree, "<module>")


def _offenders(keys: frozenset[str]) -> list[str]:
    found = []
    for name, tree in _modules():
        if name == DECLARED_IN:
            continue
        for function, line, key in _key_reads(tree, keys):
            if (name, function) not in OTHER_FACTS:
                found.append(f"{name}:{line} ({function}) reads {key!r}")
    return found


def test_tool_arguments_are_read_only_through_the_payload_classes() -> None:
    assert _offenders(ARG_KEYS) == [], (
        "read the typed LocalToolCall.args / ToolCallEvent.input (or _display.steps.tool_step), "
        "not the event data"
    )


def test_a_runs_success_is_decided_only_by_run_outcome() -> None:
    assert _offenders(OUTCOME_KEYS) == [], "use events.outcome_of(event) / RunOutcome"


def test_the_alias_is_declared_on_the_payload_classes() -> None:
    import attrs

    from mantyx_sync._models.wire import ALIASES
    from mantyx_sync.events import ErrorPayload, LocalToolCall, ResultPayload, ToolCallEvent

    assert attrs.fields(LocalToolCall).args.metadata[ALIASES] == ("input",)
    assert attrs.fields(ToolCallEvent).input.metadata[ALIASES] == ("args",)
    assert attrs.fields(ResultPayload).error.metadata[ALIASES] == ("message",)
    assert attrs.fields(ErrorPayload).error.metadata[ALIASES] == ("message",)


def test_the_listed_other_facts_still_exist() -> None:
    # A stale exception would let a wrong-way read hide behind it.
    seen = {
        (name, function)
        for name, tree in _modules()
        for function, _, _ in _key_reads(tree, ARG_KEYS | OUTCOME_KEYS)
    }
    assert set(OTHER_FACTS) <= seen
