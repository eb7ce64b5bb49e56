"""The package's layers, stated by folder and enforced with ``ast`` (STYLE.md §8).

A *unit* is a top-level module or folder of ``mantyx_sync``: ``errors``, ``spec``,
``_http`` (every module in it), ``_peers`` ... Units sit on ordered layers and
may import only their own layer or layers below. Every ``import`` statement
counts, wherever it sits (module level, inside a function, under
``TYPE_CHECKING``): a type-only import is still a dependency. Relative imports
are resolved to absolute names. A failure names both modules and the line.

CONTRIBUTING.rst draws the same picture for readers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import attrs

PACKAGE = Path(__file__).resolve().parents[2] / "mantyx_sync"
PKG = "mantyx_sync"

# Lowest first. A unit may import units on its own layer or any layer below.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({"_version", "errors", "_base"})),
    ("tool making", frozenset({"_tools"})),
    (
        "wire values",
        frozenset(
            {
                "tools",
                "spec",
                "events",
                "results",
                "history",
                "feedback",
                "messages",
                "_models",
                "_display",
            }
        ),
    ),
    ("http and peer protocols", frozenset({"_http", "_peers"})),
    ("engine", frozenset({"_engine"})),
    ("facades", frozenset({"run", "session", "client", "agent"})),
    ("applications", frozenset({"serve", "cli", "notebook", "oauth", "evals", "credentials"})),
    # The package's face re-exports every public name, applications (OAuth) included.
    ("public face", frozenset({"__init__", "__main__"})),
)
# The emulator is outside the layers: it shares no code with the client, only _base.
OUTSIDE = frozenset({"testing"})
LAYER_OF = {unit: index for index, (_, units) in enumerate(LAYERS) for unit in units}
FACADE_ORDER = ("run", "session", "client", "agent", "__init__")


@attrs.frozen
class Import:
    """One import statement's target, as an absolute dotted name."""

    source: str
    target: str
    line: int
    nested: bool

    def __str__(self) -> str:
        return f"{self.source} (line {self.line}) imports {self.target}"


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
                    # `from . import wire` imports the submodule wire.
                    for alias in node.names:
                        found.append(Import(source, f"{prefix}.{alias.name}", node.lineno, nested))
            elif node.module:
                found.append(Import(source, node.module, node.lineno, nested))
    return found


IMPORTS = [i for path in sorted(PACKAGE.rglob("*.py")) for i in _imports_of(path)]
MODULES = sorted({_module_name(p) for p in PACKAGE.rglob("*.py")})


def unit_of(name: str) -> str | None:
    """``mantyx_sync._http.stream`` -> ``_http``; ``mantyx_sync`` -> ``__init__``; else None."""
    if name == PKG:
        return "__init__"
    if not name.startswith(f"{PKG}."):
        return None
    return name.removeprefix(f"{PKG}.").split(".")[0]


def _sdk_imports() -> list[Import]:
    """Imports from one SDK module to another, the emulator left out."""
    return [
        i
        for i in IMPORTS
        if unit_of(i.target) is not None
        and unit_of(i.source) not in OUTSIDE
        and unit_of(i.target) not in OUTSIDE
        and i.target != i.source
    ]


SDK_IMPORTS = _sdk_imports()


def _deps(module: str) -> set[str]:
    """The SDK modules (absolute names) ``module`` imports."""
    return {i.target for i in SDK_IMPORTS if i.source == module}


def _units_imported_by(unit: str) -> set[str]:
    return {
        u
        for i in SDK_IMPORTS
        if unit_of(i.source) == unit and (u := unit_of(i.target)) is not None and u != unit
    }


def _describe(found: Iterable[object]) -> str:
    return "\n  " + "\n  ".join(sorted(str(f) for f in found))


def test_the_checker_sees_the_package() -> None:
    # Guard against a silently empty scan making every rule pass.
    assert {"mantyx_sync.client", "mantyx_sync._http.transport", "mantyx_sync.spec"} <= set(MODULES)
    assert {"run", "_http", "_engine"} <= _units_imported_by("client")
    assert "events" in _units_imported_by("_http")
    assert len(SDK_IMPORTS) > 50


