"""Type aliases shared across the package, and the typed "unset" sentinel."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final, Literal

__all__ = ["UNSET", "JSONDict", "UnsetType"]

JSONValue = None | bool | int | float | str | list[Any] | dict[str, Any]
JSONDict = dict[str, Any]
Headers = Mapping[str, str]


class UnsetType(enum.Enum):
    """The type of :data:`UNSET`: "the caller said nothing", distinct from ``None``."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> Literal[False]:
        return False


UNSET: Final = UnsetType.UNSET
