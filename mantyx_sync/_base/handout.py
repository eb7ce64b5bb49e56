"""How public classes present themselves.

:func:`public` names the public module a class defined in a private one is
imported from, for ``repr``, tracebacks, ``help()`` and pickle. Classes the
package hands out and a user never builds: :func:`handed_out` says in the
docstring where one comes from and hides the constructor's arguments from ``help()``
(they are the package's own wiring and change without notice)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import ForwardRef, TypeVar

__all__ = ["handed_out", "public"]

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


def public(home: str = "mantyx_sync") -> Callable[[C], C]:
    """Report ``home``, the public module that exports the class, as its
    ``__module__`` (``mantyx_sync.events``, ``mantyx_sync.evals``,
    ``mantyx_sync.testing``; the package root by default).

    Pickle finds the class again as ``home.<qualname>``, so ``home`` must
    export it under that name (tests/core/test_public_names.py checks both).
    Apply it above every other decorator. The class's postponed annotations
    still resolve in the module that defines it (``typing.get_type_hints``,
    the wire converter): each becomes a ``ForwardRef`` bound to that module.
    """

    def decorate(cls: C) -> C:
        defined_in = cls.__module__
        cls.__annotations__ = {
            name: ForwardRef(hint, is_argument=False, module=defined_in, is_class=True)
            if isinstance(hint, str)
            else hint
            for name, hint in inspect.get_annotations(cls).items()
        }
        cls.__module__ = home
        return cls

    return decorate
