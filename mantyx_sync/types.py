"""Public typing helpers: :data:`UNSET`, "the caller said nothing", and its type."""

from __future__ import annotations

import enum
from typing import Final, Literal

__all__ = ["UNSET", "UnsetType"]


class UnsetType(enum.Enum):
    """The type of :data:`UNSET`: "the caller said nothing", distinct from ``None``."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> Literal[False]:
        return False


UNSET: Final = UnsetType.UNSET
