"""Names: what a user receives is importable from ``mantyx_sync``; ``__all__`` lists public names.

The first tests walk the public API from ``mantyx_sync.__all__``: the return
types of every public function, method and property, the types of public
attributes, and the arguments the package passes to a user's callbacks. Every
class of the package found that way must be ``mantyx_sync.<Name>``, so a user
can annotate, ``isinstance``-check and ``match`` on what they get without
importing a private module.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import dataclasses
import functools
import importlib
import inspect
import json
import pkgutil
import pydoc
import re
import subprocess
import sys
import textwrap
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mantyx_sync

PKG = "mantyx_sync"
PACKAGE = Path(mantyx_sync.__file__).parent

# Public sub-namespaces: users import their names as mantyx_sync.<module>.<name>.
NAMESPACES = frozenset(
    {
        "mantyx_sync.cli",
        "mantyx_sync.credentials",
        "mantyx_sync.evals",
        "mantyx_sync.events",
        "mantyx_sync.notebook",
        "mantyx_sync.oauth",
        "mantyx_sync.serve",
        "mantyx_sync.serve.a2a",
        "mantyx_sync.serve.agent_api",
        "mantyx_sync.testing",
        "mantyx_sync.testing.pytest_plugin",
    }
)
# Dunder methods whose results a user receives (iteration, `with`, calls, indexing).
RECEIVING_DUNDERS = frozenset({"__call__", "__enter__", "__getitem__", "__iter__", "__next__"})


def _modules() -> dict[str, Any]:
    found = {PKG: mantyx_sync}
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix=f"{PKG}."):
        if info.name.endswith("__main__"):
            continue
        try:
            found[info.name] = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
    return found


MODULES = _modules()
# Annotations are strings (PEP 563) that may name TYPE_CHECKING-only imports:
# resolve them against every module's names, the module's own names first.
NAMESPACE: dict[str, Any] = {}
for _module in MODULES.values():
    for _name, _value in vars(_module).items():
        NAMESPACE.setdefault(_name, _value)
try:  # the spec keywords are typed **Unpack[...] (a TYPE_CHECKING-only import)
    from typing import Unpack
except ImportError:  # Python 3.10
    from typing_extensions import Unpack
NAMESPACE.setdefault("Unpack", Unpack)
# Client()'s tracer_provider= and meter_provider= name OpenTelemetry's types, an
# optional extra: what a user passes, never a value the package hands back.
try:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider
except ImportError:
    MeterProvider = TracerProvider = object  # type: ignore[assignment,misc]
NAMESPACE.setdefault("MeterProvider", MeterProvider)
NAMESPACE.setdefault("TracerProvider", TracerProvider)
for _name in mantyx_sync.__all__:  # unions a module builds on first use (AnyRunEvent)
    NAMESPACE.setdefault(_name, getattr(mantyx_sync, _name))
for _name in mantyx_sync.events.__all__:  # ... and EventPayload
    NAMESPACE.setdefault(_name, getattr(mantyx_sync.events, _name))


def _private(module_name: str) -> bool:
    return any(part.startswith("_") for part in module_name.split(".")[1:])


def _ours(cls: type) -> bool:
    module = getattr(cls, "__module__", "")
    return module.split(".")[0] == PKG and not module.startswith(f"{PKG}.testing")


@functools.cache
def _names_for(module: str) -> dict[str, Any]:
    """Every module's names, the named module's own first (its ``P`` is its own ParamSpec)."""
    own = vars(sys.modules[module]) if module in sys.modules else {}
    return {**NAMESPACE, **own}


def _hints(obj: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj, localns=_names_for(getattr(obj, "__module__", "")))
    except NameError as exc:  # pragma: no cover - what to fix is in the message
        raise AssertionError(f"cannot resolve an annotation of {obj!r}: {exc}") from exc


def _classes_in(annotation: Any) -> Iterator[type]:
    """The classes an annotation names, through unions, generics and callables."""
    if isinstance(annotation, list):  # Callable[[A, B], R]'s argument list
        for item in annotation:
            yield from _classes_in(item)
        return
    if isinstance(annotation, type):
        yield annotation
    origin = typing.get_origin(annotation)
    if isinstance(origin, type):
        yield origin
    for arg in typing.get_args(annotation):
        yield from _classes_in(arg)


def _callback_arguments(annotation: Any) -> Iterator[type]:
    """The classes the package hands to a callback passed as an argument of this type."""
    if typing.get_origin(annotation) is collections.abc.Callable:
        params = typing.get_args(annotation)[0]
        if isinstance(params, list):
            yield from _classes_in(params)
        return
    for arg in typing.get_args(annotation):
        yield from _callback_arguments(arg)


def _functions_of(cls: type) -> Iterator[tuple[str, Callable[..., Any]]]:
    for name in dir(cls):
        if name.startswith("_") and name not in RECEIVING_DUNDERS:
            continue
        member = inspect.getattr_static(cls, name)
        if isinstance(member, property):
            member = member.fget
        elif isinstance(member, (classmethod, staticmethod)):
            member = member.__func__
        if inspect.isfunction(member) and member.__module__.split(".")[0] == PKG:
            yield name, member


@dataclasses.dataclass(frozen=True)
class SelfAttribute:
    """A public ``self.x = ...`` in a class's own methods, and where its type is stated."""

    parameter: str | None  # ``self.x = x``: the type of the __init__ argument x
    annotation: str | None  # ``self.x: T = ...``: T


