"""JSON Schema for local tools: derived from Python types and docstrings, and validated.

Everything here is pure: no I/O, no global state except the compiled-validator
cache, which is guarded by a lock. Derivation never fails a tool definition
because of an unusual type: an unsupported construct becomes a permissive
schema (``{}`` for a property) and a :class:`SchemaWarning` that names it, as
local-tools "Parameter schemas" asks. The server validates arguments too.

Schemas are inlined (no ``$ref``) because LLM providers differ in how much of
JSON Schema they accept; a recursive type is cut off with ``{}`` at the point
where it refers back to itself.

Converting validated argument dicts into Python values (attrs classes,
dataclasses, enums, tuples, sets, datetimes, pydantic models) goes through a
private cattrs :class:`~cattrs.Converter` owned by this module.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import enum
import functools
import inspect
import json
import logging
import re
import sys
import threading
import types
import typing
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs
import cattrs
import fastjsonschema
from cattrs.strategies import configure_union_passthrough

from ._docstring import parse_docstring
from .errors import SpecError, ToolError

_te: types.ModuleType | None
try:  # typing_extensions is optional; its TypedDict/Required must be recognised when present
    import typing_extensions as _te
except ImportError:  # pragma: no cover - depends on the environment
    _te = None

__all__ = [
    "FunctionSpec",
    "SchemaWarning",
    "compile_validator",
    "function_schema",
    "object_schema",
    "parameters_schema",
    "to_jsonable",
    "type_to_schema",
]

logger = logging.getLogger(__name__)

JSONSchema = dict[str, Any]
Structurer = Callable[[Mapping[str, Any]], Any]

_VALIDATOR_CACHE_SIZE: Final = 256
_MESSAGE_MAX_CHARS: Final = 500


class SchemaWarning(UserWarning):
    """A Python type could not be expressed in JSON Schema; a permissive schema was used."""


def _identity(args: Mapping[str, Any]) -> Any:
    return dict(args)


def _is_pydantic_model(tp: Any) -> bool:
    # Duck-typed so pydantic is never imported here (it is an optional extra).
    return (
        isinstance(tp, type)
        and callable(getattr(tp, "model_json_schema", None))
        and callable(getattr(tp, "model_validate", None))
    )


def _is_typeddict(tp: Any) -> bool:
    if _te is not None and _te.is_typeddict(tp):
        return True
    return typing.is_typeddict(tp)


def _is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _is_model_class(tp: Any) -> bool:
    return isinstance(tp, type) and (
        attrs.has(tp) or _is_dataclass_type(tp) or _is_typeddict(tp) or _is_pydantic_model(tp)
    )


def _special_forms(name: str) -> tuple[Any, ...]:
    found = [getattr(typing, name, None)]
    if _te is not None:
        found.append(getattr(_te, name, None))
    return tuple(f for f in found if f is not None)


_REQUIREDNESS_WRAPPERS: Final = (
    _special_forms("Required") + _special_forms("NotRequired") + _special_forms("ReadOnly")
)
_ANNOTATED: Final = _special_forms("Annotated")
_LITERAL: Final = _special_forms("Literal")


def _make_converter() -> cattrs.Converter:
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
    conv.register_structure_hook_func(_is_pydantic_model, lambda v, t: t.model_validate(v))

    def structure_typeddict(value: Any, tp: Any) -> Any:
        # cattrs' own TypedDict hook misreads NotRequired under postponed
        # annotations; required keys are already checked by the JSON Schema.
        hints = typing.get_type_hints(tp, include_extras=True)
        out = {}
        for key, item in value.items():
            hint = hints.get(key, Any)
            while typing.get_origin(hint) in _REQUIREDNESS_WRAPPERS:
                hint = typing.get_args(hint)[0]
            out[key] = item if hint is Any else conv.structure(item, hint)
        return out

    conv.register_structure_hook_func(_is_typeddict, structure_typeddict)
    conv.register_unstructure_hook_func(
        lambda t: _is_pydantic_model(t), lambda v: v.model_dump(mode="json")
    )
    return conv


_converter: Final = _make_converter()


def to_jsonable(value: Any) -> Any:
    """Turn a tool's return value into plain JSON data (attrs, dataclass, enum, pydantic...).

    :param value: whatever a tool handler returned.
    :returns: dicts, lists and scalars ready for :func:`json.dumps`.
    """
    return _converter.unstructure(value)


def _structure_error_message(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        text = "; ".join(cattrs.transform_error(exc, path="data"))
    else:
        text = f"{type(exc).__name__}: {exc}"
    return _shorten(f"invalid arguments: {text}")


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _MESSAGE_MAX_CHARS:
        return text[: _MESSAGE_MAX_CHARS - 3] + "..."
    return text


def _structurer_for(tp: Any) -> Structurer:
    if _is_pydantic_model(tp):

        def structure_model(args: Mapping[str, Any]) -> Any:
            try:
                return tp.model_validate(dict(args))
            except Exception as exc:  # pydantic.ValidationError, custom validators
                raise ToolError(_shorten(f"invalid arguments: {exc}")) from exc

        return structure_model

    def structure(args: Mapping[str, Any]) -> Any:
        try:
            return _converter.structure(dict(args), tp)
        except Exception as exc:
            raise ToolError(_structure_error_message(exc)) from exc

    return structure


def _describe(tp: Any) -> str:
    if isinstance(tp, type):
        return f"{tp.__module__}.{tp.__qualname__}" if tp.__module__ != "builtins" else tp.__name__
    return repr(tp)


def _warning_stacklevel() -> int:
    # Point the warning at the first frame outside mantyx_sync (the user's definition).
    level = 1
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("mantyx_sync"):
        frame = frame.f_back
        level += 1
    return level


def _degrade(construct: str, where: str | None, fallback: JSONSchema) -> JSONSchema:
    place = f" in {where}" if where else ""
    message = (
        f"cannot express {construct}{place} as JSON Schema; "
        f"using the permissive schema {json.dumps(fallback)}"
    )
    logger.warning("%s", message)
    warnings.warn(message, SchemaWarning, stacklevel=_warning_stacklevel())
    return dict(fallback)


_JSON_SCALARS: Final = (str, int, float, bool, type(None))

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
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return None


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


_JSON_DEFAULT_MISSING: Final = object()


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return _JSON_DEFAULT_MISSING
    return value


def _class_description(cls: type) -> str | None:
    doc = cls.__doc__
    if not doc:
        return None
    # dataclasses synthesise "Name(field: type, ...)"; that is not a description.
    if _is_dataclass_type(cls) and doc.startswith(f"{cls.__name__}("):
        return None
    summary = parse_docstring(doc).summary
    return summary or None


def _inline_refs(schema: JSONSchema) -> JSONSchema | None:
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
    while typing.get_origin(hint) in _ANNOTATED:
        hint = typing.get_args(hint)[0]
    origin = typing.get_origin(hint)
    if origin in _special_forms("NotRequired"):
        return False
    if origin in _special_forms("Required"):
        return True
    return default


class _Deriver:
    """One derivation pass; remembers the classes being expanded to cut recursion."""

    def __init__(self, where: str | None = None) -> None:
        self._stack: list[Any] = []
        self.where = where

    def degrade(self, construct: str, fallback: JSONSchema | None = None) -> JSONSchema:
        return _degrade(construct, self.where, {} if fallback is None else fallback)

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
        simple = self._simple(tp)
        if simple is not None:
            return simple
        supertype = getattr(tp, "__supertype__", None)
        if supertype is not None:  # typing.NewType
            return self.schema(supertype)
        if _is_model_class(tp):
            return self._model(tp)
        return self.degrade(f"the type {_describe(tp)}")

    def _simple(self, tp: Any) -> JSONSchema | None:
        if tp is bool:
            return {"type": "boolean"}
        if tp is int:
            return {"type": "integer"}
        if tp is float:
            return {"type": "number"}
        if tp is str:
            return {"type": "string"}
        if tp is dt.datetime:
            return {"type": "string", "format": "date-time"}
        if tp is dt.date:
            return {"type": "string", "format": "date"}
        if tp is dt.time:
            return {"type": "string", "format": "time"}
        if tp is uuid.UUID:
            return {"type": "string", "format": "uuid"}
        if tp in (list, tuple, set, frozenset, cabc.Sequence, cabc.MutableSequence):
            schema: JSONSchema = {"type": "array"}
            if tp in (set, frozenset):
                schema["uniqueItems"] = True
            return schema
        if tp in (dict, cabc.Mapping, cabc.MutableMapping):
            return {"type": "object"}
        return None

    def _generic(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> JSONSchema:
        if origin in _ANNOTATED:
            return self._annotated(args[0], tp.__metadata__)
        if origin in _REQUIREDNESS_WRAPPERS:
            return self.schema(args[0])
        if origin is typing.Union or origin is types.UnionType:
            return self._union(args)
        if origin in _LITERAL:
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
            return self.degrade(f"the enum {_describe(tp)} (values must be JSON scalars)")
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
                return self.degrade(f"the mapping key type {_describe(key)}", {"type": "object"})
            if "enum" in key_schema:
                schema["propertyNames"] = key_schema
        value_schema = self.schema(value)
        if value_schema:
            schema["additionalProperties"] = value_schema
        return schema

    def _model(self, tp: type) -> JSONSchema:
        if tp in self._stack:
            return self.degrade(f"the recursive reference to {_describe(tp)}")
        self._stack.append(tp)
        try:
            if _is_pydantic_model(tp):
                return self._pydantic(tp)
            return self._fields(tp)
        finally:
            self._stack.pop()

    def _pydantic(self, tp: Any) -> JSONSchema:
        inlined = _inline_refs(tp.model_json_schema())
        if inlined is None:
            return self.degrade(f"the recursive pydantic model {_describe(tp)}")
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
        if _is_typeddict(tp):
            closed = False
            required_keys = getattr(tp, "__required_keys__", frozenset(hints))
            for key, hint in hints.items():
                properties[key] = self._property(hint, _JSON_DEFAULT_MISSING, doc_params.get(key))
                if _typeddict_key_required(hint, key in required_keys):
                    required.append(key)
        elif attrs.has(tp):
            for a in attrs.fields(tp):
                if not a.init:
                    continue
                hint = hints.get(a.name, a.type if a.type is not None else Any)
                has_default = a.default is not attrs.NOTHING
                default = (
                    _JSON_DEFAULT_MISSING
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
                    f.default if f.default is not dataclasses.MISSING else _JSON_DEFAULT_MISSING
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
        if default is not _JSON_DEFAULT_MISSING:
            value = _json_default(default)
            if value is not _JSON_DEFAULT_MISSING:
                schema["default"] = value
        return schema


def type_to_schema(tp: Any) -> JSONSchema:
    """Derive a JSON Schema from a Python annotation.

    Supports ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``,
    ``Optional``/``X | None``, unions, ``Literal``, :class:`enum.Enum`
    subclasses, ``list``/``Sequence``, ``tuple`` (variadic and fixed), ``set``/
    ``frozenset``, ``dict[str, T]``, ``TypedDict``, attrs classes, dataclasses,
    pydantic models, ``NewType``, ``Annotated[T, "description"]`` (a mapping in
    the metadata is merged into the schema), ``datetime``/``date``/``time``/
    ``UUID`` (strings with a ``format``).

    Unsupported constructs become ``{}`` with a :class:`SchemaWarning`.

    :param tp: the annotation.
    :returns: a fresh JSON Schema dict.
    """
    return _Deriver().schema(tp)


def object_schema(obj: Any, *, what: str = "parameters") -> JSONSchema:
    """An object JSON Schema from a dict or a model class, for tool parameters or output.

    :param obj: a JSON Schema dict whose ``type`` is ``"object"``, or an attrs class,
        dataclass, ``TypedDict`` or pydantic model class.
    :param what: the option being checked, named in error messages.
    :returns: a deep copy of the schema (dicts and lists only).
    :raises SpecError: ``obj`` is neither, or the dict is not an object schema.
    """
    if isinstance(obj, Mapping):
        return _checked_object_schema(obj, what)
    if _is_model_class(obj):
        return _derive_model_schema(obj, what)
    raise SpecError(
        f'{what} must be a JSON Schema dict with "type": "object", an attrs class, '
        f"a dataclass, a TypedDict or a pydantic model class; got {_describe(obj)}"
    )


def _checked_object_schema(schema: Mapping[str, Any], what: str) -> JSONSchema:
    try:
        copied = json.loads(json.dumps(schema))
    except (TypeError, ValueError) as exc:
        raise SpecError(f"{what} must be JSON-serialisable: {exc}") from exc
    if copied.get("type") != "object":
        raise SpecError(
            f'{what} must be an object schema: set "type": "object" and describe the '
            f'arguments under "properties" (got type {copied.get("type")!r})'
        )
    result: JSONSchema = copied
    return result


def _derive_model_schema(tp: Any, what: str) -> JSONSchema:
    where = f"{what} {_describe(tp)}"
    try:
        if _is_pydantic_model(tp):
            raw = tp.model_json_schema()
            schema = _inline_refs(raw)
            # A recursive model keeps its $defs: they resolve at the document root.
            schema = json.loads(json.dumps(_hoist_root_ref(raw) if schema is None else schema))
        else:
            schema = _Deriver(where).schema(tp)
    except Exception as exc:
        return _degrade(f"{where} ({type(exc).__name__}: {exc})", None, {"type": "object"})
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise SpecError(f"{what} must describe a JSON object; {_describe(tp)} does not")
    return schema


def _hoist_root_ref(schema: JSONSchema) -> JSONSchema:
    """Replace a root ``{"$ref": "#/$defs/X", "$defs": ...}`` by X itself (keeping $defs)."""
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if not isinstance(ref, str) or not isinstance(defs, dict):
        return schema
    target = defs.get(ref.removeprefix("#/$defs/"))
    if not isinstance(target, dict):
        return schema
    siblings = {k: v for k, v in schema.items() if k != "$ref"}
    return {**target, **siblings}


def parameters_schema(parameters: Any) -> tuple[JSONSchema, Structurer]:
    """The wire ``parameters`` schema and the matching argument structurer.

    :param parameters: ``None`` (no arguments), a JSON Schema object dict (the handler
        receives the args dict), or an attrs class / dataclass / ``TypedDict`` /
        pydantic model class (the handler receives an instance built from the args).
    :returns: ``(schema, structure)``; ``structure(args)`` raises
        :class:`~mantyx_sync.ToolError` with a model-readable message when the
        args cannot be converted.
    :raises SpecError: ``parameters`` has an unsupported form.
    """
    if parameters is None:
        return {"type": "object", "properties": {}}, _identity
    if isinstance(parameters, Mapping):
        return _checked_object_schema(parameters, "parameters"), _identity
    schema = object_schema(parameters, what="parameters")
    return schema, _structurer_for(parameters)


@attrs.frozen(kw_only=True)
class _Param:
    name: str
    positional_only: bool
    structure: Callable[[Any], Any] | None
    has_default: bool
    default: Any


@attrs.frozen(kw_only=True)
class FunctionSpec:
    """The tool view of a Python function: name, description, argument schema, binder.

    Immutable and thread-safe: :meth:`bind` may run on several pool threads at once.

    :ivar name: the model-facing name (the function's ``__name__`` unless given).
    :ivar description: the explicit description, else the docstring summary, else None.
    :ivar parameters: the derived object JSON Schema.
    """

    name: str
    description: str | None
    parameters: JSONSchema = attrs.field(hash=False)
    _fn: Callable[..., Any] = attrs.field(repr=False, eq=False, alias="fn")
    _params: tuple[_Param, ...] = attrs.field(repr=False, eq=False, alias="params")
    _accepts_extra: bool = attrs.field(default=False, repr=False, eq=False, alias="accepts_extra")

    def bind(self, args: Mapping[str, Any]) -> Any:
        """Call the function with ``args`` (already validated) structured into its parameter types.

        :param args: the tool-call arguments.
        :returns: whatever the function returns.
        :raises ToolError: an argument cannot be converted or a required one is missing.
        """
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        known = set()
        for param in self._params:
            known.add(param.name)
            if param.name in args:
                value = args[param.name]
                if param.structure is not None:
                    try:
                        value = param.structure(value)
                    except Exception as exc:
                        message = _structure_error_message(exc)
                        raise ToolError(f"{message} (argument {param.name!r})") from exc
            elif param.has_default:
                if not param.positional_only:
                    continue
                value = param.default
            else:
                raise ToolError(f"invalid arguments: missing required argument {param.name!r}")
            if param.positional_only:
                positional.append(value)
            else:
                keywords[param.name] = value
        if self._accepts_extra:
            keywords.update((k, v) for k, v in args.items() if k not in known)
        return self._fn(*positional, **keywords)


def _param_structurer(hint: Any, name: str, where: str) -> Callable[[Any], Any] | None:
    if hint is Any or hint is inspect.Parameter.empty or hint is object:
        return None
    if isinstance(hint, (str, typing.ForwardRef)):
        return None
    try:
        hook = _converter.get_structure_hook(hint)
    except Exception as exc:
        logger.warning(
            "no converter for parameter %r of %s (%s); it receives the raw JSON value",
            name,
            where,
            exc,
        )
        return None
    return lambda value: hook(value, hint)


def function_schema(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> FunctionSpec:
    """Describe ``fn`` as a tool: JSON Schema from its annotations and docstring.

    Parameters with defaults are optional; ``**kwargs`` leaves extra arguments
    allowed and passes them through; ``self``/``cls`` of bound methods are not
    parameters. Per-parameter descriptions come from ``Annotated[T, "text"]`` or
    the docstring (Google, NumPy or reST). Annotations are resolved with
    :func:`typing.get_type_hints`, so ``from __future__ import annotations`` works.

    :param fn: the function (or bound method).
    :param name: the tool name; defaults to ``fn.__name__``.
    :param description: the tool description; defaults to the docstring summary.
    :returns: the :class:`FunctionSpec`.
    :raises SpecError: ``fn`` takes ``*args``, has no signature, or has no name.
    """
    where = f"function {getattr(fn, '__qualname__', repr(fn))}"
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"cannot read the signature of {where}: {exc}") from exc
    tool_name = name if name is not None else getattr(fn, "__name__", None)
    if not tool_name:
        raise SpecError(f"{where} has no __name__; pass name=...")
    hints = _resolve_hints(fn)
    doc = parse_docstring(inspect.getdoc(fn))
    properties: dict[str, JSONSchema] = {}
    required: list[str] = []
    params: list[_Param] = []
    accepts_extra = False
    for param in signature.parameters.values():
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise SpecError(
                f"{where} takes *{param.name}; tool arguments are named, so use keyword "
                "parameters (or **kwargs) instead"
            )
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_extra = True
            continue
        hint = hints.get(param.name, param.annotation)
        if hint is inspect.Parameter.empty and param.default is not inspect.Parameter.empty:
            default_type = type(param.default)
            hint = default_type if default_type in (str, int, float, bool) else Any
        deriver = _Deriver(f"parameter {param.name!r} of {where}")
        schema = deriver.schema(hint)
        has_default = param.default is not inspect.Parameter.empty
        if has_default:
            default = _json_default(param.default)
            if default is not _JSON_DEFAULT_MISSING:
                schema = {**schema, "default": default}
        text = doc.params.get(param.name)
        if text and "description" not in schema:
            schema["description"] = text
        properties[param.name] = schema
        if not has_default:
            required.append(param.name)
        params.append(
            _Param(
                name=param.name,
                positional_only=param.kind is inspect.Parameter.POSITIONAL_ONLY,
                structure=_param_structurer(hint, param.name, where),
                has_default=has_default,
                default=param.default,
            )
        )
    parameters: JSONSchema = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    if not accepts_extra:
        parameters["additionalProperties"] = False
    final_description = description if description is not None else (doc.summary or None)
    return FunctionSpec(
        name=tool_name,
        description=final_description,
        parameters=parameters,
        fn=fn,
        params=tuple(params),
        accepts_extra=accepts_extra,
    )


def _resolve_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    candidates: list[Any] = [fn]
    if isinstance(fn, functools.partial):
        candidates.append(fn.func)
    elif not inspect.isroutine(fn) and callable(fn):
        candidates.append(type(fn).__call__)
    for candidate in candidates:
        try:
            return typing.get_type_hints(candidate, include_extras=True)
        except Exception:
            continue
    # Some annotation does not resolve (e.g. a TYPE_CHECKING-only import): resolve
    # the others one by one so only the broken parameter loses its schema.
    target = candidates[-1]
    raw = getattr(inspect.unwrap(target), "__annotations__", None) or {}
    namespace = getattr(inspect.unwrap(target), "__globals__", None)
    hints: dict[str, Any] = {}
    for key, annotation in raw.items():
        holder = types.SimpleNamespace(__annotations__={key: annotation})
        try:
            hints.update(typing.get_type_hints(holder, namespace, include_extras=True))
        except Exception:
            continue
    return hints


class _ValidatorCache:
    """Compiled fastjsonschema validators keyed by canonical schema JSON (LRU, thread-safe)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, Callable[[Any], str | None]] = OrderedDict()

    def get(self, schema: Mapping[str, Any]) -> Callable[[Any], str | None]:
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=repr)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
            # Compiling under the lock makes "once per schema" hold across threads;
            # compiles are rare (one per distinct tool schema) and fast.
            validator = _compile(json.loads(key))
            self._entries[key] = validator
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)
            return validator

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _accept_all(_: Any) -> str | None:
    return None


def _compile(schema: JSONSchema) -> Callable[[Any], str | None]:
    try:
        check = fastjsonschema.compile(schema, use_default=False)
    except Exception as exc:
        logger.warning(
            "cannot compile a tool schema for client-side validation (%s: %s); "
            "arguments are passed through unchecked (the server validates them too)",
            type(exc).__name__,
            exc,
        )
        return _accept_all

    def validate(value: Any) -> str | None:
        try:
            check(value)
        except fastjsonschema.JsonSchemaValueException as exc:
            return _shorten(f"invalid arguments: {exc.message}")
        except Exception as exc:  # a bug in generated code must not block the tool
            logger.warning("schema validation crashed (%s); accepting the arguments", exc)
        return None

    return validate


_validators: Final = _ValidatorCache(_VALIDATOR_CACHE_SIZE)


def compile_validator(schema: Mapping[str, Any]) -> Callable[[Any], str | None]:
    """A validator for ``schema``, compiled once per distinct schema and cached.

    :param schema: a JSON Schema dict.
    :returns: ``validate(value)``: None when valid, else a short model-readable
        message such as ``"invalid arguments: data.path must be string"``. When the
        schema cannot be compiled, a warning is logged once and every value is accepted.
    """
    return _validators.get(schema)
