"""Fixtures for the recipe tests: a real headless Chromium and a real redis-server,
installed when missing.

The browser is Debian's ``chromium`` driven by Playwright (``playwright`` from
PyPI, in the ``test`` dependency group) through ``executable_path``; Playwright's own
browser download is never used. The Celery recipe's broker is Debian's
``redis-server``. On a machine without ``/usr/bin/chromium`` or
``/usr/bin/redis-server`` the suite installs it with apt-get when running as
root or with passwordless sudo, and otherwise skips those tests saying why.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fleet_support import LoggedProcess, LogSeen, SalesModel, free_port, fresh_recipe
from recipe_support import CHROMIUM, REDIS_SERVER, install_chromium, install_redis_server

from mantyx_sync.testing import LocalMantyx

# Headless in a sandbox-less container, with nothing phoning home: on a closed
# network Chromium's background connections would only be refused.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def emulator() -> Iterator[LocalMantyx]:
    """A local MANTYX emulator shared by one module's tests.

    Its default model calls every local tool of the spec once, then answers.
    """
    with LocalMantyx() as server:
        yield server


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The path of Debian's Chromium, installed by apt-get first if missing."""
    if not os.path.exists(CHROMIUM):
        problem = install_chromium()
        if problem is not None or not os.path.exists(CHROMIUM):
            why = problem or "apt-get installed no /usr/bin/chromium"
            pytest.skip(f"the browser tests need Debian's chromium ({CHROMIUM}): {why}")
    return CHROMIUM


@pytest.fixture(scope="session")
def redis_server_path() -> str:
    """The path of Debian's redis-server, installed by apt-get first if missing."""
    if not os.path.exists(REDIS_SERVER):
        problem = install_redis_server()
        if problem is not None or not os.path.exists(REDIS_SERVER):
            why = problem or "apt-get installed no /usr/bin/redis-server"
            pytest.skip(f"the Celery tests need Debian's redis-server ({REDIS_SERVER}): {why}")
    return REDIS_SERVER


@contextlib.contextmanager
def _redis_server(path: str) -> Iterator[tuple[str, LoggedProcess]]:
    port = free_port()
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    server = LoggedProcess([path, *args], os.environ, ready="Ready to accept")
    try:
        yield f"redis://127.0.0.1:{port}/0", server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.proc.pid, signal.SIGCONT)  # a test may have stopped it
        server.stop()


@pytest.fixture(scope="module")
def redis_url(redis_server_path: str) -> Iterator[str]:
    """A real redis-server on a free loopback port, for one module's tests; nothing saved."""
    with _redis_server(redis_server_path) as (url, _):
        yield url


@pytest.fixture
def own_redis(redis_server_path: str) -> Iterator[tuple[str, LoggedProcess]]:
    """A redis-server of one test's own (its URL and process): one the test may stop."""
    with _redis_server(redis_server_path) as server:
        yield server


@pytest.fixture(scope="module")
def sales_model() -> SalesModel:
    """The model of the Celery recipe's jobs (see :class:`fleet_support.SalesModel`)."""
    return SalesModel()


@pytest.fixture
def recipe(sales_emulator: LocalMantyx, redis_url: str) -> Iterator[ModuleType]:
    """The Celery recipe imported here (as a worker would run its jobs), with a 1.5 s
    lease, on a flushed Redis."""
    module = fresh_recipe(sales_emulator, redis_url, JOB_LEASE_SECONDS="1.5")
    module.store.flushall()
    yield module
    module.app.close()
    module.store.close()
    module.lease_store.close()
    module.client.close()


@pytest.fixture
def seen(recipe: ModuleType) -> Iterator[LogSeen]:
    """The recipe's log records from INFO up."""
    handler = LogSeen()
    logger = logging.getLogger(recipe.__name__)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture(scope="module")
def sales_emulator(sales_model: SalesModel) -> Iterator[LocalMantyx]:
    """An emulator running :func:`sales_model`, patient with tool calls a dead worker left."""
    with LocalMantyx(model=sales_model, tool_timeout=120) as server:
        yield server


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    """A headless Chromium driven by Playwright, shared by one module's tests.

    Not session-wide: while Playwright's sync API is active its event loop is
    the running loop of the main thread, and ``asyncio.run`` in later tests
    would fail.
    """
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser tests need playwright: pip install --group test"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def browser_context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile (cookies, storage) for one test; its tabs share it."""
    context = browser.new_context()
    context.set_default_timeout(10_000)
    try:
        yield context
    finally:
        context.close()


# The recipes import their shared module (web_stream) as a sibling, as they do
# when started with `flask --app examples/recipes/flask_app.py` or
# `python examples/recipes/django_app.py`.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "recipes"))
