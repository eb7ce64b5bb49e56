"""Sphinx configuration for the mantyx_sync documentation.

Build the site with ``sphinx-build -W --keep-going -b html docs docs/_build/html``
and run every example in it with ``sphinx-build -W --keep-going -b doctest docs
docs/_build/doctest`` (``tox -e docs`` does both). The examples run against the
bundled local MANTYX emulator, started once per build by ``_emulator.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import mantyx_sync  # noqa: E402 - the checkout's package, found through the path above

project = "mantyx_sync"
author = "The mantyx_sync authors"
copyright = "the mantyx_sync authors"
release = version = mantyx_sync.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.doctest", "sphinx.ext.intersphinx"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = "mantyx_sync"
html_theme_options = {"description": "The synchronous Python SDK for MANTYX agent runs"}

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}
autoclass_content = "class"

intersphinx_mapping: dict[str, tuple[str, str | None]] = {}

# Every example runs against one local MANTYX emulator; each page starts with
# the emulator's default model and MANTYX_* pointing at it, as a user's shell
# would, and runs as a script does (``__name__``, which Flask reads).
# An example that uses a deprecated name fails the build: the guide shows only
# the current API.
doctest_global_setup = """
__name__ = "__main__"
import warnings
warnings.filterwarnings("error", message=".* is deprecated: use ", category=DeprecationWarning)
import mantyx_sync
import _emulator
emulator = _emulator.fresh()
"""
doctest_global_cleanup = "_emulator.fresh()"
# Output is compared as shown, exception messages included (not just their type).
import doctest  # noqa: E402

doctest_default_flags = doctest.ELLIPSIS | doctest.DONT_ACCEPT_TRUE_FOR_1
