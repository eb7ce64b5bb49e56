"""Fixtures for define_local_agent_api: a real, scripted agentscope-runtime AgentApp."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

import peerkit


@pytest.fixture(scope="module")
def agentscope_url() -> Iterator[str]:
    """Base URL of tests/peers/agentscope_app.py, served by uvicorn in its own venv."""
    if not peerkit.AGENTSCOPE_PYTHON.exists():
        pytest.skip("agentscope-runtime venv missing (run tests/peers/make_agentscope_venv.sh)")
    port = peerkit.free_port()
    script = str(peerkit.PEERS / "agentscope_app.py")
    with peerkit.http_peer([script, str(port)], port, python=str(peerkit.AGENTSCOPE_PYTHON)):
        yield f"http://127.0.0.1:{port}"
