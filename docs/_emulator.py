"""The local MANTYX the guide's examples run against during ``sphinx-build -b doctest``.

One :class:`~mantyx_sync.testing.LocalMantyx` per build, started on first use
and stopped when the build's process exits. Each page's examples start from
:func:`fresh`: the default model, no faults, and ``MANTYX_BASE_URL``,
``MANTYX_WORKSPACE`` and ``MANTYX_API_KEY`` set to reach it, the way the
README's quickstart reaches it from a shell.
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path

from mantyx_sync.testing import LocalMantyx

__all__ = ["EXAMPLES", "fresh"]

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
"""The repository's examples folder (the guide starts its small servers)."""

_server: LocalMantyx | None = None


def fresh() -> LocalMantyx:
    """The build's emulator, back to its default model, with MANTYX_* pointing at it."""
    global _server
    if _server is None:
        _server = LocalMantyx().start()
        atexit.register(_server.stop)
    _server.set_model(None)
    os.environ.update(
        MANTYX_BASE_URL=_server.base_url,
        MANTYX_WORKSPACE=_server.workspace,
        MANTYX_API_KEY=_server.api_key,
    )
    return _server
