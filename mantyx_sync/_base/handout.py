"""Classes the package hands out and a user never builds: :func:`handed_out` says in the
docstring where one comes from and hides the constructor's arguments from ``help()``
(they are the package's own wiring and change without notice)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TypeVar

__all__ = ["handed_out"]

C = TypeVar("C", bound=type)

_SELF_ONLY = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)])


def handed_out(how: str) -> Callable[[C], C]:
    """Mark a class a user never builds; ``how`` says what returns one
    (``"agent.session() ... return one"``)."""

    def decorate(cls: C) -> C:
        note = f"You never build a {cls.__name__} yourself: {how}."
        cls.__doc__ = f"{inspect.cleandoc(cls.__doc__ or '')}\n\n{note}"
        init = inspect.getattr_static(cls, "__init__")  # its own, or the base class's
        # What help() and inspect.signature() show; calls are unaffected.
        init.__signature__ = _SELF_ONLY
        init.__doc__ = note
        return cls

    return decorate
