"""Module imports point one way (STYLE.md §8 "Dependency direction"), checked with ``ast``.

Every ``import``/``from ... import`` in ``mantyx_sync/`` counts, wherever it sits
(module level, inside a function, under ``TYPE_CHECKING``): a type-only import is
still a dependency. Relative imports are resolved to absolute module names.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import attrs
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mantyx_sync"
PKG = "mantyx_sync"

FOUNDATION = {"errors", "_types", "_redact", "_limits", "_version"}
MODELS = {"spec", "events", "results", "_wire", "tools", "_schema", "_docstring", "_local_tool"}
ENGINE = {"_transport", "_stream", "_runs", "_poster", "_executor"}
FACADES = {"client", "agent", "session"}
# Client-resolved toolsets (mcp_local / a2a_local): reached by the engine only
# through the ClientResolvedTool / ToolConnection protocols.
PEER_TOOLS = {"_local_mcp", "_local_a2a", "_mcp_client", "_mcp_http", "_mcp_stdio", "_a2a_client"}
CONFIG_AND_RETRY = {"_config", "_retry"}


@attrs.frozen
class Import:
    """One import statement's target, as an absolute dotted name."""

    source: str
    target: str
    line: int
    nested: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports_of(path: Path) -> list[Import]:
    source = _module_name(path)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    top_level = {id(node) for node in tree.body}
    # Imports under a module-level `if TYPE_CHECKING:` are module-level too.
    for statement in tree.body:
        if isinstance(statement, ast.If):
            top_level.update(id(child) for child in statement.body)
    found: list[Import] = []
    for node in ast.walk(tree):
        nested = id(node) not in top_level
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(source, alias.name, node.lineno, nested))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base)
                if node.module:
                    found.append(Import(source, f"{prefix}.{node.module}", node.lineno, nested))
                else:
                    # `from . import _wire` imports the submodule _wire.
                    for alias in node.names:
                        found.append(Import(source, f"{prefix}.{alias.name}", node.lineno, nested))
            elif node.module:
                found.append(Import(source, node.module, node.lineno, nested))
    return found


def _all_imports() -> list[Import]:
    out: list[Import] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        out.extend(_imports_of(path))
    return out


IMPORTS = _all_imports()
SDK_MODULES = {
    _module_name(p).removeprefix(f"{PKG}.") for p in PACKAGE.glob("*.py") if p.name != "__init__.py"
}


def _short(target: str) -> str | None:
    """``mantyx_sync.spec`` -> ``spec``; ``None`` for anything outside the SDK proper."""
    if not target.startswith(f"{PKG}."):
        return None
    rest = target.removeprefix(f"{PKG}.")
    head = rest.split(".")[0]
    return None if head == "testing" else head


def _sdk_deps(module: str) -> set[str]:
    """The SDK modules ``mantyx_sync.<module>`` imports."""
    deps = {_short(i.target) for i in IMPORTS if i.source == f"{PKG}.{module}"}
    return {d for d in deps if d is not None and d != module}


def _importers_of(module: str) -> set[str]:
    return {
        i.source.removeprefix(f"{PKG}.") if i.source != PKG else "__init__"
        for i in IMPORTS
        if _short(i.target) == module and i.source != f"{PKG}.{module}"
    }


def _describe(pairs: Iterable[tuple[str, object]]) -> str:
    return "; ".join(f"{a} imports {b}" for a, b in sorted(pairs, key=str))


def test_the_checker_sees_the_package() -> None:
    # Guard against a silently empty scan making every rule pass.
    assert {"client", "_runs", "_transport", "spec", "errors"} <= SDK_MODULES
    assert _sdk_deps("client") >= {"_runs", "_transport", "_config"}
    assert _sdk_deps("spec") >= {"_wire", "tools", "errors"}
    assert "events" in _sdk_deps("_stream")


def test_every_sdk_module_is_classified() -> None:
    known = FOUNDATION | MODELS | ENGINE | FACADES | PEER_TOOLS | CONFIG_AND_RETRY | {"_jsonrpc"}
    assert SDK_MODULES - known == set(), "classify the new module in this test's layers"


@pytest.mark.parametrize("module", sorted(FOUNDATION))
def test_foundation_imports_nothing_from_the_package(module: str) -> None:
    assert _sdk_deps(module) == set()


def test_config_and_retry_sit_on_the_foundation() -> None:
    for module in CONFIG_AND_RETRY:
        assert _sdk_deps(module) <= FOUNDATION, module


@pytest.mark.parametrize("module", sorted(MODELS))
def test_models_never_import_the_engine_or_facades(module: str) -> None:
    bad = _sdk_deps(module) & (ENGINE | FACADES | PEER_TOOLS)
    assert bad == set(), _describe((module, b) for b in bad)


