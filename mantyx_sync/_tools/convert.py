"""Python values to and from JSON for local tools: one private cattrs converter.

Validated argument dicts become the handler's parameter types (attrs classes,
dataclasses, enums, tuples, sets, datetimes, pydantic models) and return values
become plain JSON, all through the converter owned by this module. The
converter (and cattrs) is built on first use: a tool given as a JSON Schema
receives its arguments as a dict and returns text, and never needs it.
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
    # typing_extensions is optional, and its TypedDict/Required/... must be
    # recognised. A type built with it can only exist once the module is loaded,
    # so looking it up when a type is examined is exact, and a script whose tools
    # never use it does not import it (~0.5 MiB).
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


def _make_converter() -> cattrs.Converter:
    import cattrs
    from cattrs.strategies import configure_union_passthrough

    conv = cattrs.Converter()
    configure_union_passthrough(typing.Union[str, int, float, bool, None], conv)  # noqa: UP007
    conv.register_structure_hook(dt.datetime, lambda v, _: dt.datetime.fromisoformat(v))
    conv.register_structure_hook(dt.date, lambda v, _: dt.date.fromisoformat(v))
    conv.register_structure_hook(dt.time, lambda v, _: dt.time.fromisoformat(v))
    conv.register_structure_hook(uuid.UUID, lambda v, _: uuid.UUID(v))
    conv.register_unstructure_hook(dt.datetime, lambda v: v.isoformat())
    conv.register_unstructure_hook(dt.date, lambda v: v.isoformat())
    conv.register_unstructure_hook(dt.time, lambda v: v.isoformat())
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
    conv.register_unstructure_hook_func(
        lambda t: is_pydantic_model(t), lambda v: v.model_dump(mode="json")
    )
    return conv


_built: cattrs.Converter | None = None
_build_lock = threading.Lock()


def converter() -> cattrs.Converter:
    """The tools' converter, built on first use (thread-safe)."""
    global _built
    conv = _built
    if conv is None:
        with _build_lock:
            conv = _built
            if conv is None:
                conv = _built = _make_converter()
    return conv


def to_jsonable(value: Any) -> Any:
    """Turn a tool's return value into plain JSON data (attrs, dataclass, enum, pydantic...).

    :param value: whatever a tool handler returned.
    :returns: dicts, lists and scalars ready for :func:`json.dumps`.
    """
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
