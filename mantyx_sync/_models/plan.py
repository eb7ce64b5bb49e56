"""One plan per wire class: which keys each field reads, and how, stated once.

A :class:`WirePlan` is built once per attrs class (cached) from its fields'
metadata: the wire key (camelCase, or ``WIRE``), the further keys tried in
order when it is absent or ``null`` (the snake_case name, then ``ALIASES``),
which field is ``RAW`` (the whole input object) or ``OMIT`` (never written),
and whether ``null`` means the field's default. The converter's hooks
(:mod:`.convert`) are built from it, and so is a plain path that builds the
documented shapes without cattrs: exact JSON types only, and anything else
(a wrong type, a missing required field, a type it does not model) is
:data:`UNUSUAL`, handed back to the converter, which then builds the same
value or says what is wrong.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from typing import Any, Final

import attrs

from ..types import UNSET

__all__ = [
    "ALIASES",
    "OMIT",
    "RAW",
    "UNUSUAL",
    "WIRE",
    "camel",
    "is_wire_class",
    "plan_of",
]

WIRE: Final = "mantyx_wire_name"
"""Field metadata key: the exact wire key, when camel-casing the name is wrong."""
ALIASES: Final = "mantyx_wire_aliases"
"""Field metadata key: further input keys tried, in order, when the wire key is absent."""
RAW: Final = "mantyx_wire_raw"
"""Field metadata key: the field receives the whole input object (never written out)."""
OMIT: Final = "mantyx_wire_omit"
"""Field metadata key: the field is never written out (it is sent some other way)."""

_CAMEL_RE = re.compile(r"_([a-z0-9])")


class _Unusual:
    """What the plain path returns for a shape it leaves to the converter."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNUSUAL"


UNUSUAL: Final = _Unusual()
_NOTHING: Final = attrs.NOTHING


def camel(name: str) -> str:
    """``tool_use_id`` → ``toolUseId``."""
    return _CAMEL_RE.sub(lambda m: m.group(1).upper(), name)


def is_wire_class(cls: Any) -> bool:
    """The package's own values; a tool's attrs classes keep cattrs' plain hooks."""
    return isinstance(cls, type) and attrs.has(cls) and cls.__module__.startswith("mantyx_sync.")


Reader = Callable[[Any], Any]
"""A field's plain reader: the value for a JSON value, or :data:`UNUSUAL`."""


@attrs.frozen
class FieldPlan:
    """How one field is read and written.

    :ivar keys: the input keys, in the order tried (the wire key first).
    :ivar null_default: ``null`` (or absence) means the default, which is not ``None``.
    :ivar required: the field has no default.
    """

    name: str
    init_name: str
    wire: str
    keys: tuple[str, ...]
    init: bool
    raw: bool
    omit: bool
    null_default: bool
    required: bool
    read: Reader = attrs.field(eq=False, repr=False)


@attrs.frozen
class WirePlan:
    """Every field's :class:`FieldPlan`, for one wire class."""

    cls: type[Any]
    fields: tuple[FieldPlan, ...]
    # What is read (init fields but RAW ones) and written (all but RAW and OMIT ones).
    read_fields: tuple[FieldPlan, ...] = attrs.field(repr=False)
    written: tuple[tuple[str, str], ...] = attrs.field(repr=False)
    raw_names: tuple[str, ...] = attrs.field(repr=False)
    # read_fields as tuples, for the loop that runs per body.
    _steps: tuple[tuple[str, tuple[str, ...], bool, bool, Reader, str], ...] = attrs.field(
        init=False, repr=False, eq=False
    )

    @_steps.default
    def _unpacked(self) -> tuple[tuple[str, tuple[str, ...], bool, bool, Reader, str], ...]:
        return tuple(
            (f.keys[0], f.keys[1:], f.required, f.null_default, f.read, f.init_name)
            for f in self.read_fields
        )

    def field(self, name: str) -> FieldPlan:
        return next(f for f in self.fields if f.name == name)

    def input_keys(self) -> dict[str, str]:
        """Every key a caller's mapping may use, to the field it sets."""
        return {key: f.name for f in self.fields if not f.raw for key in f.keys}

    def structure(self, data: Any) -> Any:
        """The value built from ``data`` without the converter, or :data:`UNUSUAL`."""
        if type(data) is not dict:
            return UNUSUAL
        kwargs: dict[str, Any] = {}
        for wire, others, required, null_default, read, init_name in self._steps:
            value = data.get(wire)
            if value is None:
                for key in others:
                    value = data.get(key)
                    if value is not None:
                        break
            if value is None:
                if required:
                    return UNUSUAL
                if null_default or wire not in data:
                    continue  # the default
            value = read(value)
            if value is UNUSUAL:
                return UNUSUAL
            kwargs[init_name] = value
        for name in self.raw_names:
            kwargs[name] = dict(data)
        try:
            return self.cls(**kwargs)
        except (TypeError, ValueError):  # a validator's refusal: the converter words it
            return UNUSUAL

    def unstructure(self, obj: Any) -> Any:
        """The camelCase object for ``obj`` without the converter, or :data:`UNUSUAL`."""
        out: dict[str, Any] = {}
        for name, wire in self.written:
            value = getattr(obj, name)
            if value is None or value is UNSET:
                continue
            value = plain(value)
            if value is UNUSUAL:
                return UNUSUAL
            out[wire] = value
        return out


