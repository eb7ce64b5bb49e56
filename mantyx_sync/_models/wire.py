"""Wire JSON to mantyx_sync values and back: each class's plain path (:mod:`.plan`)
first, the package's one converter (:mod:`.convert`) for any other shape, whose
failures become errors that name the field: :class:`WireFormatError` for a server
body, :class:`~mantyx_sync.SpecError` for a caller's value. A run that only meets
the documented shapes never imports cattrs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from ..errors import SpecError, WireFormatError
from .convert import converter
from .plan import ALIASES, OMIT, RAW, UNUSUAL, WIRE, camel, is_wire_class, plan_of

__all__ = ["ALIASES", "OMIT", "RAW", "WIRE", "FromWire", "WireFormatError", "camel", "unstructure"]

T = TypeVar("T")

_SEGMENT_RE = re.compile(r"\.([a-z][a-z0-9_]*)")


def _describe(exc: BaseException, _type: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    return str(exc) or type(exc).__name__


def _errors(exc: BaseException, root: str, *, wire: bool) -> list[tuple[str, str]]:
    """``(path, message)`` pairs for a structuring failure, ``path`` in wire or Python spelling."""
    import cattrs

    if not isinstance(exc, cattrs.BaseValidationError):
        return [(root, _describe(exc, None))]
    pairs = []
    for line in cattrs.transform_error(exc, path=root, format_exception=_describe):
        message, _, where = line.rpartition(" @ ")
        if wire:
            where = _SEGMENT_RE.sub(lambda m: "." + camel(m.group(1)), where)
        pairs.append((where, message))
    return pairs


def structure(data: Any, cls: type[T], *, path: str | None = None) -> T:
    """Build ``cls`` from a server body (unknown keys pass), or with ``path`` (where it
    sits, for messages) from a caller's mapping in either key style, whose unknown keys
    are an error: a typo in a spec option must not be silently dropped.

    :raises WireFormatError: a server body does not fit (``... @ $.tokens.inputTokens``).
    :raises SpecError: a caller's value does not fit; ``path`` extended to the field.
    """
    if path is not None:
        _check_keys(data, cls, path)
    value = plan_of(cls).structure(data)
    if value is not UNUSUAL:
        return value  # type: ignore[no-any-return]
    conv = converter()
    from cattrs import BaseValidationError  # loaded by converter()

    try:
        return conv.structure(data, cls)
    except (BaseValidationError, TypeError, ValueError) as exc:
        if isinstance(exc, SpecError):
            raise
        if path is not None:
            where, message = _errors(exc, path, wire=False)[0]
            raise SpecError(message, path=where) from exc
        detail = "; ".join(f"{msg} @ {where}" for where, msg in _errors(exc, "$", wire=True))
        raise WireFormatError(f"unexpected {cls.__name__} shape: {detail}") from exc


def _check_keys(data: Any, cls: type[Any], path: str) -> None:
    if not isinstance(data, Mapping):
        raise SpecError(f"expected an object, got {type(data).__name__}", path=path)
    known = plan_of(cls).input_keys()
    for key in data:
        if key not in known:
            allowed = ", ".join(sorted(set(known.values())))
            raise SpecError(f"unknown key {key!r} (expected: {allowed})", path=path)


def unstructure(obj: Any) -> dict[str, Any]:
    """The camelCase wire object for an attrs value, ``None``/``UNSET`` omitted."""
    out = plan_of(type(obj)).unstructure(obj) if is_wire_class(type(obj)) else UNUSUAL
    if out is UNUSUAL:
        out = converter().unstructure(obj)
    if not isinstance(out, dict):
        raise TypeError(f"{type(obj).__name__} does not unstructure to a JSON object")
    return out


class FromWire:
    """Gives a value class :meth:`from_wire`, built by :func:`structure`."""

    __slots__ = ()

    @classmethod
    def from_wire(cls: type[T], body: Mapping[str, Any]) -> T:
        """Build the value from a response body or one list item (unknown keys pass).

        :raises WireFormatError: (a ``ValueError``) the body does not fit; the
            message names the field.
        """
        return structure(body, cls)
