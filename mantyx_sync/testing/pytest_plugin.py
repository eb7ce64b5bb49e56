"""pytest plugin: the ``mantyx_server`` fixture (a started :class:`LocalMantyx`), and cassettes.

``@pytest.mark.mantyx_cassette("weather")`` records or replays the test's
MANTYX exchanges in ``cassettes/weather.json`` beside the test module
(``mantyx_sync.testing.cassette``); ``--mantyx-record-mode`` picks the mode for
the whole session, and the ``mantyx_cassette`` fixture hands the cassette over.

Registered through the ``pytest11`` entry point, so it is imported by every
pytest session in an environment where mantyx-sync is installed. Importing it
must stay cheap and must not need werkzeug: ``mantyx_sync.testing`` loads its
modules on first use, so the emulator (and requests) is only imported when a
test asks for a fixture or carries the marker.

A cassette's file never lies outside the test module's ``cassettes/`` folder:
a test id's path separators become ``_``, and a name given to the marker that
leads elsewhere (``..``, an absolute path) is refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mantyx_sync.testing import Cassette, LocalMantyx

__all__ = ["mantyx_cassette", "mantyx_server", "pytest_addoption", "pytest_configure"]

_MODES = ("once", "new_episodes", "none", "all")
_SEPARATORS = re.compile(r"[/\\\x00]")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--mantyx-record-mode``: how marked tests use their cassettes."""
    parser.addoption(
        "--mantyx-record-mode",
        choices=_MODES,
        default=None,
        help="record mode of @pytest.mark.mantyx_cassette tests (default: the marker's, else once)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``mantyx_cassette`` marker."""
    config.addinivalue_line(
        "markers",
        "mantyx_cassette(name=None, **options): record/replay the test's MANTYX exchanges "
        "in cassettes/<name>.json beside the test module",
    )


@pytest.fixture(autouse=True)
def mantyx_cassette(request: pytest.FixtureRequest) -> Iterator[Cassette | None]:
    """The test's cassette when it is marked ``mantyx_cassette`` (else ``None``).

    Example::

        @pytest.mark.mantyx_cassette("weather", match_tool_results=False)
        def test_weather(mantyx_cassette):
            client = mantyx_sync.Client()  # recorded, then replayed
            ...
    """
    marker = request.node.get_closest_marker("mantyx_cassette")
    if marker is None:
        yield None
        return
    from mantyx_sync.testing import cassette

    options: dict[str, Any] = dict(marker.kwargs)
    mode = request.config.getoption("--mantyx-record-mode", None)
    if mode is not None:
        options["record_mode"] = mode
    folder = Path(request.path).parent / "cassettes"
    if marker.args:
        path = _inside(folder, str(marker.args[0]))
    else:  # a test id, e.g. test_x[a/../b]: a name, not a path
        path = _inside(folder, _SEPARATORS.sub("_", request.node.name))
    with cassette(path, **options) as tape:
        yield tape


def _inside(folder: Path, name: str) -> Path:
    """``folder/<name>.json``, refused when ``name`` leads outside ``folder``."""
    from mantyx_sync.testing import CassetteError

    root = os.path.normpath(folder)
    path = os.path.normpath(os.path.join(root, f"{name}.json"))
    try:
        inside = os.path.commonpath([root, path]) == root
    except ValueError:  # another drive
        inside = False
    if not inside:
        raise CassetteError(
            f"the cassette name {name!r} leads outside {folder}: name a file in that "
            "folder (sub/folders are fine, '..' and absolute paths are not)"
        )
    return Path(path)


@pytest.fixture
def mantyx_server() -> Iterator[LocalMantyx]:
    """A started local MANTYX emulator, stopped after the test.

    Example::

        def test_hello(mantyx_server):
            client = mantyx_server.client()
            ...

    :raises pytest.UsageError: werkzeug (the ``testing`` extra) is not installed.
    """
    try:
        import werkzeug.serving  # noqa: F401 - only checks that the extra is installed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise pytest.UsageError(
            "the mantyx_server fixture needs werkzeug: pip install 'mantyx-sync[testing]'"
        ) from exc
    from mantyx_sync.testing import LocalMantyx

    server = LocalMantyx()
    server.start()
    try:
        yield server
    finally:
        server.stop()
