"""The credential store: 0600 files in the user's config dir, profiles, no secret in logs."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from mantyx_sync import ConfigurationError, TokenSet, credentials

ACCESS = "mantyx_at_store_access_token_0123456789"
REFRESH = "mantyx_rt_store_refresh_token_0123456789"


@pytest.fixture
def tokens() -> TokenSet:
    return TokenSet(
        access_token=ACCESS,
        refresh_token=REFRESH,
        expires_at=1_900_000_000.0,
        scopes=("runs:read", "runs:write"),
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MANTYX_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_save_then_load_in_the_user_config_dir_with_mode_0600(
    home: Path, tokens: TokenSet, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    path = credentials.save(tokens)
    assert path == home / "xdg" / "mantyx" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert credentials.load() == tokens
    assert ACCESS not in caplog.text and REFRESH not in caplog.text
    assert ACCESS not in repr(credentials.load()) and REFRESH not in repr(tokens)
    assert [p.name for p in path.parent.iterdir()] == ["credentials.json"]  # no temp left


def test_profiles_directory_override_and_delete(
    home: Path, tokens: TokenSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MANTYX_CONFIG_DIR", str(home / "custom"))
    other = TokenSet(access_token="mantyx_at_other_profile_token")
    credentials.save(tokens)
    credentials.save(other, profile="staging")
    assert credentials.config_dir() == home / "custom"
    assert credentials.load(profile="staging") == other
    assert credentials.load() == tokens
    assert credentials.load(profile="missing") is None
    assert credentials.delete(profile="staging") is True
    assert credentials.delete(profile="staging") is False
    assert credentials.delete() is True
    assert not (home / "custom" / "credentials.json").exists()
    explicit = credentials.save(tokens, directory=home / "elsewhere")
    assert explicit.parent == home / "elsewhere"
    assert credentials.load(directory=home / "elsewhere") == tokens


def test_missing_file_loads_none(home: Path) -> None:
    assert credentials.load() is None


def test_damaged_files_say_what_to_do(home: Path, tokens: TokenSet) -> None:
    path = credentials.save(tokens)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not valid JSON: delete it"):
        credentials.load()
    path.write_text('{"profiles": {"default": {"refresh_token": "x"}}}', encoding="utf-8")
    with pytest.raises(ConfigurationError, match="profile 'default'"):
        credentials.load()


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_file_others_can_read_is_warned_about(
    home: Path, tokens: TokenSet, caplog: pytest.LogCaptureFixture
) -> None:
    path = credentials.save(tokens)
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="mantyx_sync.credentials"):
        assert credentials.load() == tokens
    assert "chmod 600" in caplog.text and ACCESS not in caplog.text
    credentials.save(tokens)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # rewriting tightens it again


def test_bad_arguments(home: Path, tokens: TokenSet) -> None:
    with pytest.raises(ConfigurationError, match="tokens must be a TokenSet"):
        credentials.save({"access_token": ACCESS})  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="profile"):
        credentials.save(tokens, profile="")
