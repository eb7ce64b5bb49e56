"""Type aliases shared across the package, and two small
lifetimes: :class:`Closing` (a ``with`` block closes) and :class:`ReleaseOnce`."""

from __future__ import annotations

import sys
import threading
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# Type variables with a default (PEP 696): a bare ``RunResult`` means
# ``RunResult[str]`` to a type checker, not a missing parameter.
if TYPE_CHECKING:
    from typing_extensions import ParamSpec, TypeVar
elif sys.version_info >= (3, 13):
    from typing import ParamSpec, TypeVar
else:  # before 3.13, typing's own take no default; the checker alone reads it

    def TypeVar(name: str, *constraints: Any, default: Any = None, **options: Any) -> Any:
        return typing.TypeVar(name, *constraints, **options)

    def ParamSpec(name: str, *, default: Any = None, **options: Any) -> Any:
        return typing.ParamSpec(name, **options)


__all__ = ["Closing", "JSONDict", "ParamSpec", "ReleaseOnce", "TypeVar"]

JSONDict = dict[str, Any]
_Self = typing.TypeVar("_Self", bound="Closing")


class Closing:
    """A handle whose ``with`` block gives the handle itself and calls ``close()`` on leaving."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class ReleaseOnce:
    """Runs ``steps`` in order on the first :meth:`release`, from whichever thread
    (or garbage-collection finalizer) gets there first; later calls do nothing."""

    def __init__(self, *steps: Callable[[], object]) -> None:
        self._steps = steps
        self._lock = threading.Lock()
        self._released = False

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        for step in self._steps:
            step()
