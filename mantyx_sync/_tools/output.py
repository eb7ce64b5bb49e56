"""Typed structured output: the JSON Schema a reply is asked for, derived from
a class, and the reply built into an instance of it.

``output_type=`` takes a dataclass, an attrs class, a ``TypedDict`` or a
pydantic model (pydantic is never imported here: a model is recognised by
its methods). The schema comes from the same derivation as a tool's
parameters; the reply is checked against it, then structured with the
package's converter (or the model's own ``model_validate``).
"""

from __future__ import annotations

import json
from typing import Any

from .._models.convert import converter, describe_type, is_model_class, is_pydantic_model
from ..errors import ArgumentTypeError, OutputParseError
from .object_schema import object_schema
from .validator import schema_check

__all__ = ["build_output", "output_schema_of"]


def output_schema_of(output_type: Any) -> dict[str, Any]:
    """The object JSON Schema to ask for a reply of ``output_type`` in.

    :raises ArgumentTypeError: not a dataclass, attrs class, ``TypedDict`` or pydantic model.
    :raises SpecError: the class does not describe a JSON object.
    """
    if not is_model_class(output_type):
        raise ArgumentTypeError(
            "must be a dataclass, an attrs class, a TypedDict or a pydantic model class, "
            f"got {describe_type(output_type)}",
            path="output_type",
        )
    return object_schema(output_type, what="output_type")


def build_output(output_type: Any, text: str, *, run_id: str) -> Any:
    """The reply ``text`` as an ``output_type`` instance.

    :raises OutputParseError: the text is not JSON, or does not fit the class;
        ``path`` names the first field that does not (``items[0].price``).
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise OutputParseError(
            f"run {run_id}: the reply is not valid JSON ({exc})", raw_text=text
        ) from exc
    import fastjsonschema

    try:
        schema_check(output_schema_of(output_type))(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        path = (exc.name or "").removeprefix("data").lstrip(".") or None  # data.items[0].price
        raise _unfit(run_id, text, path, exc.message) from exc
    if is_pydantic_model(output_type):
        try:
            return output_type.model_validate(data)
        except Exception as exc:  # pydantic.ValidationError, the model's own validators
            first: dict[str, Any] = (getattr(exc, "errors", lambda: [{}])() or [{}])[0]
            raise _unfit(
                run_id, text, _field_path(("data", *first.get("loc", ()))), str(exc)
            ) from exc
    try:
        return converter().structure(data, output_type)
    except Exception as exc:  # cattrs' validation errors, a class's own checks
        import cattrs

        detail = (
            "; ".join(cattrs.transform_error(exc, path="$"))
            if isinstance(exc, cattrs.BaseValidationError)
            else f"{type(exc).__name__}: {exc}"
        )
        # "invalid value for type, expected int @ $.items[0].price": the first field named.
        _, found, after = detail.partition(" @ $")
        path = after.split(";", 1)[0].lstrip(".") if found else None
        raise _unfit(run_id, text, path or None, detail) from exc


def _field_path(parts: Any) -> str | None:
    """``("data", "items", 0, "price")`` as ``items[0].price`` (``None`` for the root)."""
    out = ""
    for part in list(parts)[1:]:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out.lstrip(".") or None


def _unfit(run_id: str, text: str, path: str | None, detail: str) -> OutputParseError:
    where = f" at {path}" if path else ""
    return OutputParseError(
        f"run {run_id}: the reply does not fit the output type{where}: {detail}",
        raw_text=text,
        errors=[detail],
        path=path,
    )
