"""Argument types checked against the annotations, at the call that passed them.

A wrong type raises the given error class naming the call, the argument, what
it must be and the type it got, never the value (it may be a secret). A value
of the right type outside a ``Literal``'s choices raises that class when it is
a ``ValueError``, else ``ValueError``.

Used only where a wrong type would otherwise fail late or far from the line
that wrote it (a value stored and sent later, a handler called later);
annotations and mypy cover the rest. The SDK and the emulator share it.

Shallow where depth would cost or consume: items are checked only in a list,
tuple, set or mapping (an iterator is never consumed; a ``str`` is never a
sequence); ``int`` excludes ``bool``, ``float`` includes ``int``; ``Any`` and
names that do not resolve at run time accept anything. A value whose exact
type the annotation names is accepted at once (well under a microsecond).
"""

from __future__ import annotations

import builtins
import collections.abc as cabc
import functools
import inspect
import itertools
import sys
import types
import typing
from collections.abc import Callable, Collection
from typing import Any, TypeVar

__all__ = ["checked", "checked_init"]

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

_ITEM_LIMIT = 10_000  # containers larger than this are checked shallowly
_CONCRETE = (list, tuple, set, frozenset)
_SEQUENCES = (cabc.Sequence, cabc.Iterable, cabc.Collection, *_CONCRETE)
_MAPPINGS = (cabc.Mapping, cabc.MutableMapping, dict)
_UNIONS = (typing.Union, types.UnionType)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)

_Checks = dict[str, tuple[Any, frozenset[type]]]  # argument -> (annotation, its exact types)


def type_name(hint: Any) -> str:
    """``hint`` as a reader would write it (``str | None``, ``Sequence[str]``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is None or hint is type(None):
        return "None"
    if origin in _UNIONS:
        return " | ".join(type_name(arg) for arg in args)
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in args)
    if origin is cabc.Callable:
        return "callable"
    if origin is not None:
        inner = ", ".join("..." if arg is Ellipsis else type_name(arg) for arg in args)
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{inner}]" if inner else name
    return getattr(hint, "__name__", str(hint))


def matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` fits the annotation ``hint`` (see the module docstring)."""
    if hint is Any or isinstance(hint, (TypeVar, str)):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in _UNIONS:
        return any(matches(value, arg) for arg in args)
    if origin is typing.Literal:
        return any(value == arg and type(value) is type(arg) for arg in args)
    if origin is typing.Annotated:
        return matches(value, args[0])
    if origin is None:
        return _is_instance(value, hint)
    if origin is cabc.Callable or origin is type:
        return callable(value)
    if origin in _MAPPINGS:
        if not isinstance(value, cabc.Mapping):
            return False
        if len(args) != 2 or len(value) > _ITEM_LIMIT or args == (Any, Any):
            return True
        return all(matches(k, args[0]) and matches(v, args[1]) for k, v in value.items())
    if origin in _SEQUENCES:
        if isinstance(value, (str, bytes)) or not isinstance(value, cabc.Iterable):
            return False
        if origin in _CONCRETE and not isinstance(value, origin):
            return False
        if not isinstance(value, _CONCRETE) or not args or len(value) > _ITEM_LIMIT:
            return True  # never consume an iterator
        if origin is tuple and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(map(matches, value, args))
        return args[0] is Any or all(matches(item, args[0]) for item in value)
    return _is_instance(value, origin)


def _is_instance(value: Any, cls: Any) -> bool:
    if cls is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if cls is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if not isinstance(cls, type):
        return True
    try:
        return isinstance(value, cls)
    except TypeError:  # a Protocol that is not runtime-checkable
        return True


def _exact(hint: Any) -> frozenset[type]:
    """The types whose exact instances fit ``hint`` at a glance (``str``, ``None``, a
    ``list`` for ``Sequence[Any]``): most values, checked with one set lookup."""
    args = typing.get_args(hint) if typing.get_origin(hint) in _UNIONS else (hint,)
    found: set[type] = set()
    for arg in args:
        origin = typing.get_origin(arg)
        if arg is None or arg is type(None):
            found.add(type(None))
        elif isinstance(arg, type) and origin is None:
            found.update((int, float) if arg is float else (arg,))
        elif origin in _SEQUENCES and set(typing.get_args(arg)) <= {Any, Ellipsis}:
            found.update(kind for kind in _CONCRETE if issubclass(kind, origin))
    return frozenset(found)


class _TypeOnly(dict[str, Any]):
    """Locals for ``eval``: a module's names, builtins, then ``Any``."""

    def __init__(self, scope: dict[str, Any]) -> None:
        super().__init__()
        self.scope = scope

    def __missing__(self, key: str) -> Any:
        return self.scope.get(key, getattr(builtins, key, Any))