def _self_attributes(cls: type) -> dict[str, SelfAttribute]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    found: dict[str, SelfAttribute] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, annotation = node.targets, None
        elif isinstance(node, ast.AnnAssign):
            targets, annotation = [node.target], ast.unparse(node.annotation)
        else:
            continue
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and not target.attr.startswith("_")
            ):
                value = node.value
                same = isinstance(value, ast.Name) and value.id == target.attr
                seen = found.get(target.attr, SelfAttribute(None, None))
                found[target.attr] = SelfAttribute(
                    seen.parameter or (target.attr if same else None),
                    seen.annotation or annotation,
                )
    return found


def _attribute_types(cls: type) -> Iterator[tuple[str, Any]]:
    """Public attributes and their types: declared, attrs fields, or set in a method."""
    declared = {k: v for k, v in _hints(cls).items() if not k.startswith("_")}
    yield from declared.items()
    init = vars(cls).get("__init__")
    params = _hints(init) if inspect.isfunction(init) else {}
    namespace = {**NAMESPACE, **vars(sys.modules[cls.__module__])}
    for name, found in _self_attributes(cls).items():
        if name in declared:
            continue
        if found.annotation is not None:
            yield name, eval(found.annotation, namespace)  # an annotation's own text
        elif found.parameter in params:
            yield name, params[found.parameter]


def _undeclared_attributes(cls: type) -> list[str]:
    """Public attributes whose type the walk cannot read: it would be blind to them."""
    declared = set(_hints(cls))
    init = vars(cls).get("__init__")
    params = set(inspect.signature(init).parameters) if inspect.isfunction(init) else set()
    return [
        f"{cls.__name__}.{name}"
        for name, found in _self_attributes(cls).items()
        if name not in declared and found.annotation is None and found.parameter not in params
    ]


def _received() -> dict[type, str]:
    """Every class of the package the public API hands out, with where it was first seen."""
    seen: dict[type, str] = {}
    queue: list[type] = []

    def add(found: Iterator[type], where: str) -> None:
        for cls in found:
            if _ours(cls) and cls not in seen:
                seen[cls] = where
                queue.append(cls)

    for name in mantyx_sync.__all__:
        obj = getattr(mantyx_sync, name)
        if inspect.isclass(obj):
            add(iter([obj]), f"mantyx_sync.{name}")
        elif inspect.isfunction(obj):
            hints = _hints(obj)
            add(_classes_in(hints.pop("return", None)), f"{name}()")
            for arg, annotation in hints.items():
                add(_callback_arguments(annotation), f"{name}({arg}=...)")
    while queue:
        cls = queue.pop()
        for name, function in _functions_of(cls):
            hints = _hints(function)
            add(_classes_in(hints.pop("return", None)), f"{cls.__name__}.{name}")
            for arg, annotation in hints.items():
                add(_callback_arguments(annotation), f"{cls.__name__}.{name}({arg}=...)")
        for name, annotation in _attribute_types(cls):
            add(_classes_in(annotation), f"{cls.__name__}.{name}")
    return seen


RECEIVED = _received()


def test_the_walk_reaches_deep_values() -> None:
    # Guard against a walk that silently stops at the surface.
    names = {cls.__name__ for cls in RECEIVED}
    assert {"TokenUsage", "ModelInfo", "LocalToolCall", "PlanStep", "EvalCaseResult"} <= names
    assert {"Model", "Pricing", "RateLimits", "UserInfo", "McpConnection"} <= names


