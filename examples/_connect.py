"""How the examples reach MANTYX: the real service when configured, else the local emulator.

With MANTYX_API_KEY set (and MANTYX_WORKSPACE), :func:`connect` opens a
:class:`mantyx_sync.Client` from the environment. Otherwise it starts the
bundled :class:`~mantyx_sync.testing.LocalMantyx` emulator (no account, no
network) with the example's scripted stand-in for the model, and opens a
client of it. Either way the client is closed with the example's
:class:`contextlib.ExitStack`.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import mantyx_sync

__all__ = ["connect"]


def connect(stack: contextlib.ExitStack, model: Any = None) -> mantyx_sync.Client:
    """A client of MANTYX, or of the local emulator playing ``model``; says which."""
    if os.environ.get("MANTYX_API_KEY"):
        client = stack.enter_context(mantyx_sync.Client())
        print(f"Using MANTYX at {client.config.base_url} (workspace {client.config.workspace})")
        return client
    from mantyx_sync.testing import LocalMantyx

    server = stack.enter_context(LocalMantyx(model=model))
    print(f"MANTYX_API_KEY is not set: using the local MANTYX emulator at {server.base_url}")
    print("(a scripted stand-in model, not a real LLM)")
    return stack.enter_context(server.client())
