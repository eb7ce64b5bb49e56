"""The package's layers, stated by folder and enforced with ``ast`` (STYLE.md §8).

A *unit* is a top-level module or folder of ``mantyx_sync``: ``errors``, ``spec``,
``_http`` (every module in it), ``_peers`` ... Units sit on ordered layers and
may import only their own layer or layers below. Every ``import`` statement
counts, wherever it sits (module level, inside a function, under
``TYPE_CHECKING``): a type-only import is still a dependency. So does
``importlib.import_module``/``__import__`` with a literal name. Relative imports
are resolved to absolute names, and ``from m import name`` to the submodule
``m.name`` when there is one (else to ``m``, the package root for
``from mantyx_sync import Client``). A failure names both modules and the line.

CONTRIBUTING.rst draws the same picture for readers.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable
from pathlib import Path

import attrs
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mantyx_sync"
PKG = "mantyx_sync"

# Lowest first. A unit may import units on its own layer or any layer below.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({"_version", "errors", "types", "_base"})),
    # The wire models and their converter, which tool making builds on.
    ("wire models", frozenset({"_models"})),
    ("tool making", frozenset({"_tools"})),
    (
        "wire values",
        frozenset(
            {
                "tools",
                "local_tools",
                "spec",
                "controls",
                "guards",
                "events",
                "results",
                "history",
                "paging",
                "feedback",
                "attachments",
                "text",
                "messages",
                "_display",
            }
        ),
    ),
    # What Client(...) takes and hands out about HTTP: the transport seam, the
    # configuration, tokens, rate limits.
    ("http values", frozenset({"transport", "config", "auth", "rate_limits"})),
    ("http and peer protocols", frozenset({"_http", "_peers"})),
    # The peer toolsets a run connects to (LocalMcp, LocalA2A, LocalAgentApi).
    ("peer toolsets", frozenset({"mcp", "a2a", "agent_api"})),
    ("engine", frozenset({"_engine"})),
    # evals: client.evals and the EvalRun handle, beside the resources.
    ("facades", frozenset({"run", "session", "resources", "evals", "client", "agent"})),
    ("applications", frozenset({"serve", "cli", "notebook", "oauth", "credentials"})),
    # The package's face re-exports every public name, applications (OAuth) included.
    ("public face", frozenset({"__init__", "__main__"})),
)
# The emulator is outside the layers: it shares no code with the client, only _base.
OUTSIDE = frozenset({"testing"})
LAYER_OF = {unit: index for index, (_, units) in enumerate(LAYERS) for unit in units}
FACADE_ORDER = ("run", "session", "resources", "client", "agent", "__init__")


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


MODULES = sorted({_module_name(p) for p in PACKAGE.rglob("*.py")})
_MODULE_SET = frozenset(MODULES)
_PACKAGES = frozenset(_module_name(p) for p in PACKAGE.rglob("__init__.py"))
# importlib.import_module / __import__, called however they were imported.
_LOADERS = frozenset({"import_module", "__import__"})


def _named(base: str, name: str) -> str:
    """``from base import name``: the submodule ``base.name`` when there is one, else ``base``."""
    full = f"{base}.{name}" if base else name
    return full if full in _MODULE_SET else base


def _resolve(package: str, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in ``package``."""
    if not level:
        return module or ""
    base = package.split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _loaded_by(call: ast.Call, package: str) -> str | None:
    """The module an ``import_module("...")`` / ``__import__("...")`` call loads, if literal."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in _LOADERS or not call.args:
        return None
    first = call.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return "<dynamic>"
    target: str = first.value
    if target.startswith("."):
        # import_module(".x", __name__ / __package__ / "mantyx_sync...") is relative.
        anchor = call.args[1] if len(call.args) > 1 else None
        if isinstance(anchor, ast.Constant) and isinstance(anchor.value, str):
            package = anchor.value
        level = len(target) - len(target.lstrip("."))
        target = _resolve(package, level, target.lstrip(".") or None)
    return target


def imports_in(text: str, source: str, *, is_package: bool = False) -> list[Import]:
    """Every import in one module's text, each target an absolute module name.

    ``from m import name`` counts as importing ``m.name`` when that is a module
    of the package and ``m`` otherwise, so ``from mantyx_sync import Client``
    is an import of the package root and ``from mantyx_sync import errors`` one
    of ``errors``. ``importlib.import_module`` and ``__import__`` with a literal
    name count like an ``import`` statement.
    """
    package = source if is_package else source.rpartition(".")[0]
    tree = ast.parse(text)
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
            base = _resolve(package, node.level, node.module)
            for target in dict.fromkeys(_named(base, alias.name) for alias in node.names):
                found.append(Import(source, target, node.lineno, nested))
        elif isinstance(node, ast.Call):
            target = _loaded_by(node, package)
            if target is not None and target != "<dynamic>":
                found.append(Import(source, target, node.lineno, True))
    return found


def _imports_of(path: Path) -> list[Import]:
    text = path.read_text(encoding="utf-8")
    return imports_in(text, _module_name(path), is_package=path.name == "__init__.py")


IMPORTS = [i for path in sorted(PACKAGE.rglob("*.py")) for i in _imports_of(path)]


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
    assert {"resources", "_http", "_engine"} <= _units_imported_by("client")
    assert {"run", "session", "_http"} <= _units_imported_by("resources")
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
    bad = [i for i in SDK_IMPORTS if unit_of(i.source) in {"errors", "types", "_version"}]
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
    for module in (f"{PKG}._http.transport", f"{PKG}._http.retry", f"{PKG}.config"):
        units = {unit_of(t) for t in _deps(module)}
        assert units <= {"_base", "errors", "_version", "_http", "transport", "config"}, module


def test_stream_reads_only_events_among_values() -> None:
    units = {unit_of(t) for t in _deps(f"{PKG}._http.stream")}
    assert units & dict(LAYERS)["wire values"] == {"events"}


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


def _cycle(edges: Iterable[tuple[str, str]]) -> list[str] | None:
    """One cycle of the directed graph ``edges`` (as a closed trail), or None."""
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    done: set[str] = set()

    def visit(node: str, trail: list[str]) -> list[str] | None:
        if node in trail:
            return [*trail[trail.index(node) :], node]
        if node in done:
            return None
        for dep in sorted(graph.get(node, ())):
            found = visit(dep, [*trail, node])
            if found:
                return found
        done.add(node)
        return None

    for node in sorted(graph):
        found = visit(node, [])
        if found:
            return found
    return None


def _part(module: str, depth: int) -> str:
    """``mantyx_sync._peers.mcp.client`` at depth 1 -> ``_peers``, at depth 2 -> ``_peers.mcp``."""
    return ".".join(module.removeprefix(f"{PKG}.").split(".")[:depth]) if module != PKG else ""


def _cycles_at(depth: int) -> list[str] | None:
    """A cycle among the SDK's units (1), their sub-packages (2) or modules (0)."""
    edges = []
    for i in SDK_IMPORTS:
        if depth:
            source, target = _part(i.source, depth), _part(i.target, depth)
        else:
            source, target = i.source, i.target
        # A module's own package __init__ runs before it: not an edge back.
        if source != target and not source.startswith(f"{target}."):
            edges.append((source, target))
    return _cycle(edges)


