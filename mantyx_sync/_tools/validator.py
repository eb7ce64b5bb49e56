"""JSON Schema validation with fastjsonschema: the package's one cache of compiled
schemas, shared by local tools' arguments and ``RunResult.parse``. fastjsonschema is
imported when the first schema is compiled."""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from .._models.convert import shorten

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


def _accept_all(_: Any) -> str | None:
    return None


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compile(canonical: str, fill_defaults: bool) -> _Compiled:
    import fastjsonschema

    try:
        check = fastjsonschema.compile(json.loads(canonical), use_default=fill_defaults)
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


_compile_lock = threading.Lock()


def _compiled(schema: Mapping[str, Any], *, fill_defaults: bool = False) -> _Compiled:
    """``schema`` compiled, from the cache keyed by its canonical JSON."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=repr)
    # Compiling under the lock makes "once per schema" hold across threads;
    # compiles are rare (one per distinct schema) and fast.
    with _compile_lock:
        return _compile(canonical, fill_defaults)


def compile_validator(schema: Mapping[str, Any]) -> Callable[[Any], str | None]:
    """``validate(value)``: None when valid, else a short message for the model; a schema
    that cannot be compiled logs a warning once and accepts every value."""
    return _compiled(schema).validate


def schema_check(schema: Mapping[str, Any]) -> Check:
    """fastjsonschema's check for ``schema``, filling in the defaults it declares.

    :raises fastjsonschema.JsonSchemaDefinitionException: the schema cannot be compiled.
    """
    compiled = _compiled(schema, fill_defaults=True)
    if compiled.error is not None:
        raise compiled.error.with_traceback(None)
    assert compiled.check is not None
    return compiled.check
