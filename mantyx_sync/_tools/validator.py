"""JSON Schema validation with fastjsonschema: the package's one cache of compiled schemas.

Each distinct schema (by canonical JSON) is compiled once, under a lock, and
kept in a bounded LRU cache shared by everything that validates: local tools'
arguments (:func:`compile_validator`) and structured run output
(:func:`schema_check`, for ``RunResult.parse``). fastjsonschema is imported
when the first schema is compiled, not when the package is imported.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from .convert import shorten

__all__ = ["compile_validator", "schema_check"]

logger = logging.getLogger(__name__)

_CACHE_SIZE: Final = 256

Check = Callable[[Any], Any]
"""fastjsonschema's validator: returns the value, raises ``JsonSchemaValueException``."""


@attrs.frozen
class _Compiled:
    """One schema, compiled once: fastjsonschema's check, or why it could not be."""

    check: Check | None
    error: Exception | None
    validate: Callable[[Any], str | None]  # the local-tool view of ``check``


class _SchemaCache:
    """Compiled schemas keyed by canonical JSON (LRU, thread-safe)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, bool], _Compiled] = OrderedDict()

    def get(self, schema: Mapping[str, Any], *, fill_defaults: bool = False) -> _Compiled:
        canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=repr)
        key = (canonical, fill_defaults)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
            # Compiling under the lock makes "once per schema" hold across threads;
            # compiles are rare (one per distinct schema) and fast.
            compiled = _compile(json.loads(canonical), fill_defaults)
            self._entries[key] = compiled
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)
            return compiled

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _accept_all(_: Any) -> str | None:
    return None


def _compile(schema: dict[str, Any], fill_defaults: bool) -> _Compiled:
    import fastjsonschema

    try:
        check = fastjsonschema.compile(schema, use_default=fill_defaults)
    except Exception as exc:
        if not fill_defaults:
            logger.warning(
                "cannot compile a tool schema for client-side validation (%s: %s); "
                "arguments are passed through unchecked (the server validates them too)",
                type(exc).__name__,
                exc,
            )
        return _Compiled(None, exc, _accept_all)

    def validate(value: Any) -> str | None:
        try:
            check(value)
        except fastjsonschema.JsonSchemaValueException as exc:
            return shorten(f"invalid arguments: {exc.message}")
        except Exception as exc:  # a bug in generated code must not block the tool
            logger.warning("schema validation crashed (%s); accepting the arguments", exc)
        return None

    return _Compiled(check, None, validate)


_schemas: Final = _SchemaCache(_CACHE_SIZE)


def compile_validator(schema: Mapping[str, Any]) -> Callable[[Any], str | None]:
    """A local tool's argument validator for ``schema``, compiled once per distinct schema.

    :param schema: a JSON Schema dict.
    :returns: ``validate(value)``: None when valid, else a short model-readable
        message such as ``"invalid arguments: data.path must be string"``. When the
        schema cannot be compiled, a warning is logged once and every value is accepted.
    """
    return _schemas.get(schema).validate


def schema_check(schema: Mapping[str, Any]) -> Check:
    """fastjsonschema's check for ``schema`` (defaults it declares filled into the
    value), compiled once per distinct schema.

    :raises fastjsonschema.JsonSchemaDefinitionException: the schema cannot be compiled.
    """
    compiled = _schemas.get(schema, fill_defaults=True)
    if compiled.error is not None:
        raise compiled.error.with_traceback(None)
    assert compiled.check is not None
    return compiled.check