_SCALARS: Final = (str, int, float, bool)
_FLOAT_INTS: Final = 2**53  # ints a float holds exactly


def plain(value: Any) -> Any:
    """``value`` as JSON data, as the converter writes it, or :data:`UNUSUAL`."""
    kind = type(value)
    if kind in _SCALARS or value is None:
        return value
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                return UNUSUAL
            item = plain(item)
            if item is UNUSUAL:
                return UNUSUAL
            out[key] = item
        return out
    if kind is list or kind is tuple:
        items = [plain(item) for item in value]
        return UNUSUAL if any(item is UNUSUAL for item in items) else items
    if is_wire_class(kind):
        return plan_of(kind).unstructure(value)
    return UNUSUAL


def _number(v: Any) -> Any:
    # JSON has one number type: an int is a float too (never a bool, nor one
    # too large for a float: the converter says so).
    if type(v) is float:
        return v
    if type(v) is int and -_FLOAT_INTS < v < _FLOAT_INTS:
        return float(v)
    return UNUSUAL


def _exact(kind: type[Any]) -> Reader:
    if kind is float:
        return _number
    return lambda v: v if type(v) is kind else UNUSUAL


def _optional(read: Reader) -> Reader:
    return lambda v: None if v is None else read(v)


def _str_keyed(v: Any) -> Any:
    if type(v) is not dict or not all(type(key) is str for key in v):
        return UNUSUAL
    return dict(v)


def _same(v: Any) -> Any:
    return v


def _never(_: Any) -> Any:
    return UNUSUAL


def _nested(cls: type[Any]) -> Reader:
    # Looked up when read: a class may name itself, or one defined after it.
    return lambda v: plan_of(cls).structure(v)


def _reader(tp: Any) -> Reader:
    """The plain reader for a field's type; :func:`_never` for a type it leaves to cattrs."""
    if tp is Any:
        return _same
    if tp in _SCALARS:
        return _exact(tp)
    if is_wire_class(tp):
        return _nested(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is dict and len(args) == 2 and args[0] is str and args[1] is Any:
        return _str_keyed
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        rest = tuple(a for a in args if a is not type(None))
        if len(rest) == 1:
            return _optional(_reader(rest[0]))
    return _never


_PLANS: dict[type[Any], WirePlan] = {}


def plan_of(cls: type[Any]) -> WirePlan:
    """The plan for an attrs class, built once (its string annotations resolved).

    Thread-safe: two threads may both build a class's first plan (the same
    plan); the first one stored is kept.
    """
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS.setdefault(cls, _build(cls))
    return plan


def _build(cls: type[Any]) -> WirePlan:
    try:
        attrs.resolve_types(cls)
        resolved = True
    except Exception:  # a name only a type checker sees: the converter reads those fields
        resolved = False
    fields = []
    for a in attrs.fields(cls):
        explicit = a.metadata.get(WIRE)
        wire = explicit if isinstance(explicit, str) else camel(a.name)
        keys = (wire, *(k for k in (a.name, *a.metadata.get(ALIASES, ())) if k != wire))
        fields.append(
            FieldPlan(
                name=a.name,
                init_name=a.alias or a.name,
                wire=wire,
                keys=tuple(dict.fromkeys(keys)),
                init=a.init,
                raw=bool(a.metadata.get(RAW)),
                omit=bool(a.metadata.get(OMIT)),
                null_default=a.default is not _NOTHING and a.default is not None,
                required=a.default is _NOTHING,
                read=_reader(a.type) if resolved else _never,
            )
        )
    return WirePlan(
        cls,
        tuple(fields),
        read_fields=tuple(f for f in fields if f.init and not f.raw),
        written=tuple((f.name, f.wire) for f in fields if not (f.raw or f.omit)),
        raw_names=tuple(f.init_name for f in fields if f.init and f.raw),
    )
