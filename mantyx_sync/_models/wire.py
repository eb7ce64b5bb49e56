"""The one private cattrs converter that maps wire JSON to mantyx_sync values and back.

Every attrs class is handled by the same pair of hook factories:

* Python attribute names are snake_case, wire keys camelCase
  (``tool_use_id`` ⇄ ``toolUseId``). A field can name its wire key explicitly
  with ``metadata={WIRE: "inputPer1MUsd"}`` where camel-casing would be wrong.
* On input, unknown keys are ignored, a missing or ``null`` key falls back to
  the snake_case spelling and then to any ``ALIASES`` the field declares (e.g.
  ``args`` falling back to ``input``), and ``null`` for a field whose default
  is not ``None`` means "use the default". A field marked ``RAW`` receives the
  whole input object. Scalars are checked, not coerced: JSON already has types,
  and coercing would turn ``"3"`` into ``3`` or a dict into its repr.
* On output, ``None`` and :data:`~mantyx_sync._base.types.UNSET` values are
  omitted, tuples become lists, and fields marked ``RAW`` or ``OMIT`` are left
  out. ``False`` and ``{}`` are values and are kept.

The converter is built, and its hooks registered, once, on first use (under a
lock): importing this module does not import cattrs, so a script that never
structures a body does not pay for it. cattrs then generates and caches
per-class functions on first use, which is idempotent, so the converter is
safe to share between threads. Never use ``cattrs.global_converter``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs

from .._base.types import UNSET, UnsetType
from ..errors import MantyxError, SpecError

if TYPE_CHECKING:
    import cattrs

__all__ = ["ALIASES", "OMIT", "RAW", "WIRE", "FromWire", "WireFormatError", "camel"]

T = TypeVar("T")

WIRE: Final = "mantyx_wire_name"
"""Field metadata key: the exact wire key, when camel-casing the name is wrong."""
ALIASES: Final = "mantyx_wire_aliases"
"""Field metadata key: further input keys tried, in order, when the wire key is absent."""
RAW: Final = "mantyx_wire_raw"
"""Field metadata key: the field receives the whole input object (never written out)."""
OMIT: Final = "mantyx_wire_omit"
"""Field metadata key: the field is never written out (it is sent some other way)."""

# Not a valid JSON key a server would send, so it cannot collide with a real one.
_RAW_KEY: Final = "\x00raw"

_CAMEL_RE = re.compile(r"_([a-z0-9])")
_SEGMENT_RE = re.compile(r"\.([a-z][a-z0-9_]*)")


class WireFormatError(MantyxError, ValueError):
    """A server body does not have the documented shape; the message names the field."""


def camel(name: str) -> str:
    """``tool_use_id`` → ``toolUseId``."""
    return _CAMEL_RE.sub(lambda m: m.group(1).upper(), name)


def _wire_name(a: attrs.Attribute[Any]) -> str:
    explicit = a.metadata.get(WIRE)
    return explicit if isinstance(explicit, str) else camel(a.name)


def _is_attrs_class(cls: Any) -> bool:
    return isinstance(cls, type) and attrs.has(cls)


def _structure_factory(conv: cattrs.Converter, cls: type[Any]) -> Callable[[Any, type[Any]], Any]:
    from cattrs.gen import make_dict_structure_fn, override

    fields = attrs.fields(cls)
    overrides = {}
    lookups: list[tuple[str, tuple[str, ...]]] = []
    defaulted: list[str] = []
    has_raw = False
    for a in fields:
        if a.metadata.get(RAW):
            overrides[a.name] = override(rename=_RAW_KEY)
            has_raw = True
            continue
        wire = _wire_name(a)
        overrides[a.name] = override(rename=wire)
        alternatives = tuple(k for k in (a.name, *a.metadata.get(ALIASES, ())) if k != wire)
        if alternatives:
            lookups.append((wire, alternatives))
        if a.default is not attrs.NOTHING and a.default is not None:
            defaulted.append(wire)
    generated = make_dict_structure_fn(cls, conv, **overrides)  # type: ignore[arg-type]

    def structure_wire(data: Any, _: type[Any]) -> Any:
        if not isinstance(data, Mapping):
            raise TypeError(f"expected a JSON object, got {type(data).__name__}")
        values = dict(data)
        for wire, alternatives in lookups:
            if values.get(wire) is None:
                for key in alternatives:
                    if values.get(key) is not None:
                        values[wire] = values[key]
                        break
        for wire in defaulted:
            if wire in values and values[wire] is None:
                del values[wire]
        if has_raw:
            values[_RAW_KEY] = dict(data)
        return generated(values, cls)

    return structure_wire


def _unstructure_factory(conv: cattrs.Converter, cls: type[Any]) -> Callable[[Any], dict[str, Any]]:
    plan = [
        (a.name, _wire_name(a))
        for a in attrs.fields(cls)
        if not (a.metadata.get(RAW) or a.metadata.get(OMIT))
    ]

    def unstructure_wire(obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, wire in plan:
            value = getattr(obj, name)
            if value is None or value is UNSET:
                continue
            out[wire] = conv.unstructure(value)
        return out

    return unstructure_wire


def _strict(kind: type[Any], *accept: type[Any]) -> Callable[[Any, type[Any]], Any]:
    accepted = accept or (kind,)

    def check(value: Any, _: type[Any]) -> Any:
        # bool is an int subclass in Python but never a number on the wire.
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {kind.__name__}, got bool")
        if not isinstance(value, accepted):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        if kind is int and isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"expected an integer, got {value!r}")
            return int(value)
        return kind(value) if kind is float else value

    return check


def _build() -> cattrs.Converter:
    import cattrs

    conv = cattrs.Converter(detailed_validation=True)
    conv.register_structure_hook(str, _strict(str))
    conv.register_structure_hook(bool, _strict(bool))
    # JSON has one number type; integral floats such as 2.0 are accepted as ints.
    conv.register_structure_hook(int, _strict(int, int, float))
    conv.register_structure_hook(float, _strict(float, int, float))
    conv.register_unstructure_hook(UnsetType, lambda v: v)
    conv.register_unstructure_hook_func(
        lambda t: isinstance(t, type) and issubclass(t, tuple) and not attrs.has(t),
        lambda v: [conv.unstructure(x) for x in v],
    )
    conv.register_structure_hook_factory(_is_attrs_class, lambda cls: _structure_factory(conv, cls))
    conv.register_unstructure_hook_factory(
        _is_attrs_class, lambda cls: _unstructure_factory(conv, cls)
    )
    return conv


_built: cattrs.Converter | None = None
_build_lock = threading.Lock()


def get_converter() -> cattrs.Converter:
    """The package's only converter, built on first use. Private to the package."""
    global _built
    conv = _built
    if conv is None:
        with _build_lock:
            conv = _built
            if conv is None:
                conv = _built = _build()
    return conv


