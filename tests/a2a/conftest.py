"""Fixtures for the a2a_local tests: real a2a-sdk peers in subprocesses, always reaped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

import peerkit


@pytest.fixture(scope="module")
def a2a_base() -> Iterator[str]:
    """An a2a-sdk 1.x peer speaking A2A 1.0 and (compat) 0.3 on one endpoint."""
    port = peerkit.free_port()
    with peerkit.http_peer([str(peerkit.PEERS / "a2a_peer.py"), str(port)], port):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def a2a_legacy_card_base() -> Iterator[str]:
    """A 1.0-only peer whose card is served only at the older /.well-known/agent.json."""
    port = peerkit.free_port()
    args = [
        str(peerkit.PEERS / "a2a_peer.py"),
        str(port),
        "--v10-only",
        "--card-path",
        "/.well-known/agent.json",
    ]
    with peerkit.http_peer(args, port):
        yield f"http://127.0.0.1:{port}"
