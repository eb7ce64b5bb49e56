"""The function front end of local tools: a Python signature and docstring as a tool."""

from __future__ import annotations

import functools
import inspect
import logging
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .._models.convert import converter, structure_error_message
from ..errors import SpecError, ToolError
from .docstring import parse_docstring
from .schema import JSON_DEFAULT_MISSING, Deriver, JSONSchema, json_default

__all__ = ["function_schema"]

logger = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class _Param:
    name: str
    positional_only: bool
    structure: Callable[[Any], Any] | None
    has_default: bool
    default: Any


@attrs.frozen(kw_only=True)
class FunctionSpec:
    """The tool view of a Python function; :meth:`bind` may run on several threads at once."""

    name: str
    description: str | None
    parameters: JSONSchema = attrs.field(hash=False)
    _fn: Callable[..., Any] = attrs.field(repr=False, eq=False, alias="fn")
    _params: tuple[_Param, ...] = attrs.field(repr=False, eq=False, alias="params")
    _accepts_extra: bool = attrs.field(default=False, repr=False, eq=False, alias="accepts_extra")

    def bind(self, args: Mapping[str, Any]) -> Any:
        """Call the function with validated ``args`` structured into its parameter types.

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
                        message = structure_error_message(exc)
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
        hook = converter().get_structure_hook(hint)
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
    """Describe ``fn`` (a function or bound method) as a tool.

    Parameters with defaults are optional; ``**kwargs`` allows extra arguments
    and passes them through. Descriptions come from ``Annotated[T, "text"]`` or
    the docstring (Google, NumPy or reST).

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
        deriver = Deriver(f"parameter {param.name!r} of {where}")
        schema = deriver.schema(hint)
        has_default = param.default is not inspect.Parameter.empty
        if has_default:
            default = json_default(param.default)
            if default is not JSON_DEFAULT_MISSING:
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
