"""The root of the package's errors, in the foundation: :mod:`mantyx_sync.errors`
builds on it, and the emulator (``mantyx_sync.testing``), which never imports
the SDK, raises it too (its ``CassetteError``), so one ``except MantyxError``
catches both."""

from __future__ import annotations

from typing import Any

__all__ = ["MantyxError"]


class MantyxError(Exception):
    """Base class of every error raised by mantyx_sync."""

    # Where users import it from (and where pickle and the docs find it).
    __module__ = "mantyx_sync.errors"

    def __reduce__(self) -> tuple[Any, ...]:
        # The default calls the class with ``args`` alone, which the subclasses'
        # keyword-only arguments (``status=``) refuse: rebuild it bare, then
        # restore the attributes they set.
        return (_rebuilt, (type(self), self.args), self.__dict__)


def _rebuilt(cls: type[MantyxError], args: tuple[Any, ...]) -> MantyxError:
    error = cls.__new__(cls, *args)
    Exception.__init__(error, *args)
    return error
