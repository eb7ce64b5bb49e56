"""The local MANTYX the guide's examples run against during ``sphinx-build -b doctest``.

One :class:`~mantyx_sync.testing.LocalMantyx` per build, started on first use
and stopped when the build's process exits. Each page's examples start from
:func:`fresh`: the default model, no faults, and ``MANTYX_BASE_URL``,
``MANTYX_WORKSPACE`` and ``MANTYX_API_KEY`` set to reach it, as a reader's shell
has them after ``mantyx-sync emulator`` (``guide/install.rst``), and nothing else
a page could lean on.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import _scripts

from mantyx_sync.testing import LocalMantyx

__all__ = ["fresh", "variables"]

_server: LocalMantyx | None = None


def fresh() -> LocalMantyx:
    """The build's emulator, back to its default model, with MANTYX_* pointing at
    it, in a new empty folder that stands for a checkout's root, with the
    stand-in browser :func:`_scripts.reader` describes."""
    global _server
    if _server is None:
        _server = LocalMantyx().start()
        atexit.register(_server.stop)
    _server.set_model(None)
    os.environ.update(variables(_server))
    folder = tempfile.mkdtemp(prefix="mantyx-docs-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    _scripts.checkout(folder)
    os.chdir(folder)
    reader = _scripts.reader(folder)
    os.environ.update(MANTYX_CONFIG_DIR=reader["MANTYX_CONFIG_DIR"], BROWSER=reader["BROWSER"])
    return _server


def variables(server: LocalMantyx) -> dict[str, str]:
    """The three ``MANTYX_*`` variables that reach ``server``."""
    return {
        "MANTYX_BASE_URL": server.base_url,
        "MANTYX_WORKSPACE": server.workspace,
        "MANTYX_API_KEY": server.api_key,
    }
