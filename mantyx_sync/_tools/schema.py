"""JSON Schema for local tools, derived from Python types.

An unusual type never fails a tool definition: it becomes a permissive schema
(``{}`` for a property) and a :class:`SchemaWarning` naming it (the server
validates arguments too). Schemas are inlined (no ``$ref``): LLM providers
differ in how much JSON Schema they accept. A recursive type is cut off with
``{}`` where it refers back to itself.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import enum
import inspect
import json
import logging
import re
import sys
import types
import typing
import uuid
import warnings
from collections.abc import Mapping
from typing import Any, Final

import attrs

from .._models.convert import (
    ANNOTATED,
    LITERAL,
    REQUIREDNESS_WRAPPERS,
    describe_type,
    is_dataclass_type,
    is_model_class,
    is_pydantic_model,
    is_typeddict_type,
    special_forms,
)
from ..errors import SchemaWarning
from .docstring import parse_docstring

__all__ = [
    "JSON_DEFAULT_MISSING",
    "Deriver",
    "JSONSchema",
    "degrade_schema",
    "inline_refs",
    "json_default",
]

logger = logging.getLogger(__name__)

JSONSchema = dict[str, Any]


def _warning_stacklevel() -> int:
    # Point the warning at the first frame outside mantyx_sync (the user's definition).
    level = 1
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("mantyx_sync"):
        frame = frame.f_back
        level += 1
    return level


def degrade_schema(construct: str, where: str | None, fallback: JSONSchema) -> JSONSchema:
    place = f" in {where}" if where else ""
    message = (
        f"cannot express {construct}{place} as JSON Schema; "
        f"using the permissive schema {json.dumps(fallback)}"
    )
    logger.warning("%s", message)
    warnings.warn(message, SchemaWarning, stacklevel=_warning_stacklevel())
    return dict(fallback)


# bool before int: a bool is an int to isinstance, never a number in JSON.
_JSON_TYPES: Final = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (type(None), "null")
)  # fmt: skip
_JSON_SCALARS: Final = tuple(kind for kind, _ in _JSON_TYPES)

# Keywords that only constrain values of their own type, so adding "null" to
# "type" keeps their meaning for the non-null branch.
_TYPE_SCOPED_KEYS: Final = frozenset(
    {
        "type", "description", "title", "default", "format", "items", "prefixItems",
        "minItems", "maxItems", "uniqueItems", "properties", "required",
        "additionalProperties", "propertyNames", "minimum", "maximum", "minLength",
        "maxLength", "pattern", "examples",
    }
)  # fmt: skip


def _json_type_of(value: Any) -> str | None:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), None)


def _enum_schema(values: list[Any]) -> JSONSchema:
    schema: JSONSchema = {"enum": values}
    kinds = {_json_type_of(v) for v in values}
    non_null = sorted(k for k in kinds if k not in (None, "null"))
    if len(non_null) == 1 and None not in kinds:
        schema["type"] = non_null[0] if "null" not in kinds else [non_null[0], "null"]
    return schema


def _nullable(schema: JSONSchema) -> JSONSchema:
    if not schema:
        return schema
    t = schema.get("type")
    if "enum" in schema and set(schema) <= {"enum", "type", "description", "title", "default"}:
        out = dict(schema)
        if None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        if isinstance(t, str):
            out["type"] = [t, "null"]
        return out
    if set(schema) <= _TYPE_SCOPED_KEYS and isinstance(t, str):
        return {**schema, "type": [t, "null"]}
    if set(schema) <= _TYPE_SCOPED_KEYS and isinstance(t, list):
        return schema if "null" in t else {**schema, "type": [*t, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


# Plain classes and their schemas (a copy is handed out: callers may add keys).
_SIMPLE: Final[Mapping[Any, JSONSchema]] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    dt.datetime: {"type": "string", "format": "date-time"},
    dt.date: {"type": "string", "format": "date"},
    dt.time: {"type": "string", "format": "time"},
    uuid.UUID: {"type": "string", "format": "uuid"},
    **{key: {"type": "array"} for key in (list, tuple, cabc.Sequence, cabc.MutableSequence)},
    **{key: {"type": "array", "uniqueItems": True} for key in (set, frozenset)},
    **{key: {"type": "object"} for key in (dict, cabc.Mapping, cabc.MutableMapping)},
}

JSON_DEFAULT_MISSING: Final = object()


def json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return JSON_DEFAULT_MISSING
    return value


def _class_description(cls: type) -> str | None:
    doc = cls.__doc__
    if not doc:
        return None
    # dataclasses synthesise "Name(field: type, ...)"; that is not a description.
    if is_dataclass_type(cls) and doc.startswith(f"{cls.__name__}("):
        return None
    summary = parse_docstring(doc).summary
    return summary or None


def inline_refs(schema: JSONSchema) -> JSONSchema | None:
    """Replace ``#/$defs/...`` references by their targets; None when they recurse."""
    defs = schema.get("$defs") or schema.get("definitions") or {}
    if not defs:
        return schema

    def resolve(node: Any, active: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(n, active) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            match = re.fullmatch(r"#/(?:\$defs|definitions)/(.+)", ref)
            if match is None or match.group(1) not in defs:
                raise LookupError(ref)
            name = match.group(1)
            if name in active:
                raise RecursionError(name)
            target = resolve(defs[name], (*active, name))
            siblings = {k: resolve(v, active) for k, v in node.items() if k != "$ref"}
            return {**target, **siblings}
        return {k: resolve(v, active) for k, v in node.items() if k not in ("$defs", "definitions")}

    try:
        result: JSONSchema = resolve(schema, ())
    except (RecursionError, LookupError):
        return None
    return result


def _typeddict_key_required(hint: Any, default: bool) -> bool:
    # With postponed annotations, __required_keys__ cannot see Required/NotRequired
    # written as strings; the resolved hints can.
    while typing.get_origin(hint) in ANNOTATED:
        hint = typing.get_args(hint)[0]
    origin = typing.get_origin(hint)
    if origin in special_forms("NotRequired"):
        return False
    if origin in special_forms("Required"):
        return True
    return default


class Deriver:
    """One derivation pass: :meth:`schema` derives a fresh JSON Schema from an annotation,
    remembering the classes being expanded to cut recursion.

    Supports ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``,
    ``Optional``/``X | None``, unions, ``Literal``, :class:`enum.Enum`
    subclasses, ``list``/``Sequence``, ``tuple`` (variadic and fixed), ``set``/
    ``frozenset``, ``dict[str, T]``, ``TypedDict``, attrs classes, dataclasses,
    pydantic models, ``NewType``, ``Annotated[T, "description"]`` (a mapping in
    the metadata is merged into the schema), ``datetime``/``date``/``time``/
    ``UUID`` (strings with a ``format``). Unsupported constructs become ``{}``
    with a :class:`SchemaWarning`.
    """

    def __init__(self, where: str | None = None) -> None:
        self._stack: list[Any] = []
        self.where = where

    def degrade(self, construct: str, fallback: JSONSchema | None = None) -> JSONSchema:
        return degrade_schema(construct, self.where, {} if fallback is None else fallback)

    def schema(self, tp: Any) -> JSONSchema:
        if tp is Any or tp is object or tp is inspect.Parameter.empty:
            return {}
        if tp is None or tp is type(None):
            return {"type": "null"}
        if isinstance(tp, (str, typing.ForwardRef)):
            return self.degrade(f"the unresolved annotation {tp!r}")
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is not None:
            return self._generic(tp, origin, args)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._enum(tp)
        simple = _SIMPLE.get(tp) if isinstance(tp, cabc.Hashable) else None
        if simple is not None:
            return dict(simple)
        supertype = getattr(tp, "__supertype__", None)
        if supertype is not None:  # typing.NewType
            return self.schema(supertype)
        if is_model_class(tp):
            return self._model(tp)
        return self.degrade(f"the type {describe_type(tp)}")

    def _generic(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> JSONSchema:
        if origin in ANNOTATED:
            return self._annotated(args[0], tp.__metadata__)
        if origin in REQUIREDNESS_WRAPPERS:
            return self.schema(args[0])
        if origin is typing.Union or origin is types.UnionType:
            return self._union(args)
        if origin in LITERAL:
            return self._literal(args)
        if origin in (list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection):
            return self._array(args[0] if args else Any)
        if origin is tuple:
            return self._tuple(args)
        if origin in (set, frozenset, cabc.Set, cabc.MutableSet):
            return {**self._array(args[0] if args else Any), "uniqueItems": True}
        if origin in (dict, cabc.Mapping, cabc.MutableMapping):
            return self._mapping(args)
        return self.degrade(f"the generic type {tp!r}")

    def _annotated(self, base: Any, metadata: tuple[Any, ...]) -> JSONSchema:
        schema = dict(self.schema(base))
        for item in metadata:
            if isinstance(item, str):
                schema.setdefault("description", item)
            elif isinstance(item, Mapping):
                schema.update(item)
        return schema

    def _union(self, members: tuple[Any, ...]) -> JSONSchema:
        nullable = any(m is None or m is type(None) for m in members)
        others = [m for m in members if m is not None and m is not type(None)]
        schemas = [self.schema(m) for m in others]
        if any(not s for s in schemas):
            return {}
        if len(schemas) == 1:
            return _nullable(schemas[0]) if nullable else schemas[0]
        if all(set(s) == {"type"} and isinstance(s["type"], str) for s in schemas):
            kinds = list(dict.fromkeys(s["type"] for s in schemas))
            return {"type": [*kinds, "null"] if nullable else kinds}
        if nullable:
            schemas.append({"type": "null"})
        return {"anyOf": schemas}

    def _literal(self, values: tuple[Any, ...]) -> JSONSchema:
        plain = [v.value if isinstance(v, enum.Enum) else v for v in values]
        if not all(isinstance(v, _JSON_SCALARS) for v in plain):
            return self.degrade(f"the literal values {values!r}")
        return _enum_schema(plain)

    def _enum(self, tp: type[enum.Enum]) -> JSONSchema:
        values = [member.value for member in tp]
        if not values or not all(isinstance(v, _JSON_SCALARS) for v in values):
            return self.degrade(f"the enum {describe_type(tp)} (values must be JSON scalars)")
        schema = _enum_schema(values)
        description = _class_description(tp) if tp.__doc__ != "An enumeration." else None
        if description and description != tp.__name__:
            schema["description"] = description
        return schema

    def _array(self, item: Any) -> JSONSchema:
        items = self.schema(item)
        return {"type": "array", "items": items} if items else {"type": "array"}

    def _tuple(self, args: tuple[Any, ...]) -> JSONSchema:
        if len(args) == 2 and args[1] is Ellipsis:
            return self._array(args[0])
        if not args or args == ((),):
            return {"type": "array", "maxItems": 0}
        prefix = [self.schema(a) for a in args]
        schema: JSONSchema = {"type": "array", "prefixItems": prefix}
        if all(p == prefix[0] for p in prefix) and prefix[0]:
            schema["items"] = prefix[0]
        schema["minItems"] = schema["maxItems"] = len(prefix)
        return schema

    def _mapping(self, args: tuple[Any, ...]) -> JSONSchema:
        if not args:
            return {"type": "object"}
        key, value = args
        schema: JSONSchema = {"type": "object"}
        if key not in (str, Any):
            key_schema = self.schema(key) if key not in (int, float, bool) else {}
            if key_schema.get("type") != "string":
                return self.degrade(
                    f"the mapping key type {describe_type(key)}", {"type": "object"}
                )
            if "enum" in key_schema:
                schema["propertyNames"] = key_schema
        value_schema = self.schema(value)
        if value_schema:
            schema["additionalProperties"] = value_schema
        return schema

    def _model(self, tp: type) -> JSONSchema:
        if tp in self._stack:
            return self.degrade(f"the recursive reference to {describe_type(tp)}")
        self._stack.append(tp)
        try:
            if is_pydantic_model(tp):
                return self._pydantic(tp)
            return self._fields(tp)
        finally:
            self._stack.pop()

    def _pydantic(self, tp: Any) -> JSONSchema:
        inlined = inline_refs(tp.model_json_schema())
        if inlined is None:
            return self.degrade(f"the recursive pydantic model {describe_type(tp)}")
        return inlined

    def _fields(self, tp: type) -> JSONSchema:
        try:
            hints = typing.get_type_hints(tp, include_extras=True)
        except Exception:  # forward references that do not resolve
            hints = {}
        doc_params = parse_docstring(tp.__doc__).params if tp.__doc__ else {}
        properties: dict[str, JSONSchema] = {}
        required: list[str] = []
        closed = True
        if is_typeddict_type(tp):
            closed = False
            required_keys = getattr(tp, "__required_keys__", frozenset(hints))
            for key, hint in hints.items():
                properties[key] = self._property(hint, JSON_DEFAULT_MISSING, doc_params.get(key))
                if _typeddict_key_required(hint, key in required_keys):
                    required.append(key)
        elif attrs.has(tp):
            for a in attrs.fields(tp):
                if not a.init:
                    continue
                hint = hints.get(a.name, a.type if a.type is not None else Any)
                has_default = a.default is not attrs.NOTHING
                default = (
                    JSON_DEFAULT_MISSING
                    if not has_default or isinstance(a.default, attrs.Factory)  # type: ignore[arg-type]
                    else a.default
                )
                description = a.metadata.get("description") or doc_params.get(a.name)
                properties[a.name] = self._property(hint, default, description)
                if not has_default:
                    required.append(a.name)
        else:
            for f in dataclasses.fields(tp):
                if not f.init:
                    continue
                hint = hints.get(f.name, f.type)
                has_default = not (
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                )
                default = (
                    f.default if f.default is not dataclasses.MISSING else JSON_DEFAULT_MISSING
                )
                description = f.metadata.get("description") or doc_params.get(f.name)
                properties[f.name] = self._property(hint, default, description)
                if not has_default:
                    required.append(f.name)
        schema: JSONSchema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if closed:
            schema["additionalProperties"] = False
        description = _class_description(tp)
        if description:
            schema["description"] = description
        return schema

    def _property(self, hint: Any, default: Any, description: str | None) -> JSONSchema:
        schema = dict(self.schema(hint))
        if description and "description" not in schema:
            schema["description"] = description
        if default is not JSON_DEFAULT_MISSING:
            value = json_default(default)
            if value is not JSON_DEFAULT_MISSING:
                schema["default"] = value
        return schema
