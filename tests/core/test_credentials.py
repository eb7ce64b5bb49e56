"""The credential store: 0600 files in the user's config dir, profiles, no secret in logs."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mantyx_sync import ConfigurationError, TokenSet, credentials

if sys.platform != "win32":
    import fcntl

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
    # No temp file left; the lock file is as private as the store.
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "credentials.json",
        "credentials.json.lock",
    ]
    assert stat.S_IMODE((path.parent / "credentials.json.lock").stat().st_mode) == 0o600


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


# Each process saves its own 15 profiles and saves and deletes a scratch one
# between them; it starts when the test says "go" (all are imported by then).
_WRITER = """
import sys
from mantyx_sync import TokenSet, credentials
worker, directory = sys.argv[1], sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()
for j in range(15):
    tokens = TokenSet(access_token=f"mantyx_at_worker_{worker}_{j}")
    credentials.save(tokens, profile=f"w{worker}-{j}", directory=directory)
    credentials.save(tokens, profile=f"scratch-{worker}", directory=directory)
    credentials.delete(profile=f"scratch-{worker}", directory=directory)
"""


# Regression (issue #20 item 9): saves and deletes were read-modify-write without
# a lock: six processes saving 15 profiles each kept 17 of 90.
def test_saves_and_deletes_from_six_processes_lose_nothing(tmp_path: Path) -> None:
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(i), str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(6)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline() == "ready\n"
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.close()
        assert [worker.wait(timeout=60) for worker in workers] == [0] * 6
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
            if worker.stdout is not None:
                worker.stdout.close()
    stored = json.loads((tmp_path / "credentials.json").read_text(encoding="utf-8"))
    expected = {f"w{i}-{j}" for i in range(6) for j in range(15)}
    assert len(set(stored["profiles"]) & expected) == 90
    assert set(stored["profiles"]) == expected  # and every scratch profile deleted
    stored_tokens = credentials.load(profile="w5-14", directory=tmp_path)
    assert stored_tokens is not None and stored_tokens.access_token == "mantyx_at_worker_5_14"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_at_the_path_is_refused_at_once(tmp_path: Path, tokens: TokenSet) -> None:
    # Regression (issue #20 item 9): load() blocked forever opening the FIFO.
    fifo = tmp_path / "credentials.json"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            credentials.load(directory=tmp_path)
            outcome.append(None)
        except BaseException as exc:  # collected for the assertion
            outcome.append(exc)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # the old behaviour: free the reader, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
        pytest.fail("load() blocked on a FIFO")
    assert isinstance(outcome[0], ConfigurationError)
    assert "not a regular file" in str(outcome[0]) and "MANTYX_CONFIG_DIR" in str(outcome[0])
    with pytest.raises(ConfigurationError, match="not a regular file"):
        credentials.save(tokens, directory=tmp_path)
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # left as it was


def test_a_directory_at_the_path_is_a_configuration_error(tmp_path: Path, tokens: TokenSet) -> None:
    # Regression (issue #20 item 9): a raw IsADirectoryError.
    (tmp_path / "credentials.json").mkdir()
    for call in (
        lambda: credentials.load(directory=tmp_path),
        lambda: credentials.save(tokens, directory=tmp_path),
        lambda: credentials.delete(directory=tmp_path),
    ):
        with pytest.raises(ConfigurationError, match="is a directory, not a credential file"):
            call()


# Regression (issue #29 item 5): a lock another process held was waited on forever.
@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_a_lock_held_elsewhere_is_given_up_on_after_lock_timeout(
    tmp_path: Path, tokens: TokenSet
) -> None:
    credentials.save(tokens, directory=tmp_path)
    # flock locks belong to an open file: this one stands for another process.
    with open(tmp_path / "credentials.json.lock", "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(ConfigurationError, match=r"locked by another process .* for 0\.3s"):
            credentials.save(tokens, profile="other", directory=tmp_path, lock_timeout=0.3)
        with pytest.raises(ConfigurationError, match="lock_timeout="):
            credentials.delete(directory=tmp_path, lock_timeout=0.3)
        assert time.monotonic() - started < 3.0
    assert credentials.load(directory=tmp_path) == tokens  # nothing was lost
    assert credentials.load(profile="other", directory=tmp_path) is None
    assert credentials.LOCK_TIMEOUT <= 30.0


# Regression (issue #29 item 5): a planted symlink at the credentials path was
# followed, by a save (writing the tokens where it pointed) and by a load.
@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_symlink_at_the_credentials_path_is_refused(tmp_path: Path, tokens: TokenSet) -> None:
    store = tmp_path / "store"
    elsewhere = tmp_path / "elsewhere"
    credentials.save(tokens, directory=elsewhere)
    store.mkdir(mode=0o700)
    (store / "credentials.json").symlink_to(elsewhere / "credentials.json")
    for call in (
        lambda: credentials.load(directory=store),
        lambda: credentials.save(tokens, profile="planted", directory=store),
        lambda: credentials.delete(directory=store),
    ):
        with pytest.raises(ConfigurationError, match="is a symbolic link, refused"):
            call()
    assert credentials.load(profile="planted", directory=elsewhere) is None


# Regression (issue #29 item 5): a directory every user may write to was used.
@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_world_writable_directory_is_refused(tmp_path: Path, tokens: TokenSet) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(ConfigurationError, match=r"writable by every user \(mode 777\)"):
        credentials.save(tokens, directory=shared)
    with pytest.raises(ConfigurationError, match="chmod o-w"):
        credentials.load(directory=shared)
    assert not (shared / "credentials.json").exists()