@pytest.mark.parametrize("module", sorted(PEER_TOOLS | {"_jsonrpc"}))
def test_peer_tools_never_import_the_engine_or_facades(module: str) -> None:
    bad = _sdk_deps(module) & (ENGINE | FACADES | MODELS - {"tools"})
    assert bad == set(), _describe((module, b) for b in bad)


def test_transport_imports_no_models() -> None:
    deps = _sdk_deps("_transport")
    assert deps & MODELS == set()
    assert deps <= FOUNDATION | CONFIG_AND_RETRY


def test_stream_imports_only_events_among_models() -> None:
    deps = _sdk_deps("_stream")
    assert deps & MODELS == {"events"}
    assert deps <= FOUNDATION | CONFIG_AND_RETRY | {"_transport", "events"}


def test_poster_and_executor_stay_below_the_engine() -> None:
    assert _sdk_deps("_poster") <= FOUNDATION | CONFIG_AND_RETRY | {"_transport"}
    # The executor receives a deliver callable, so it never imports the poster.
    assert (
        _sdk_deps("_executor") & ({"_transport", "_stream", "_poster", "_runs"} | FACADES) == set()
    )


def test_only_facades_import_runs() -> None:
    # The package __init__ re-exports Run; that is its only other importer.
    assert _importers_of("_runs") == {"client", "agent", "session", "__init__"}


def test_only_facades_import_facades() -> None:
    for facade in FACADES:
        assert _importers_of(facade) <= FACADES | {"__init__"}, facade


def test_the_sdk_import_graph_has_no_cycles() -> None:
    graph = {m: _sdk_deps(m) for m in SDK_MODULES}
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> None:
        if node in done:
            return
        assert node not in visiting, f"import cycle: {' -> '.join((*trail, node))}"
        visiting.add(node)
        for dep in graph.get(node, ()):
            visit(dep, (*trail, node))
        visiting.discard(node)
        done.add(node)

    for module in sorted(graph):
        visit(module, ())


def test_no_function_local_imports_inside_the_sdk() -> None:
    # STYLE §9.9: fix the layering instead of hiding a cycle in a function.
    nested = [
        (i.source, i.target)
        for i in IMPORTS
        if i.nested and not i.source.startswith(f"{PKG}.testing") and _short(i.target)
    ]
    assert nested == [], _describe(nested)


def test_testing_never_imports_the_sdk() -> None:
    # Anywhere in testing/ (module level, functions, TYPE_CHECKING): only testing itself.
    bad = [
        (f"{i.source}:{i.line}", i.target)
        for i in IMPORTS
        if i.source.startswith(f"{PKG}.testing")
        and (i.target == PKG or i.target.startswith(f"{PKG}."))
        and not (i.target == f"{PKG}.testing" or i.target.startswith(f"{PKG}.testing."))
    ]
    assert bad == [], _describe(bad)


def _dynamic_imports(path: Path) -> list[tuple[str, str]]:
    """``(enclosing function qualname, target)`` for importlib.import_module("...") calls."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, str]] = []

    def walk(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                walk(child, (*scope, child.name))
                continue
            if isinstance(child, ast.Call):
                func = child.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("import_module", "__import__") and child.args:
                    arg = child.args[0]
                    target = arg.value if isinstance(arg, ast.Constant) else "<dynamic>"
                    found.append((".".join(scope), str(target)))
            walk(child, scope)

    walk(tree, ())
    return found


def test_only_local_mantyx_client_loads_the_sdk_lazily() -> None:
    loads = []
    for path in sorted((PACKAGE / "testing").rglob("*.py")):
        for scope, target in _dynamic_imports(path):
            loads.append((path.name, scope, target))
    sdk_loads = [load for load in loads if load[2] == "<dynamic>" or load[2].split(".")[0] == PKG]
    assert sdk_loads == [("_server.py", "LocalMantyx.client", PKG)]


def test_requests_stays_at_the_http_edges() -> None:
    # The MANTYX API goes through _transport only; client.py names requests.Session
    # for its http_session option; the peer clients speak HTTP to MCP/A2A servers.
    users = {
        i.source.removeprefix(f"{PKG}.")
        for i in IMPORTS
        if i.target.split(".")[0] in ("requests", "urllib3")
        and not i.source.startswith(f"{PKG}.testing")
    }
    assert users <= {"_transport", "client", "_mcp_http", "_a2a_client", "_local_a2a"}
    assert "_transport" in users
    assert users & (MODELS | FOUNDATION | {"_stream", "_runs", "_poster", "_executor"}) == set()
