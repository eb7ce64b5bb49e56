"""Type aliases shared across the package, the typed "unset" sentinel, and :class:`Closing`."""

from __future__ import annotations

import enum
from typing import Any, Final, Literal, TypeVar

__all__ = ["UNSET", "Closing", "JSONDict", "UnsetType"]

JSONDict = dict[str, Any]
_Self = TypeVar("_Self", bound="Closing")


class UnsetType(enum.Enum):
    """The type of :data:`UNSET`: "the caller said nothing", distinct from ``None``."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> Literal[False]:
        return False


UNSET: Final = UnsetType.UNSET


class Closing:
    """A handle whose ``with`` block gives the handle itself and calls ``close()`` on leaving."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