def test_every_unit_is_on_a_layer() -> None:
    units = {unit_of(m) for m in MODULES} - {None} - OUTSIDE
    unplaced = units - set(LAYER_OF)
    assert unplaced == set(), f"put these top-level modules/folders on a layer: {sorted(unplaced)}"


def _wrong_way(imports: Iterable[Import]) -> list[str]:
    wrong = []
    for i in imports:
        source, target = unit_of(i.source), unit_of(i.target)
        assert source is not None and target is not None
        if LAYER_OF[target] > LAYER_OF[source]:
            below, above = LAYERS[LAYER_OF[source]][0], LAYERS[LAYER_OF[target]][0]
            wrong.append(f"{i} — {below} may not import {above}")
    return wrong


def test_no_unit_imports_a_layer_above_its_own() -> None:
    wrong = _wrong_way(SDK_IMPORTS)
    assert wrong == [], "wrong-way imports:" + _describe(wrong)


def test_a_wrong_way_import_names_both_modules() -> None:
    fake = Import(f"{PKG}._http.poster", f"{PKG}.client", 7, False)
    assert _wrong_way([fake]) == [
        "mantyx_sync._http.poster (line 7) imports mantyx_sync.client"
        " — http and peer protocols may not import facades"
    ]


def test_foundation_imports_nothing_else_of_the_package() -> None:
    bad = [i for i in SDK_IMPORTS if unit_of(i.source) in {"errors", "_version"}]
    bad += [i for i in SDK_IMPORTS if unit_of(i.source) == "_base" and unit_of(i.target) != "_base"]
    assert bad == [], _describe(bad)


def test_http_and_peers_do_not_know_each_other() -> None:
    assert "_peers" not in _units_imported_by("_http")
    assert "_http" not in _units_imported_by("_peers")


def test_peers_use_only_the_tool_protocols_among_values() -> None:
    bad = [
        i
        for i in SDK_IMPORTS
        if unit_of(i.source) == "_peers"
        and LAYER_OF[unit_of(i.target) or ""] == LAYER_OF["tools"]
        and unit_of(i.target) != "tools"
    ]
    assert bad == [], _describe(bad)


def test_transport_retry_and_config_know_no_values() -> None:
    for name in ("transport", "retry", "config"):
        module = f"{PKG}._http.{name}"
        units = {unit_of(t) for t in _deps(module)}
        assert units <= {"_base", "errors", "_version", "_http"}, module


def test_stream_reads_only_events_among_values() -> None:
    units = {unit_of(t) for t in _deps(f"{PKG}._http.stream")}
    assert units & LAYERS[2][1] == {"events"}


def test_poster_sits_on_transport_and_retry() -> None:
    deps = _deps(f"{PKG}._http.poster")
    assert {unit_of(t) for t in deps} <= {"_base", "errors", "_http"}
    assert f"{PKG}._http.stream" not in deps


def test_executor_never_reaches_http() -> None:
    # The executor is handed a deliver callable, so it never imports the poster.
    units = {unit_of(t) for t in _deps(f"{PKG}._engine.executor")}
    assert "_http" not in units


def test_facades_import_one_way() -> None:
    wrong = []
    for i in SDK_IMPORTS:
        source, target = unit_of(i.source), unit_of(i.target)
        if (
            source in FACADE_ORDER
            and target in FACADE_ORDER
            and FACADE_ORDER.index(target) > FACADE_ORDER.index(source)
        ):
            wrong.append(i)
    assert wrong == [], "facades import downwards only (run < session < client < agent):" + (
        _describe(wrong)
    )


def test_the_module_import_graph_has_no_cycles() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in SDK_IMPORTS:
        # `from mantyx_sync._http.retry import X` and `from ._http import retry` both
        # name modules; a name that is no module (a class) counts as its module.
        target = i.target if i.target in graph else i.target.rpartition(".")[0]
        if target in graph and target != i.source:
            graph[i.source].add(target)
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> None:
        if node in done:
            return
        assert node not in visiting, f"import cycle: {' -> '.join((*trail, node))}"
        visiting.add(node)
        for dep in sorted(graph.get(node, ())):
            # A package's own __init__ is imported by each of its modules implicitly.
            if not node.startswith(dep + "."):
                visit(dep, (*trail, node))
        visiting.discard(node)
        done.add(node)

    for module in sorted(graph):
        if unit_of(module) not in OUTSIDE:
            visit(module, ())