def _resolve(fn: Callable[..., Any], scope: dict[str, Any], skip: Collection[str]) -> _Checks:
    """Each checked argument's annotation, resolved in ``scope``, with its exact types."""
    params = inspect.signature(fn).parameters
    checks: _Checks = {}
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        param = params.get(name)
        if param is None or name in skip or param.kind not in (*_POSITIONAL, param.KEYWORD_ONLY):
            continue
        try:
            # Our own annotations, in their module (as typing.get_type_hints does);
            # a name imported only for type checking reads as Any, the rest is checked
            # (``Callable[[AnyRunEvent], None]`` still needs a callable).
            hint = (
                eval(annotation, scope, _TypeOnly(scope))
                if isinstance(annotation, str)
                else annotation
            )
        except Exception:
            continue
        if hint is not Any:
            checks[name] = (hint, _exact(hint))
    return checks


def _wrap(
    fn: F,
    label: str,
    error: type[Exception],
    scope: dict[str, Any],
    skip: Collection[str],
    names: Callable[[], dict[str, Any]] | None = None,
) -> F:
    positional = [
        name for name, p in inspect.signature(fn).parameters.items() if p.kind in _POSITIONAL
    ]
    resolved: list[_Checks] = []  # filled on the first call: later names exist by then

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not resolved:
            resolved.append(_resolve(fn, {**scope, **(names() if names else {})}, skip))
        checks = resolved[0]
        for name, value in itertools.chain(zip(positional, args, strict=False), kwargs.items()):
            check = checks.get(name)
            if check is not None and type(value) not in check[1] and not matches(value, check[0]):
                raise _error(error, label, name, value, check[0])
        return fn(*args, **kwargs)

    return typing.cast(F, wrapper)


def checked(
    error: type[Exception],
    *,
    defer: Collection[str] = (),
    names: Callable[[], dict[str, Any]] | None = None,
) -> Callable[[F], F]:
    """Check each call's argument types against the function's annotations.

    :param error: the class raised for a wrong type (``ArgumentTypeError`` in
        the SDK, ``TypeError`` in the emulator); a ``path`` attribute it has is
        set to the argument's name.
    :param defer: arguments left to the function's own, more specific checks
        (which must still run before anything is stored or sent).
    :param names: called once, by the first call, for the names its annotations
        take from modules the function's own module imports only then.
    """

    def decorate(fn: F) -> F:
        label = fn.__qualname__.removesuffix(".__init__")
        skip = frozenset(defer) | {"self", "cls"}
        return _wrap(fn, label, error, fn.__globals__, skip, names)

    return decorate


def checked_init(error: type[Exception], *, defer: Collection[str] = ()) -> Callable[[C], C]:
    """:func:`checked` for an attrs class's generated ``__init__`` (apply above ``@attrs``).

    attrs annotates that ``__init__`` with what each argument accepts (a
    converter's input type included); the names resolve in the class's module.
    """

    def decorate(cls: C) -> C:
        init = cls.__dict__["__init__"]  # the generated one, not an inherited one
        scope = vars(sys.modules[cls.__module__])
        wrapped = _wrap(init, cls.__name__, error, scope, frozenset(defer) | {"self"})
        setattr(cls, "__init__", wrapped)  # noqa: B010
        return cls

    return decorate


def _literal_choices(hint: Any) -> list[Any]:
    if typing.get_origin(hint) is typing.Literal:
        return list(typing.get_args(hint))
    if typing.get_origin(hint) in _UNIONS:
        return [choice for arg in typing.get_args(hint) for choice in _literal_choices(arg)]
    return []


def _error(error: type[Exception], label: str, name: str, value: Any, hint: Any) -> Exception:
    exc: Exception
    if any(type(value) is type(choice) for choice in _literal_choices(hint)):
        kind = error if issubclass(error, ValueError) else ValueError
        exc = kind(f"{label}(): {name} must be one of {type_name(hint)}")
    else:
        exc = error(f"{label}(): {name} must be {type_name(hint)}, got {_shape(value)}")
    if hasattr(exc, "path"):
        exc.path = name
    return exc


def _shape(value: Any) -> str:
    """The type of ``value``, and its items' types when it is a small non-empty container."""
    kind = type(value).__name__
    if isinstance(value, cabc.Mapping) and 0 < len(value) <= _ITEM_LIMIT:
        keys = " | ".join(sorted({type(key).__name__ for key in value}))
        items = " | ".join(sorted({type(item).__name__ for item in value.values()}))
        return f"{kind} of {keys} to {items}"
    if isinstance(value, _CONCRETE) and 0 < len(value) <= _ITEM_LIMIT:
        return f"{kind} of {' | '.join(sorted({type(item).__name__ for item in value}))}"
    return kind