@pytest.mark.parametrize("depth", [1, 2, 0], ids=["units", "sub-packages", "modules"])
def test_the_import_graph_has_no_cycles(depth: int) -> None:
    # Units, sub-packages and modules each: a cycle of units (errors -> spec ->
    # _models -> spec) is no cycle of modules, but it still means neither side
    # can be read, tested or moved without the other.
    found = _cycles_at(depth)
    detail = [str(i) for i in SDK_IMPORTS if found and _edge_in(i, found, depth)]
    assert found is None, f"import cycle: {' -> '.join(found)}" + _describe(detail)


def _edge_in(i: Import, trail: list[str], depth: int) -> bool:
    pairs = set(itertools.pairwise(trail))
    if depth:
        return (_part(i.source, depth), _part(i.target, depth)) in pairs
    return (i.source, i.target) in pairs


def test_the_cycle_finder_finds_a_cycle_of_units() -> None:
    assert _cycle([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]) == ["a", "b", "c", "a"]
    assert _cycle([("a", "b"), ("a", "c"), ("b", "c")]) is None
    assert _part(f"{PKG}._peers.mcp.client", 1) == "_peers"
    assert _part(f"{PKG}._peers.mcp.client", 2) == "_peers.mcp"


def test_sibling_sub_packages_do_not_import_each_other() -> None:
    # _peers/mcp, _peers/a2a and _peers/agent_api share only _peers' own
    # modules (jsonrpc); one peer protocol never reaches into another.
    crossing = []
    for i in SDK_IMPORTS:
        source, target = _part(i.source, 2), _part(i.target, 2)
        same_folder = _part(i.source, 1) == _part(i.target, 1)
        packages = f"{PKG}.{source}" in _PACKAGES and f"{PKG}.{target}" in _PACKAGES
        if same_folder and source != target and packages:
            crossing.append(i)
    assert crossing == [], _describe(crossing)


