"""Client-side validation of tool arguments: fastjsonschema, compiled once per schema.

fastjsonschema is imported when the first schema is compiled (a tool being
defined), not when the package is imported.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from .convert import shorten

if TYPE_CHECKING:
    from .schema import JSONSchema

__all__ = ["compile_validator"]

logger = logging.getLogger(__name__)

_VALIDATOR_CACHE_SIZE: Final = 256


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
    import fastjsonschema

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
            return shorten(f"invalid arguments: {exc.message}")
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
