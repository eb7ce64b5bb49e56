"""The emulator's argument checks: a wrong type fails at the call the user wrote.

:func:`checked` wraps a public method (and :func:`checked_init` an attrs
class's generated ``__init__``): on each call every argument is compared with
its annotation and a mismatch raises :class:`TypeError` naming the call, the
argument, the expected type and the type received — never the value, which may
be a secret. A value of the right type outside a ``Literal``'s choices raises
:class:`ValueError` instead.

The emulator never imports the SDK, so this is its own small checker. It
understands ``str``/``int``/``float``/``bool``/``None`` (an ``int`` is a
``float``; a ``bool`` is not an ``int``), unions, ``Literal``, classes,
callables, and containers, whose items it checks when they are a list, tuple,
set or mapping (an iterator is never consumed; a ``str`` is never a sequence).
``Any`` and names that do not resolve at run time accept anything.
"""

from __future__ import annotations

import collections.abc as cabc
import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["checked", "checked_init"]

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

_CONCRETE = (list, tuple, set, frozenset)
_SEQUENCES = (cabc.Sequence, cabc.Iterable, cabc.Collection, *_CONCRETE)
_MAPPINGS = (cabc.Mapping, cabc.MutableMapping, dict)
_UNIONS = (typing.Union, types.UnionType)


def type_name(hint: Any) -> str:
    """``hint`` as a reader would write it (``str | None``, ``list[ToolCall]``)."""
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
    if origin is None:
        return _is_instance(value, hint)
    if origin is cabc.Callable:
        return callable(value)
    if origin in _MAPPINGS:
        if not isinstance(value, cabc.Mapping):
            return False
        return len(args) != 2 or all(
            matches(key, args[0]) and matches(item, args[1]) for key, item in value.items()
        )
    if origin in _SEQUENCES:
        if isinstance(value, (str, bytes)) or not isinstance(value, cabc.Iterable):
            return False
        if origin in _CONCRETE and not isinstance(value, origin):
            return False
        if not isinstance(value, _CONCRETE) or not args:
            return True  # never consume an iterator
        if origin is tuple and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(map(matches, value, args))
        return all(matches(item, args[0]) for item in value)
    return _is_instance(value, origin)


def _is_instance(value: Any, cls: Any) -> bool:
    if cls is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if cls is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if not isinstance(cls, type):
        return True
    return isinstance(value, cls)


def _literal_choices(hint: Any) -> list[Any]:
    """The ``Literal`` values ``hint`` allows (also inside a union)."""
    if typing.get_origin(hint) is typing.Literal:
        return list(typing.get_args(hint))
    if typing.get_origin(hint) in _UNIONS:
        return [choice for arg in typing.get_args(hint) for choice in _literal_choices(arg)]
    return []


def _resolve(fn: Callable[..., Any], scope: dict[str, Any]) -> dict[str, Any]:
    hints: dict[str, Any] = {}
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        if name == "return":
            continue
        if not isinstance(annotation, str):
            hints[name] = annotation
            continue
        try:
            hints[name] = eval(annotation, scope)  # our own annotations, in their module
        except Exception:
            continue  # a name imported only for type checking: not checked
    return hints


def _error(label: str, name: str, value: Any, hint: Any) -> Exception:
    choices = _literal_choices(hint)
    if any(type(value) is type(choice) for choice in choices):
        return ValueError(f"{label}(): {name} must be one of {type_name(hint)}")
    return TypeError(f"{label}(): {name} must be {type_name(hint)}, got {_shape(value)}")


def _shape(value: Any) -> str:
    """The type of ``value``, and its items' types when it is a non-empty container."""
    kind = type(value).__name__
    if isinstance(value, cabc.Mapping) and value:
        keys = " | ".join(sorted({type(key).__name__ for key in value}))
        items = " | ".join(sorted({type(item).__name__ for item in value.values()}))
        return f"{kind} of {keys} to {items}"
    if isinstance(value, _CONCRETE) and value:
        return f"{kind} of {' | '.join(sorted({type(item).__name__ for item in value}))}"
    return kind


def _wrap(fn: F, label: str, scope: dict[str, Any]) -> F:
    signature = inspect.signature(fn)
    skipped = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    resolved: list[dict[str, Any]] = []  # filled on the first call: later names exist by then

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not resolved:
            resolved.append(_resolve(fn, scope))
        hints = resolved[0]
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # a missing or unknown argument: Python's own error
        for name, value in bound.arguments.items():
            hint = hints.get(name)
            if hint is None or name == "self" or signature.parameters[name].kind in skipped:
                continue
            if not matches(value, hint):
                raise _error(label, name, value, hint)
        return fn(*args, **kwargs)

    return typing.cast(F, wrapper)


def checked(fn: F) -> F:
    """Check the argument types of each call of ``fn`` against its annotations."""
    label = fn.__qualname__.removesuffix(".__init__")
    return _wrap(fn, label, fn.__globals__)


def checked_init(cls: C) -> C:
    """:func:`checked` for an attrs class's generated ``__init__`` (apply above ``@attrs``).

    attrs annotates that ``__init__`` with each field's type, or with what its
    converter accepts; the names resolve in the class's module.
    """
    init = cls.__dict__["__init__"]
    scope = vars(sys.modules[cls.__module__])
    setattr(cls, "__init__", _wrap(init, cls.__name__, scope))  # noqa: B010
    return cls