# Where a class handed out may be imported from besides mantyx_sync itself: the
# event payloads and the evaluation classes live in their own namespaces.
HOMES = ("mantyx_sync.events", "mantyx_sync.evals")


def _importable(cls: type) -> bool:
    if cls.__name__ in mantyx_sync.__all__:
        return getattr(mantyx_sync, cls.__name__) is cls
    spaces = [importlib.import_module(home) for home in HOMES]
    return any(getattr(space, cls.__name__, None) is cls for space in spaces)


def test_everything_the_public_api_hands_out_is_importable_from_the_package() -> None:
    missing = sorted(
        f"{cls.__module__}.{cls.__name__} (from {where})"
        for cls, where in RECEIVED.items()
        if not _importable(cls)
    )
    assert missing == [], "re-export these from mantyx_sync/__init__.py:\n  " + "\n  ".join(missing)


def test_public_attributes_have_a_type_the_walk_can_read() -> None:
    blind = [name for cls in RECEIVED for name in _undeclared_attributes(cls)]
    assert blind == [], f"declare these with their type in the class body: {sorted(blind)}"


def test_the_walk_sees_callback_arguments_and_self_attributes() -> None:
    def f(on_event: Callable[[mantyx_sync.RunEvent], None] | None) -> None: ...

    hints = typing.get_type_hints(f, localns=NAMESPACE)
    assert list(_callback_arguments(hints["on_event"])) == [mantyx_sync.RunEvent]

    class Holder:
        def __init__(self, limit: mantyx_sync.RateLimit, other: int) -> None:
            self.limit = limit
            self.hidden = other
            self.stated: mantyx_sync.ModelInfo | None = None

    found = _self_attributes(Holder)
    assert found["limit"] == SelfAttribute("limit", None)
    assert found["stated"] == SelfAttribute(None, "mantyx_sync.ModelInfo | None")
    assert _undeclared_attributes(Holder) == ["Holder.hidden"]


# __all__


def _all_of(name: str) -> list[str]:
    declared = getattr(MODULES[name], "__all__", None)
    assert declared is not None, f"{name} has no __all__"
    return list(declared)


def test_no_all_lists_a_private_name() -> None:
    private = [
        f"{name}.{item}"
        for name in MODULES
        for item in _all_of(name)
        if item.startswith("_") and not (item.startswith("__") and item.endswith("__"))
    ]
    assert private == [], private


def _exporter(name: str) -> Any:
    """The package, or the namespace a public module is part of (``mantyx_sync.testing``
    for ``mantyx_sync.testing.server``)."""
    owners = [space for space in NAMESPACES if name.startswith(f"{space}.")]
    return MODULES[max(owners, key=len)] if owners else mantyx_sync


def test_a_public_modules_all_lists_only_what_the_package_exports() -> None:
    # mantyx_sync.events, .spec, .history ...: a name in their __all__ is a
    # promise, so it is mantyx_sync.<name> (the same object), or the name of the
    # namespace the module is part of (mantyx_sync.testing.server.LocalMantyx is
    # mantyx_sync.testing.LocalMantyx); their helpers for other modules of the
    # package stay out of __all__.
    stray = [
        f"{name}.{item}"
        for name in MODULES
        if name != PKG and not _private(name) and name not in NAMESPACES
        for item in _all_of(name)
        if getattr(_exporter(name), item, None) is not getattr(MODULES[name], item)
    ]
    assert stray == [], f"not public (drop from __all__) or not exported by mantyx_sync: {stray}"


def test_a_namespaces_names_are_documented() -> None:
    bare = [
        f"{name}.{item}"
        for name in sorted(NAMESPACES & set(MODULES))
        for item in _all_of(name)
        if callable(value := getattr(MODULES[name], item))
        and typing.get_origin(value) is None  # a type alias is documented where it is written
        and not value.__doc__
    ]
    assert bare == [], bare


def _source_map() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports_between_modules() -> dict[str, set[str]]:
    """module -> the names the package's other modules import from it (not submodules)."""
    sources = _source_map()
    found: dict[str, set[str]] = {}
    for importer, path in sources.items():
        package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module != importer:
                # A star import takes exactly the names the module's __all__ lists.
                names = [a.name for a in node.names]
                if names == ["*"]:
                    names = list(importlib.import_module(module).__all__)
                found.setdefault(module, set()).update(
                    name for name in names if f"{module}.{name}" not in sources
                )
    return found


