"""The package's one cattrs converter: wire JSON and local tools' values.

Wire values (the package's own attrs classes) have snake_case names and
camelCase keys; each class's hooks follow its :mod:`.plan` (which keys a
field reads, which is raw, what ``null`` means). Unknown keys are ignored. On
output, ``None`` and ``UNSET`` are omitted; ``False`` and ``{}`` are values.
The documented shapes are usually built by the plan's plain path instead
(:mod:`.wire`); this converter builds everything else and words every error.

Local tools' argument dicts become the handler's parameter types, and return
values plain JSON. Scalars are checked, not coerced (``"3"`` must not become
``3``, nor a dict its repr); tuples are written as lists.

Built once, on first use, under a lock: a script that never structures a body
does not import cattrs. cattrs' per-class code generation is idempotent, so the
converter is shared between threads. Never use ``cattrs.global_converter``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
import threading
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from ..errors import ToolError
from ..types import UNSET, UnsetType
from .plan import is_wire_class, plan_of

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "ANNOTATED",
    "LITERAL",
    "REQUIREDNESS_WRAPPERS",
    "Structurer",
    "converter",
    "describe_type",
    "identity",
    "is_dataclass_type",
    "is_model_class",
    "is_pydantic_model",
    "is_typeddict_type",
    "shorten",
    "special_forms",
    "structure_error_message",
    "structurer_for",
    "to_jsonable",
]

Structurer = Callable[[Mapping[str, Any]], Any]

_MESSAGE_MAX_CHARS: Final = 500
# Exact types the converter returns unchanged (subclasses such as IntEnum are not).
_PLAIN: Final = frozenset({str, int, float, bool})

# The key a RAW field is read from. No field's wire key looks like it, and it is
# always overwritten with the whole object before use, so a server cannot feed it.
# cattrs before 26.2 pastes keys into generated source: no quote, backslash or NUL.
_RAW_KEY: Final = "<raw body>"


def identity(args: Mapping[str, Any]) -> Any:
    return dict(args)


def is_pydantic_model(tp: Any) -> bool:
    # Duck-typed so pydantic is never imported here (it is an optional extra).
    return (
        isinstance(tp, type)
        and callable(getattr(tp, "model_json_schema", None))
        and callable(getattr(tp, "model_validate", None))
    )


def _extensions() -> types.ModuleType | None:
    # typing_extensions is optional (~0.5 MiB): looked up, never imported. A type
    # built with it exists only once it is loaded, so the lookup is exact.
    return sys.modules.get("typing_extensions")


def is_typeddict_type(tp: Any) -> bool:
    te = _extensions()
    if te is not None and te.is_typeddict(tp):
        return True
    return typing.is_typeddict(tp)


def is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def is_model_class(tp: Any) -> bool:
    return isinstance(tp, type) and (
        attrs.has(tp) or is_dataclass_type(tp) or is_typeddict_type(tp) or is_pydantic_model(tp)
    )


def special_forms(name: str) -> tuple[Any, ...]:
    found = [getattr(typing, name, None)]
    te = _extensions()
    if te is not None:
        found.append(getattr(te, name, None))
    return tuple(f for f in found if f is not None)


class _Forms:
    """``origin in forms``: one of the named special forms of typing or typing_extensions."""

    def __init__(self, *names: str) -> None:
        self._names = names

    def __contains__(self, origin: object) -> bool:
        return any(origin in special_forms(name) for name in self._names)


REQUIREDNESS_WRAPPERS: Final = _Forms("Required", "NotRequired", "ReadOnly")
ANNOTATED: Final = _Forms("Annotated")
LITERAL: Final = _Forms("Literal")


def _structure_factory(conv: cattrs.Converter, cls: type[Any]) -> Callable[[Any, type[Any]], Any]:
    from cattrs.gen import make_dict_structure_fn, override

    plan = plan_of(cls)
    overrides = {
        f.name: override(rename=_RAW_KEY if f.raw else f.wire) for f in plan.fields if f.init
    }
    lookups = [(f.wire, f.keys[1:]) for f in plan.read_fields if len(f.keys) > 1]
    defaulted = [f.wire for f in plan.read_fields if f.null_default]
    has_raw = bool(plan.raw_names)
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
    written = plan_of(cls).written

    def unstructure_wire(obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, wire in written:
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


def _make_converter() -> cattrs.Converter:
    import cattrs
    from cattrs.strategies import configure_union_passthrough

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
    conv.register_structure_hook_factory(is_wire_class, lambda cls: _structure_factory(conv, cls))
    conv.register_unstructure_hook_factory(
        is_wire_class, lambda cls: _unstructure_factory(conv, cls)
    )
    configure_union_passthrough(typing.Union[str, int, float, bool, None], conv)  # noqa: UP007
    for moment in (dt.datetime, dt.date, dt.time):
        conv.register_structure_hook(moment, lambda v, t: t.fromisoformat(v))
        conv.register_unstructure_hook(moment, lambda v: v.isoformat())
    conv.register_structure_hook(uuid.UUID, lambda v, _: uuid.UUID(v))
    conv.register_unstructure_hook(uuid.UUID, str)
    conv.register_structure_hook_func(is_pydantic_model, lambda v, t: t.model_validate(v))

    def structure_typeddict(value: Any, tp: Any) -> Any:
        # cattrs' own TypedDict hook misreads NotRequired under postponed
        # annotations; required keys are already checked by the JSON Schema.
        hints = typing.get_type_hints(tp, include_extras=True)
        out = {}
        for key, item in value.items():
            hint = hints.get(key, Any)
            while typing.get_origin(hint) in REQUIREDNESS_WRAPPERS:
                hint = typing.get_args(hint)[0]
            out[key] = item if hint is Any else conv.structure(item, hint)
        return out

    conv.register_structure_hook_func(is_typeddict_type, structure_typeddict)
    conv.register_unstructure_hook_func(is_pydantic_model, lambda v: v.model_dump(mode="json"))
    return conv


_built: cattrs.Converter | None = None
_build_lock = threading.Lock()


def converter() -> cattrs.Converter:
    """The package's only converter, built on first use (thread-safe)."""
    global _built
    conv = _built
    if conv is None:
        with _build_lock:
            conv = _built
            if conv is None:
                conv = _built = _make_converter()
    return conv


