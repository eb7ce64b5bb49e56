"""Names a package exports without importing their modules until first used
(PEP 562): ``mantyx_sync`` itself, and ``mantyx_sync.testing``, whose pytest
plugin every pytest run loads."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = ["load_lazily"]


def load_lazily(
    name: str, module_of: Mapping[str, str], package: str, namespace: MutableMapping[str, Any]
) -> Any:
    """``name`` from its module (``module_of[name]``, relative to ``package``),
    kept in the package's ``namespace`` so the next lookup is a plain one.

    :raises AttributeError: ``name`` is not one of them.
    """
    module = module_of.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, package), name)
    namespace[name] = value
    return value