# Imports deliberately made inside a function because of what they cost a plain
# script (benchmarks/README.md, rows 4b and 7), each one listed on purpose. They
# still count everywhere above (layers, cycles), so a deferral cannot hide a cycle.
DEFERRED = frozenset(
    {
        # the engine (requests, the HTTP stack) with the first Client; runs and
        # sessions with the resource methods that use them: a plain script's
        # import needs none of it
        *((f"{PKG}.resources", f"{PKG}.{m}") for m in ("run", "session", "results")),
        *((f"{PKG}.client", f"{PKG}._http.{m}") for m in ("api", "client_config")),
        (f"{PKG}.resources", f"{PKG}._http.routes"),
        (f"{PKG}.client", f"{PKG}._http.transport"),
        (f"{PKG}.resources", f"{PKG}._engine.resolution"),
        (f"{PKG}.client", f"{PKG}._engine.tracing"),
        # evaluations, listings and feedback are loaded by the methods that use them
        (f"{PKG}.client", f"{PKG}.evals"),
        (f"{PKG}.resources", f"{PKG}.history"),
        (f"{PKG}.resources", f"{PKG}.feedback"),
        (f"{PKG}.resources", f"{PKG}.paging"),
        (f"{PKG}.session", f"{PKG}.history"),
        (f"{PKG}.results", f"{PKG}.feedback"),
        # schema derivation from a signature (@local_tool) or a model class, not a dict
        (f"{PKG}.local_tools", f"{PKG}._tools.signature"),
        (f"{PKG}._tools.object_schema", f"{PKG}._tools.schema"),
        # rendering a run for a notebook (_repr_html_/_repr_markdown_)
        (f"{PKG}.run", f"{PKG}._display.render"),
        # a run's text as it grows (Run.text_stream)
        (f"{PKG}.run", f"{PKG}._display.text"),
        (f"{PKG}.results", f"{PKG}._display.render"),
        # typed structured output (schema derivation, the converter), with the first output_type
        (f"{PKG}.spec", f"{PKG}._tools.output"),
        (f"{PKG}.results", f"{PKG}._tools.output"),
        # the CLI's commands (and the SDK behind them) once one is chosen: not for --help
        (f"{PKG}.cli", f"{PKG}.cli._commands"),
        (f"{PKG}.cli", f"{PKG}.cli._chat"),
        # the trial runner's server, on werkzeug (an extra): its --help and the
        # message asking to install werkzeug need none of it
        (f"{PKG}.serve.__main__", f"{PKG}.serve._devserver"),
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
    # Anywhere in testing/ (module level, functions, TYPE_CHECKING, importlib): only
    # testing itself, _base and errors (the foundation, importing nothing else of the
    # package: the emulator shares its argcheck, and its CassetteError is a
    # MantyxError), but for the one lazy load pinned below.
    bad = [
        i
        for i in IMPORTS
        if unit_of(i.source) == "testing"
        and unit_of(i.target) is not None
        and unit_of(i.target) not in ("testing", "_base", "errors")
    ]
    assert [(i.source, i.target) for i in bad] == [(f"{PKG}.testing.server", PKG)], _describe(bad)


def _dynamic_imports(path: Path) -> list[tuple[str, str]]:
    """``(enclosing function qualname, target)`` for importlib.import_module("...") calls."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path).rpartition(".")[0]
    found: list[tuple[str, str]] = []

    def walk(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                walk(child, (*scope, child.name))
                continue
            if isinstance(child, ast.Call) and (target := _loaded_by(child, package)):
                found.append((".".join(scope), target))
            walk(child, scope)

    walk(tree, ())
    return found


def test_only_local_mantyx_client_loads_the_sdk_lazily() -> None:
    loads = []
    for path in sorted((PACKAGE / "testing").rglob("*.py")):
        for scope, target in _dynamic_imports(path):
            loads.append((path.name, scope, target))
    sdk_loads = [load for load in loads if load[2] == "<dynamic>" or load[2].split(".")[0] == PKG]
    assert sdk_loads == [("server.py", "LocalMantyx.client", PKG)]


# Code outside the emulator that may import it: the package, its tests, the
# examples and the benchmarks, all through mantyx_sync.testing's public names.
_OUTSIDE_THE_EMULATOR = ("mantyx_sync", "tests", "examples", "benchmarks")


def _repository_imports() -> list[Import]:
    root = PACKAGE.parent
    found = []
    for folder in _OUTSIDE_THE_EMULATOR:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            # Peer venvs and node_modules under tests/peers are not ours.
            foreign = any(part.startswith(".") or part == "node_modules" for part in parts)
            if foreign or parts[:2] == (PKG, "testing"):
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            text = path.read_text(encoding="utf-8")
            found += imports_in(text, name, is_package=path.name == "__init__.py")
    return found


def _emulator_internals(imports: Iterable[Import]) -> list[Import]:
    """Imports of the emulator's private modules (``mantyx_sync.testing._app``)."""
    return [
        i
        for i in imports
        if i.target.startswith(f"{PKG}.testing.")
        and any(part.startswith("_") for part in i.target.split(".")[2:])
    ]


def test_nothing_outside_the_emulator_imports_its_internals() -> None:
    # The CLI's `emulator` command, the benchmarks' timed server and the tests
    # use LocalMantyx and the other names of mantyx_sync.testing, never its
    # private modules: the emulator's plumbing can change under them.
    imports = _repository_imports()
    assert any(i.target == f"{PKG}.testing" for i in imports)  # the scan sees the users
    found = _emulator_internals(imports)
    assert found == [], "import these from mantyx_sync.testing:" + _describe(found)


# Each import form, in a module of the HTTP layer, importing something above it.
_FORMS = {
    "import mantyx_sync.client": f"{PKG}.client",
    "import mantyx_sync": PKG,
    "from mantyx_sync import Client": PKG,
    "from mantyx_sync import client": f"{PKG}.client",
    "from mantyx_sync.client import Client": f"{PKG}.client",
    "from .. import client": f"{PKG}.client",
    "from .. import Client": PKG,
    "from ..client import Client": f"{PKG}.client",
    "from .._engine import executor": f"{PKG}._engine.executor",
    "from .._engine.executor import ToolExecutor": f"{PKG}._engine.executor",
    "import importlib\nimportlib.import_module('mantyx_sync.client')": f"{PKG}.client",
    "from importlib import import_module\nimport_module('..client', __name__)": f"{PKG}.client",
    "import_module('.client', 'mantyx_sync')": f"{PKG}.client",
    "__import__('mantyx_sync.client')": f"{PKG}.client",
    "def f():\n    from ..run import Run": f"{PKG}.run",
    "if TYPE_CHECKING:\n    from ..agent import Agent": f"{PKG}.agent",
}


@pytest.mark.parametrize("code", sorted(_FORMS))
def test_every_import_form_is_seen_and_layered(code: str) -> None:
    found = imports_in(code, f"{PKG}._http.poster")
    assert [i.target for i in found if unit_of(i.target)] == [_FORMS[code]]
    assert len(_wrong_way(i for i in found if unit_of(i.target))) == 1


def test_the_emulators_internals_are_seen_in_every_form() -> None:
    forms = [
        "from mantyx_sync.testing._state import EmulatorState",
        "from mantyx_sync.testing import _state",
        "import mantyx_sync.testing._app",
        "importlib.import_module('mantyx_sync.testing._app')",
    ]
    for code in forms:
        assert len(_emulator_internals(imports_in(code, "tests.x"))) == 1, code
    public = (
        "from mantyx_sync.testing import LocalMantyx\nimport mantyx_sync.testing.pytest_plugin\n"
        "from mantyx_sync.testing.server import LocalMantyx"
    )
    assert _emulator_internals(imports_in(public, "tests.x")) == []


def test_requests_stays_at_the_http_edges() -> None:
    # The MANTYX API goes through _http.transport only (_http.failures holds the
    # words it translates requests' exceptions into, _http.pools its sessions,
    # _http.deadline their connections' total deadline);
    # client.py names
    # requests.Session for its http_session option; the peer clients speak HTTP
    # to MCP/A2A servers.
    users = {
        i.source
        for i in IMPORTS
        if i.target.split(".")[0] in ("requests", "urllib3") and unit_of(i.source) != "testing"
    }
    allowed_units = {"_peers", "client"} | dict(LAYERS)["peer toolsets"]
    allowed_units |= dict(LAYERS)["applications"]
    assert f"{PKG}._http.transport" in users
    edges = {f"{PKG}._http.{name}" for name in ("transport", "failures", "pools", "deadline")}
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