def test_a_private_modules_all_lists_what_its_siblings_import() -> None:
    # A private module's __all__ is what it gives the rest of the package:
    # every name another module imports from it, and nothing else. A name
    # another module needs is no secret of its module, so it has no underscore.
    exports = _imports_between_modules()
    wrong = []
    for name in sorted(MODULES):
        if not _private(name) or name.endswith("__main__"):
            continue
        declared = set(_all_of(name))
        imported = exports.get(name, set())
        for item in sorted(imported - declared):
            wrong.append(f"{name}: add {item!r} (imported by the package)")
        for item in sorted(declared - imported):
            wrong.append(f"{name}: drop {item!r} (no other module imports it)")
    assert wrong == [], "\n  " + "\n  ".join(wrong)


# The lazy re-exports


def _type_checking_imports(init: Path) -> dict[str, set[str]]:
    tree = ast.parse(init.read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n)
    )
    return _imported_names(block.body)


def _imported_names(statements: list[ast.stmt]) -> dict[str, set[str]]:
    """``{".events": {"RunEvent", ...}}``: the names ``from`` imports bring in, by module."""
    found: dict[str, set[str]] = {}
    for node in statements:
        if isinstance(node, ast.ImportFrom):
            found.setdefault("." * node.level + (node.module or ""), set()).update(
                a.name for a in node.names
            )
    return found


def _stub() -> ast.Module:
    return ast.parse((PACKAGE / "__init__.pyi").read_text(encoding="utf-8"))


def test_the_stub_and_the_running_package_agree() -> None:
    # Type checkers read __init__.pyi, the running package reads _LAZY and
    # _MOVED: one list of names in two forms, so they must not drift.
    stated = _imported_names(_stub().body)
    runtime: dict[str, set[str]] = {"._version": {"__version__"}}
    for table in (mantyx_sync._LAZY, mantyx_sync._MOVED):
        for module, names in table.items():
            runtime.setdefault(module, set()).update(names.split())
    # The errors, and their 0.1 names (at run time those warn).
    runtime[".errors"] = {*mantyx_sync.errors.__all__, *mantyx_sync.errors.RENAMED}
    assert stated == runtime
    # Each import re-exports (``X as X``), as a stub must to export a name.
    bare = [
        a.name
        for node in _stub().body
        if isinstance(node, ast.ImportFrom)
        for a in node.names
        if a.asname != a.name
    ]
    assert bare == []
    declared = next(
        node.value
        for node in _stub().body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
    )
    assert sorted(ast.literal_eval(declared)) == sorted(mantyx_sync.__all__)


def test_init_states_each_public_name_once() -> None:
    # Every word of __init__.py's code (its docstring aside): the one statement of
    # each public name is its _LAZY or _MOVED entry; the errors are errors.__all__'s.
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node is not tree.body[0].value:  # type: ignore[attr-defined]
                words += re.findall(r"[A-Za-z_]\w*", node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.alias):
            words.append(node.asname or node.name)
    public = {*mantyx_sync.__all__, *mantyx_sync._HOME_OF} - {"__version__"}
    stated = {name: words.count(name) for name in public}
    assert {name for name, count in stated.items() if count > 1} == set()
    errors = set(mantyx_sync.errors.__all__)
    assert {name for name, count in stated.items() if count == 0} == errors


def test_the_package_all_is_what_it_loads() -> None:
    eager = {n for n in mantyx_sync.__all__ if n in vars(mantyx_sync)} - {"__version__"}
    assert set(mantyx_sync.errors.__all__) <= eager  # the rest: names loaded and kept
    assert set(mantyx_sync.__all__) == eager | set(mantyx_sync._MODULE_OF) | {"__version__"}
    assert set(mantyx_sync._HOME_OF).isdisjoint(mantyx_sync.__all__)


def test_the_emulators_lazy_table_and_its_type_checking_imports_agree() -> None:
    # The same for mantyx_sync.testing, whose every name is loaded on first use.
    import mantyx_sync.testing as testing

    lazy = {module: set(names.split()) for module, names in testing._LAZY.items()}
    assert _type_checking_imports(PACKAGE / "testing" / "__init__.py") == lazy
    assert set(testing.__all__) == set(testing._MODULE_OF)


def test_importing_the_package_loads_no_lazy_name() -> None:
    code = "import json, sys, mantyx_sync; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(done.stdout))
    lazy = {f"{PKG}{m}" for m in mantyx_sync._LAZY}
    assert loaded & lazy == set()


