"""pytest plugin: the ``mantyx_server`` fixture (a started :class:`LocalMantyx`).

Registered through the ``pytest11`` entry point, so it is imported by every
pytest session in an environment where mantyx-sync is installed. Importing it
must stay cheap and must not need werkzeug: the emulator is only imported when
a test asks for the fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mantyx_sync.testing import LocalMantyx

__all__ = ["mantyx_server"]


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
