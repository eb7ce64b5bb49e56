"""Definition-level review fixes: strict names, cwd errors, secrets and URLs in messages."""

from __future__ import annotations

from pathlib import Path

import peerkit
import pytest

from mantyx_sync._base.limits import TOOL_NAME_RE
from mantyx_sync._base.redact import redact_text
from mantyx_sync.errors import SpecError, ToolResolutionError
from mantyx_sync.mcp import define_local_mcp

RAW_PEER = str(peerkit.PEERS / "raw_mcp_peer.py")


def test_tool_name_re_rejects_a_trailing_newline() -> None:
    assert TOOL_NAME_RE.match("abc") is not None
    assert TOOL_NAME_RE.match("a" * 64) is not None
    for bad in ("abc\n", "abc\n\n", "\nabc", "a" * 65, "", "a-b"):
        assert TOOL_NAME_RE.match(bad) is None, bad
    with pytest.raises(SpecError):
        define_local_mcp("fs\n", command="x")


def test_missing_cwd_is_reported_as_such(tmp_path: Path) -> None:
    missing = str(tmp_path / "not-there")
    with pytest.raises(ToolResolutionError) as info:
        define_local_mcp("c", command=peerkit.PYTHON, args=[RAW_PEER], cwd=missing).connect()
    assert "working directory" in str(info.value) and missing in str(info.value)
    assert "command not found" not in str(info.value)


def test_missing_command_is_still_command_not_found(tmp_path: Path) -> None:
    with pytest.raises(ToolResolutionError, match="command not found"):
        define_local_mcp("c", command="no-such-mcp-binary-xyz", cwd=str(tmp_path)).connect()


def test_env_and_header_values_are_registered_as_secrets() -> None:
    define_local_mcp("e", command="x", env={"TOKEN": "env-secret-value-1"})
    define_local_mcp("u", url="http://h/mcp", headers={"X-Key": "hdr-secret-value-2"})
    assert redact_text("env-secret-value-1 hdr-secret-value-2") == "*** ***"


def test_connect_error_hides_url_userinfo_and_query() -> None:
    port = peerkit.free_port()  # nothing listens there
    url = f"http://bob:pw-s3cret@127.0.0.1:{port}/mcp?key=k-s3cret"
    with pytest.raises(ToolResolutionError) as info:
        define_local_mcp("u", url=url, timeout=2).connect()
    text = str(info.value)
    assert f"http://127.0.0.1:{port}/mcp" in text
    assert "s3cret" not in text and "bob" not in text


def test_ordinary_env_values_are_not_masked() -> None:
    define_local_mcp("p", command="x", env={"DATA_DIR": "/srv/plain-data-dir"})
    assert redact_text("/srv/plain-data-dir") == "/srv/plain-data-dir"