# Signatures that document (issue 22 item 4)

# Where a public signature says Any on purpose: no narrower type says what it takes.
ANY_ON_PURPOSE = {
    "Feedbacks.create(content_snapshot)": "any JSON value, sent as it is",
    "Feedbacks.__call__(content_snapshot)": "any JSON value, sent as it is",
    "RunResult.feedback(content_snapshot)": "any JSON value, sent as it is",
    "Evals.start(tool_mocks)": "sent to the server as it is; the shape is the server's",
    "LocalTool.invoke(return)": "the user's own function's return value",
    "LocalTool.validate_args(args)": "arguments as the model sent them, checked here",
    "LoopDetection.coerce(value)": "the spec's own check: any value, or a SpecError",
    "OutputSchema.coerce(value)": "the spec's own check: any value, or a SpecError",
    "RunResult.parse(return)": "the reply's JSON, or what the caller's validator returns",
    "Message.__getitem__(return)": "deprecated dict-style reading, as Any as the dicts were",
}


def _says_any(annotation: Any) -> bool:
    """``Any`` itself, in a union, or as the items of a sequence (``Sequence[Any]``)."""
    if annotation is Any:
        return True
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_says_any(arg) for arg in args)
    sequences = (collections.abc.Sequence, collections.abc.Iterable, list, tuple)
    return origin in sequences and bool(args) and args[0] is Any


def _public_signatures() -> Iterator[tuple[str, Any]]:
    """``("callable(argument)", annotation)`` (``return`` for the result; a spec
    keyword as ``SpecKeywords.name``) across what a user calls."""
    for name in mantyx_sync.__all__:
        obj = getattr(mantyx_sync, name)
        if inspect.isfunction(obj):
            for arg, hint in _hints(obj).items():
                yield f"{name}({arg})", hint
        elif typing.is_typeddict(obj):
            for key, hint in _hints(obj).items():
                yield f"{name}.{key}", hint
    for cls in RECEIVED:
        for method, function in _functions_of(cls):
            for arg, hint in _hints(function).items():
                yield f"{cls.__name__}.{method}({arg})", hint


def test_no_public_signature_says_any_where_a_type_exists() -> None:
    walked = dict(_public_signatures())
    assert "SpecKeywords.tools" in walked  # the walk sees the spec keywords
    # tools= takes ToolLike items, not Any: a list written in the call is
    # inferred against it, mixed kinds included (a list built apart is
    # annotated list[ToolLike]), and a dict or a string is flagged where it is written.
    assert not _says_any(walked["SpecKeywords.tools"])
    found = {where for where, hint in walked.items() if _says_any(hint)}
    unexplained = sorted(found - set(ANY_ON_PURPOSE))
    assert unexplained == [], f"type these (or say why in ANY_ON_PURPOSE): {unexplained}"
    assert sorted(set(ANY_ON_PURPOSE) - found) == [], "stale ANY_ON_PURPOSE entries"


HANDED_OUT = (
    "Run",
    "Session",
    "EvalRun",
    "Evals",
    "Runs",
    "Sessions",
    "Feedbacks",
    "Models",
    "Listing",
    "EventReplay",
)


def _wiring(cls: type) -> set[str]:
    """The package's own types its real constructor takes (``Api``, ``ResolvedTools`` ...)."""
    init = inspect.getattr_static(cls, "__init__")  # its own, or its base class's
    words = set(re.findall(r"[A-Za-z_]\w*", " ".join(map(str, init.__annotations__.values()))))
    known = set(dir(typing)) | set(dir(collections.abc)) | set(dir(builtins))
    return {w for w in words if len(w) > 1 and w[0].isupper() and w not in known} - set(
        mantyx_sync.__all__
    )


@pytest.mark.parametrize("name", HANDED_OUT)
def test_what_a_user_never_builds_says_so_and_help_hides_its_constructor(name: str) -> None:
    cls = getattr(mantyx_sync if name in mantyx_sync.__all__ else mantyx_sync.evals, name)
    shown = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    assert f"You never build a {name} yourself: " in shown
    assert "__init__(self, /)" in shown
    wiring = _wiring(cls)
    assert wiring, f"{name}'s constructor takes none of the package's own types?"
    leaked = sorted(w for w in wiring if re.search(rf"\b{w}\b", shown))
    assert leaked == [], f"help({name}) shows its constructor's wiring: {leaked}"
    assert str(inspect.signature(cls)) == "()"