def __getattr__(name: str) -> Any:
    # ``converter`` stays readable as a module attribute (built on first access).
    if name == "converter":
        return get_converter()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _describe(exc: BaseException, _type: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    return str(exc) or type(exc).__name__


def _errors(exc: BaseException, root: str, *, wire: bool) -> list[tuple[str, str]]:
    """``(path, message)`` pairs for a structuring failure, ``path`` in wire or Python spelling."""
    import cattrs

    if not isinstance(exc, cattrs.BaseValidationError):
        return [(root, _describe(exc, None))]
    pairs = []
    for line in cattrs.transform_error(exc, path=root, format_exception=_describe):
        message, _, where = line.rpartition(" @ ")
        if wire:
            where = _SEGMENT_RE.sub(lambda m: "." + camel(m.group(1)), where)
        pairs.append((where, message))
    return pairs


def _validation_error() -> type[Exception]:
    # Only called once the converter exists, so cattrs is already imported.
    from cattrs import BaseValidationError

    return BaseValidationError


def structure(data: Any, cls: type[T]) -> T:
    """Build ``cls`` from a server body, tolerating unknown keys.

    :raises WireFormatError: the body does not fit ``cls``; the message names
        the offending field (``@ $.tokens.inputTokens``).
    """
    conv = get_converter()
    try:
        return conv.structure(data, cls)
    except (_validation_error(), TypeError, ValueError) as exc:
        if isinstance(exc, SpecError):
            raise
        detail = "; ".join(f"{msg} @ {where}" for where, msg in _errors(exc, "$", wire=True))
        raise WireFormatError(f"unexpected {cls.__name__} shape: {detail}") from exc


def structure_input(data: Any, cls: type[T], *, path: str) -> T:
    """Build ``cls`` from a caller-supplied mapping (either key style).

    Unlike :func:`structure`, unknown keys are an error here: a typo in a spec
    option must not be silently dropped.

    :param path: where the value sits in the request body, for messages.
    :raises SpecError: with ``path`` extended to the offending field.
    """
    if not isinstance(data, Mapping):
        raise SpecError(f"expected an object, got {type(data).__name__}", path=path)
    known: dict[str, str] = {}
    for a in attrs.fields(cls):  # type: ignore[arg-type]
        if a.metadata.get(RAW):
            continue
        for key in (_wire_name(a), a.name, *a.metadata.get(ALIASES, ())):
            known[key] = a.name
    for key in data:
        if key not in known:
            allowed = ", ".join(sorted({v for v in known.values()}))
            raise SpecError(f"unknown key {key!r} (expected: {allowed})", path=path)
    conv = get_converter()
    try:
        return conv.structure(data, cls)
    except (_validation_error(), TypeError, ValueError) as exc:
        if isinstance(exc, SpecError):
            raise
        where, message = _errors(exc, path, wire=False)[0]
        raise SpecError(message, path=where) from exc


def unstructure(obj: Any) -> dict[str, Any]:
    """The camelCase wire object for an attrs value, ``None``/``UNSET`` omitted."""
    out = get_converter().unstructure(obj)
    if not isinstance(out, dict):
        raise TypeError(f"{type(obj).__name__} does not unstructure to a JSON object")
    return out


class FromWire:
    """Gives a value class :meth:`from_wire`, built by :func:`structure`."""

    __slots__ = ()

    @classmethod
    def from_wire(cls: type[T], body: Mapping[str, Any]) -> T:
        """Build the value from a response body or one list item (unknown keys pass).

        :raises WireFormatError: (a ``ValueError``) the body does not fit; the
            message names the field.
        """
        return structure(body, cls)
