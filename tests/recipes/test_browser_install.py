"""The suite's own apt-get installs (chromium, redis-server): what they run, and the reason
given when they cannot."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import recipe_support


def _fake_apt(tmp_path: Path, exit_code: int, *, locked_updates: int = 0) -> Path:
    """An apt-get stand-in recording its arguments, failing as apt does when asked to.

    Its first ``locked_updates`` ``update`` calls fail as when another apt-get
    holds the package lists' lock.
    """
    script = tmp_path / "apt-get"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{tmp_path}/calls"\n'
        f'updates=$(grep -c update "{tmp_path}/calls")\n'
        f'if [ "$3" = update ] && [ "$updates" -le {locked_updates} ]; then\n'
        '  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 1" >&2\n'
        "  exit 100\n"
        "fi\n"
        f'if [ "{exit_code}" != 0 ]; then echo "E: Unable to locate package chromium" >&2; fi\n'
        f"exit {exit_code}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Root on a machine without chromium; the locks are the test's own files."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(recipe_support, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setattr(recipe_support, "INSTALL_LOCK", str(tmp_path / "install.lock"))
    monkeypatch.setattr(recipe_support, "APT_LISTS_LOCK", str(tmp_path / "lists.lock"))


def test_runs_apt_get_update_then_install(
    as_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = _fake_apt(tmp_path, 0)
    monkeypatch.setattr(recipe_support.shutil, "which", lambda name: str(apt))
    assert recipe_support.install_chromium() is None
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[-1] for c in calls] == ["update", "chromium"]
    assert "install -y chromium" in calls[1] and "DPkg::Lock::Timeout" in calls[1]


def test_installs_redis_server_the_same_way(
    as_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = _fake_apt(tmp_path, 0)
    monkeypatch.setattr(recipe_support.shutil, "which", lambda name: str(apt))
    monkeypatch.setattr(recipe_support, "REDIS_SERVER", str(tmp_path / "no-redis-server"))
    assert recipe_support.install_redis_server() is None
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[-1] for c in calls] == ["update", "redis-server"]


def test_says_why_when_apt_get_fails(
    as_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = _fake_apt(tmp_path, 100)
    monkeypatch.setattr(recipe_support.shutil, "which", lambda name: str(apt))
    problem = recipe_support.install_chromium()
    assert problem is not None
    assert "apt-get update" in problem and "Unable to locate package chromium" in problem


def test_waits_for_the_package_lists_lock_and_tries_update_again(
    as_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = _fake_apt(tmp_path, 0, locked_updates=2)
    monkeypatch.setattr(recipe_support.shutil, "which", lambda name: str(apt))
    assert recipe_support.install_chromium() is None
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[-1] for c in calls] == ["update", "update", "update", "chromium"]


def test_gives_up_on_a_lock_that_stays_held(
    as_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = _fake_apt(tmp_path, 0, locked_updates=99)
    monkeypatch.setattr(recipe_support.shutil, "which", lambda name: str(apt))
    problem = str(recipe_support.install_chromium())
    assert "apt-get update" in problem and "Could not get lock" in problem


def test_installs_nothing_when_another_session_did(
    as_root: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = _fake_apt(tmp_path, 0)
    monkeypatch.setattr(recipe_support.shutil, "which", lambda name: str(apt))
    Path(recipe_support.CHROMIUM).touch()  # installed while this session waited its turn
    assert recipe_support.install_chromium() is None
    assert not (tmp_path / "calls").exists()


def test_without_root_it_uses_sudo_without_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = _fake_apt(tmp_path, 0)
    sudo = tmp_path / "sudo"
    # A sudo that runs its command as given after -n (as passwordless sudo does).
    sudo.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{tmp_path}/sudo-calls"\nshift\nexec "$@"\n'
    )
    sudo.chmod(sudo.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(recipe_support, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setattr(recipe_support, "INSTALL_LOCK", str(tmp_path / "install.lock"))
    tools = {"apt-get": str(apt), "sudo": str(sudo)}
    monkeypatch.setattr(recipe_support.shutil, "which", tools.get)
    assert recipe_support.install_chromium() is None
    sudo_calls = (tmp_path / "sudo-calls").read_text().splitlines()
    assert all(c.startswith(f"-n env DEBIAN_FRONTEND=noninteractive {apt} ") for c in sudo_calls), (
        sudo_calls
    )
    assert [c.split()[-1] for c in sudo_calls] == ["update", "chromium"]


def test_says_why_without_root_or_apt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(recipe_support.shutil, "which", {"apt-get": "/usr/bin/apt-get"}.get)
    assert "not running as root (and no sudo)" in str(recipe_support.install_chromium())
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(recipe_support.shutil, "which", lambda name: None)
    assert "apt-get is not available" in str(recipe_support.install_chromium())
