"""Sphinx configuration for the mantyx_sync documentation.

Build the site with ``sphinx-build -W --keep-going -b html docs docs/_build/html``
and run every example in it with ``sphinx-build -W --keep-going -b doctest docs
docs/_build/doctest`` (``tox -e docs`` does both). The examples run against the
bundled local MANTYX emulator, started once per build by ``_emulator.py``, and
the doctest build then runs each guide page's visible code as one script
(``_scripts.py``).
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

# Every example runs against one local MANTYX emulator. The only setup a page
# gets is what a reader's shell has after the first page: MANTYX_* pointing at
# the emulator (back to its default model), in a new empty folder; a page runs
# as a script does (``__name__``, which Flask reads). All else is on the page:
# each guide page's visible code is also run in order as one script in a fresh
# interpreter (``_scripts.py``), and a hidden block fails the build. An example
# that uses a deprecated name fails the build: the guide shows only the current API.
doctest_global_setup = """
__name__ = "__main__"
__import__("warnings").filterwarnings(
    "error", message=".* is deprecated: use ", category=DeprecationWarning
)
__import__("_emulator").fresh()
"""
doctest_global_cleanup = '__import__("_emulator").fresh()'
# Output is compared as shown, exception messages included (not just their type).
import doctest  # noqa: E402

doctest_default_flags = doctest.ELLIPSIS | doctest.DONT_ACCEPT_TRUE_FOR_1


def _draw_trace(app: object) -> None:
    """The tracing page's picture, drawn from a real run's spans as the build starts."""
    import _trace_picture

    _trace_picture.write(HERE / "guide" / "_generated" / "trace.svg")


def _run_pages_as_scripts(app: object, exception: BaseException | None) -> None:
    """After the doctest build: each guide page's visible code as one script (a warning each)."""
    if exception is not None or app.builder.name != "doctest":  # type: ignore[attr-defined]
        return
    import _emulator
    import _scripts
    from sphinx.util import logging

    from mantyx_sync.testing import LocalMantyx

    logger = logging.getLogger(__name__)
    for page in sorted((HERE / "guide").glob("*.rst")):
        with LocalMantyx() as server:  # a reader's own, as `mantyx-sync emulator` starts
            for failure in _scripts.check(page, _emulator.variables(server)):
                logger.warning("%s", failure.message)


def setup(app: object) -> None:
    app.connect("builder-inited", _draw_trace)  # type: ignore[attr-defined]
    app.connect("build-finished", _run_pages_as_scripts)  # type: ignore[attr-defined]
