"""A Client created before fork (gunicorn, Celery prefork) works in the child."""

from __future__ import annotations

import os
import signal
import sys

import pytest

import mantyx_sync
from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def test_client_survives_fork(mantyx_server: LocalMantyx) -> None:
    client = mantyx_server.client()
    agent = mantyx_sync.Agent(client, system_prompt="You are a test agent.")
    assert agent.run("before fork").text  # the parent's pool now holds a live connection
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            signal.alarm(20)  # never let a broken child hang the suite
            ok = "in the child" in agent.run("in the child").text and client.models.list().models
            code = 0 if ok else 2
        except BaseException as exc:
            print(f"child failed: {exc!r}", file=sys.stderr)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # The parent's client still works after the child used its own pool.
    assert agent.run("after fork").text
