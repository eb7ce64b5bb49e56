"""Argument types checked where the user wrote them, from the annotations.

:func:`checked` wraps a public function (or ``__init__``): on each call every
argument is compared with its annotation, and a wrong type raises a
:class:`~mantyx_sync.SpecError` (or the error class given) naming the
argument, before the function body runs — so ``command=["npx", ...]`` where a
``str`` was expected fails at the line that wrote it, never deep inside a run.

The check is shallow where depth would cost or consume: ``str``, ``int``,
``float``, ``bool``, ``None``, unions, ``Literal``, classes, callables, and
containers whose items are checked when the container is a list, tuple, set
or mapping (an iterator is never consumed). ``Any`` and whatever cannot be
resolved at run time are accepted. Values are never shown in messages, only
their type: an argument may be a secret.
"""

from __future__ import annotations

import collections.abc as cabc
import functools
import inspect
import sys
import threading
import types
import typing
from collections.abc import Callable, Collection
from typing import Any, TypeVar

__all__ = ["checked", "checked_init"]

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

_ITEM_LIMIT = 10_000  # containers larger than this are checked shallowly
_SEQUENCES = (cabc.Sequence, cabc.Iterable, cabc.Collection, list, tuple, set, frozenset)
_MAPPINGS = (cabc.Mapping, cabc.MutableMapping, dict)


def type_name(hint: Any) -> str:
    """``hint`` as a reader would write it (``str | None``, ``Sequence[str]``)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is type(None) or hint is None:
        return "None"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in args)
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        if args and origin is not cabc.Callable:
            return f"{name}[{', '.join(type_name(arg) for arg in args)}]"
        return "callable" if origin is cabc.Callable else name
    return getattr(hint, "__name__", str(hint))


def _items_match(values: Any, hint: Any) -> bool:
    return all(matches(item, hint) for item in values)


def matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` fits the annotation ``hint`` (see the module docstring)."""
    if hint is Any or isinstance(hint, (TypeVar, str)):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(matches(value, arg) for arg in args)
    if origin is typing.Literal:
        return any(value == arg and type(value) is type(arg) for arg in args)
    if origin is typing.Annotated:
        return matches(value, args[0])
    if origin is None:
        return _matches_class(value, hint)
    if origin is cabc.Callable or origin is type:
        return callable(value)
    if origin in _MAPPINGS:
        if not isinstance(value, cabc.Mapping):
            return False
        if len(args) == 2 and len(value) <= _ITEM_LIMIT:
            return _items_match(value.keys(), args[0]) and _items_match(value.values(), args[1])
        return True
    if origin in _SEQUENCES:
        if isinstance(value, (str, bytes)) or not isinstance(value, cabc.Iterable):
            return False  # a str is an iterable of str, and never what was meant
        if not isinstance(value, origin) and origin in (list, tuple, set, frozenset):
            return False
        if not isinstance(value, (list, tuple, set, frozenset)) or len(value) > _ITEM_LIMIT:
            return True  # never consume an iterator
        if origin is tuple and args and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(
                matches(item, arg) for item, arg in zip(value, args, strict=True)
            )
        return not args or _items_match(value, args[0])
    return _matches_class(value, origin)


def _matches_class(value: Any, cls: Any) -> bool:
    if cls is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if cls is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if not isinstance(cls, type):
        return True
    try:
        return isinstance(value, cls)
    except TypeError:  # a non-runtime-checkable Protocol, a generic alias
        return True


class _Hints:
    """The resolved annotations of one function, computed on first use."""

    def __init__(
        self, fn: Callable[..., Any], resolve: Callable[[], dict[str, Any]] | None = None
    ) -> None:
        self._resolve = resolve or functools.partial(_resolve, fn)
        self._lock = threading.Lock()
        self._hints: dict[str, Any] | None = None
        self.signature = inspect.signature(fn)

    def get(self) -> dict[str, Any]:
        if self._hints is None:
            with self._lock:
                if self._hints is None:
                    self._hints = self._resolve()
        return self._hints


def _resolve(fn: Callable[..., Any], scope: dict[str, Any] | None = None) -> dict[str, Any]:
    raw = dict(getattr(fn, "__annotations__", {}))
    raw.pop("return", None)
    hints: dict[str, Any] = {}
    for name, annotation in raw.items():
        if not isinstance(annotation, str):
            hints[name] = annotation
            continue
        try:
            # Our own annotations, in the defining module (as typing.get_type_hints does).
            hints[name] = eval(annotation, fn.__globals__ if scope is None else scope)
        except Exception:
            continue  # a name only imported for type checking: not checked
    return hints


def checked(
    error: type[Exception], where: str | None = None, *, defer: Collection[str] = ()
) -> Callable[[F], F]:
    """Check each call's argument types against ``fn``'s annotations.

    :param error: the error class raised (``SpecError``; ``ConfigurationError``
        for the client's options); its ``path`` is set to the argument's name.
    :param where: how the message names the function (default its qualified
        name, ``__init__`` shown as the class).
    :param defer: arguments left to the function's own, more specific checks
        (which must still run before anything is sent).
    """

    def decorate(fn: F) -> F:
        label = where or fn.__qualname__.replace(".__init__", "")
        return _wrap(fn, _Hints(fn), label, error, frozenset(defer))

    return decorate


def checked_init(error: type[Exception], *, defer: Collection[str] = ()) -> Callable[[C], C]:
    """:func:`checked` for an attrs class's generated ``__init__`` (apply above ``@attrs``).

    attrs annotates that ``__init__`` with what each argument accepts (a
    converter's input type included); the names resolve in the class's module.
    """

    def decorate(cls: C) -> C:
        init = cls.__dict__["__init__"]  # the generated one, not an inherited one
        module = sys.modules[cls.__module__].__dict__
        hints = _Hints(init, functools.partial(_resolve, init, module))
        wrapped = _wrap(init, hints, cls.__name__, error, frozenset(defer))
        setattr(cls, "__init__", wrapped)  # noqa: B010
        return cls

    return decorate


def _wrap(fn: F, hints: _Hints, label: str, error: type[Exception], defer: frozenset[str]) -> F:
    variadic = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        resolved = hints.get()
        if resolved:
            try:
                bound = hints.signature.bind(*args, **kwargs)
            except TypeError:
                return fn(*args, **kwargs)  # let Python report the bad call itself
            for name, value in bound.arguments.items():
                hint = resolved.get(name)
                if hint is None or name in ("self", "cls") or name in defer:
                    continue
                if hints.signature.parameters[name].kind in variadic:
                    continue
                if not matches(value, hint):
                    raise _error(error, label, name, value, hint)
        return fn(*args, **kwargs)

    return typing.cast(F, wrapper)


def _error(error: type[Exception], label: str, name: str, value: Any, hint: Any) -> Exception:
    exc = error(f"{label}(): {name} must be {type_name(hint)}, got {_shape(value)}")
    if hasattr(exc, "path"):
        exc.path = name
    return exc


def _shape(value: Any) -> str:
    """The type of ``value``, with its items' types for a small container."""
    kind = type(value).__name__
    if isinstance(value, (list, tuple, set, frozenset)) and 0 < len(value) <= _ITEM_LIMIT:
        return f"{kind} of {' | '.join(sorted({type(item).__name__ for item in value}))}"
    if isinstance(value, cabc.Mapping) and 0 < len(value) <= _ITEM_LIMIT:
        keys = " | ".join(sorted({type(key).__name__ for key in value}))
        values = " | ".join(sorted({type(item).__name__ for item in value.values()}))
        return f"{kind} of {keys} to {values}"
    return kind
