"""The object schemas a tool declares for its parameters or its output: a JSON Schema
dict (checked and deep-copied) or a model class whose schema is derived by :mod:`.schema`
(imported by the first such class). A derivation that crashes degrades to
``{"type": "object"}`` with a :class:`~mantyx_sync.errors.SchemaWarning`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._models.convert import (
    Structurer,
    describe_type,
    identity,
    is_model_class,
    is_pydantic_model,
    structurer_for,
)
from ..errors import ArgumentTypeError, SpecError

if TYPE_CHECKING:
    from .schema import JSONSchema

__all__ = ["object_schema", "parameters_schema"]


def object_schema(obj: Any, *, what: str = "parameters") -> JSONSchema:
    """A deep copy of ``obj``'s object JSON Schema; ``what`` names the option in errors."""
    if isinstance(obj, Mapping):
        return _checked_object_schema(obj, what)
    if is_model_class(obj):
        return _derive_model_schema(obj, what)
    raise ArgumentTypeError(
        f'{what} must be a JSON Schema dict with "type": "object", an attrs class, '
        f"a dataclass, a TypedDict or a pydantic model class; got {describe_type(obj)}"
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
    # Deriving a schema from a type (and its docstrings) is only needed for a
    # model class, not for the JSON Schema dict most tools give.
    from .schema import Deriver, degrade_schema, inline_refs

    where = f"{what} {describe_type(tp)}"
    try:
        if is_pydantic_model(tp):
            raw = tp.model_json_schema()
            schema = inline_refs(raw)
            # A recursive model keeps its $defs: they resolve at the document root.
            schema = json.loads(json.dumps(_hoist_root_ref(raw) if schema is None else schema))
        else:
            schema = Deriver(where).schema(tp)
    except Exception as exc:
        return degrade_schema(f"{where} ({type(exc).__name__}: {exc})", None, {"type": "object"})
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise SpecError(f"{what} must describe a JSON object; {describe_type(tp)} does not")
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
    """The wire ``parameters`` schema and ``structure(args)``, which gives the handler the
    args dict, or for a model class an instance (:class:`~mantyx_sync.ToolError` if not)."""
    if parameters is None:
        return {"type": "object", "properties": {}}, identity
    if isinstance(parameters, Mapping):
        return _checked_object_schema(parameters, "parameters"), identity
    schema = object_schema(parameters, what="parameters")
    return schema, structurer_for(parameters)