# Imports deliberately made inside a function because of what they cost a plain
# script (benchmarks/README.md, rows 4b and 7), each one listed on purpose. They
# still count everywhere above (layers, cycles), so a deferral cannot hide a cycle.
DEFERRED = frozenset(
    {
        # evaluations, listings and feedback are loaded by the methods that use them
        (f"{PKG}.client", f"{PKG}._engine.evals"),
        (f"{PKG}.client", f"{PKG}.history"),
        (f"{PKG}.client", f"{PKG}.feedback"),
        (f"{PKG}.session", f"{PKG}.history"),
        # signature-based schema derivation, for @local_tool only
        (f"{PKG}._tools.local_tool", f"{PKG}._tools.signature"),
    }
)


def test_no_function_local_imports_inside_the_sdk() -> None:
    # STYLE §9.9: fix the layering instead of hiding a cycle in a function.
    nested = [i for i in SDK_IMPORTS if i.nested and (i.source, i.target) not in DEFERRED]
    assert nested == [], _describe(nested)


def test_every_deferred_import_is_still_there() -> None:
    found = {(i.source, i.target) for i in SDK_IMPORTS if i.nested}
    assert found >= DEFERRED, sorted(DEFERRED - found)


def test_testing_never_imports_the_sdk() -> None:
    # Anywhere in testing/ (module level, functions, TYPE_CHECKING): only testing itself
    # and _base, the foundation that imports nothing else of the package (its argcheck).
    bad = [
        i
        for i in IMPORTS
        if unit_of(i.source) == "testing"
        and unit_of(i.target) is not None
        and unit_of(i.target) not in ("testing", "_base")
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
    # The MANTYX API goes through _http.transport only (_http.failures holds the
    # words it translates requests' exceptions into, _http.pools its sessions);
    # client.py names
    # requests.Session for its http_session option; the peer clients speak HTTP
    # to MCP/A2A servers.
    users = {
        i.source
        for i in IMPORTS
        if i.target.split(".")[0] in ("requests", "urllib3") and unit_of(i.source) != "testing"
    }
    allowed_units = {"_peers", "client"} | dict(LAYERS)["applications"]
    assert f"{PKG}._http.transport" in users
    edges = {f"{PKG}._http.{name}" for name in ("transport", "failures", "pools")}
    stray = {u for u in users if u not in edges and unit_of(u) not in allowed_units}
    assert stray == set(), f"requests used outside the HTTP edges: {sorted(stray)}"


def _contributing_diagram() -> str:
    text = (PACKAGE.parent / "CONTRIBUTING.rst").read_text(encoding="utf-8")
    start = text.index("    mantyx_sync/\n")
    return text[start : text.index("A unit (a top-level module or folder)", start)]


def test_contributing_draws_every_folder_and_module() -> None:
    # The diagram in CONTRIBUTING.rst ("How the code is laid out") names every
    # top-level module and folder, and every module of a private folder, so it
    # cannot drift from the package; the public folders' private modules are
    # theirs to describe.
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*/?", _contributing_diagram()))
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        folders = [f"{part}/" for part in parts[:-1]]
        missing += [f for f in folders[:2] if f not in words]
        if parts[-1] == "__init__" or (folders and not folders[0].startswith("_")):
            continue
        if parts[-1] not in words:
            missing.append("/".join(parts) + ".py")
    assert sorted(set(missing)) == [], f"add to CONTRIBUTING.rst's diagram: {sorted(set(missing))}"


def test_every_folder_the_diagram_names_exists() -> None:
    named = set(re.findall(r"\b([a-z_][a-z0-9_]*)/(?=[\s),])", _contributing_diagram()))
    folders = {p.relative_to(PACKAGE).name for p in PACKAGE.rglob("*") if p.is_dir()}
    assert named - {"mantyx_sync"} <= folders, sorted(named - folders - {"mantyx_sync"})