def to_jsonable(value: Any) -> Any:
    """A tool's return value as plain JSON data (attrs, dataclass, enum, pydantic...)."""
    if value is None or type(value) in _PLAIN:
        return value  # what most handlers return: no converter needed
    return converter().unstructure(value)


def structure_error_message(exc: BaseException) -> str:
    import cattrs

    if isinstance(exc, cattrs.BaseValidationError):
        text = "; ".join(cattrs.transform_error(exc, path="data"))
    else:
        text = f"{type(exc).__name__}: {exc}"
    return shorten(f"invalid arguments: {text}")


def shorten(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _MESSAGE_MAX_CHARS:
        return text[: _MESSAGE_MAX_CHARS - 3] + "..."
    return text


def structurer_for(tp: Any) -> Structurer:
    if is_pydantic_model(tp):

        def structure_model(args: Mapping[str, Any]) -> Any:
            try:
                return tp.model_validate(dict(args))
            except Exception as exc:  # pydantic.ValidationError, custom validators
                raise ToolError(shorten(f"invalid arguments: {exc}")) from exc

        return structure_model

    def structure(args: Mapping[str, Any]) -> Any:
        try:
            return converter().structure(dict(args), tp)
        except Exception as exc:
            raise ToolError(structure_error_message(exc)) from exc

    return structure


def describe_type(tp: Any) -> str:
    if isinstance(tp, type):
        return f"{tp.__module__}.{tp.__qualname__}" if tp.__module__ != "builtins" else tp.__name__
    return repr(tp)
