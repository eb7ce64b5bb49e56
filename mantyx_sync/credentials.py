"""An optional credential store for CLIs and scripts: OAuth token sets on disk.

:func:`save` writes a :class:`~mantyx_sync.oauth.TokenSet` under a profile name
to ``credentials.json`` in the user's config directory, readable by the user
only (mode ``0600``, in a ``0700`` directory); :func:`load` reads it back and
:func:`delete` forgets it. The tokens are never logged and never in a repr.
Saves and deletes from several processes at once each keep the others'
profiles: every change is made under a lock file next to the store
(``credentials.json.lock``) and lands by an atomic rename. A lock another
process holds is waited for at most ``lock_timeout`` seconds (default
:data:`LOCK_TIMEOUT`, 30 s), then :class:`~mantyx_sync.ConfigurationError`.

As ``ssh`` does with its keys, the store refuses a place others could tamper
with: a directory every user may write to, and a symbolic link at the
credentials path (planted to make a save write, or a load read, another file).

The directory is ``$MANTYX_CONFIG_DIR`` if set, else the platform's user
config directory: ``%APPDATA%\\mantyx`` on Windows, ``~/Library/Application
Support/mantyx`` on macOS, ``$XDG_CONFIG_HOME/mantyx`` (default
``~/.config/mantyx``) elsewhere.

Example::

    from mantyx_sync import credentials

    tokens = credentials.load() or oauth.sign_in(["runs:read", "runs:write"])
    credentials.save(tokens)
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .auth import TokenSet
from .errors import ConfigurationError

if sys.platform == "win32":
    import msvcrt
if sys.platform != "win32":
    import fcntl

__all__ = ["LOCK_TIMEOUT", "config_dir", "delete", "load", "save"]

log: logging.Logger = logging.getLogger(__name__)

_FILE = "credentials.json"
_VERSION = 1
# Opening a FIFO for reading waits for a writer; with this it does not (a
# regular file ignores the flag), so the file type can be checked first.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
# A symbolic link at the path fails the open (ELOOP) instead of being followed.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

LOCK_TIMEOUT = 30.0
"""Seconds :func:`save` and :func:`delete` wait at most for another process's lock."""


def config_dir() -> Path:
    """The directory the store uses (not created by this call)."""
    override = os.environ.get("MANTYX_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("APPDATA")
        return Path(base) / "mantyx" if base else Path.home() / "AppData" / "Roaming" / "mantyx"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "mantyx"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "mantyx"


def _path(directory: str | os.PathLike[str] | None) -> Path:
    """The credentials path, once its place is safe.

    :raises ConfigurationError: the directory is writable by every user, or a
        symbolic link sits at the credentials path.
    """
    path = (Path(directory).expanduser() if directory is not None else config_dir()) / _FILE
    if os.name == "posix":
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(path.parent.stat().st_mode)
            if mode & stat.S_IWOTH:
                raise ConfigurationError(
                    f"{path.parent} is writable by every user (mode {mode:o}): anyone could "
                    f"plant or swap the credential file there; run chmod o-w on it, or set "
                    "MANTYX_CONFIG_DIR (or pass directory=) to use a private directory"
                )
    if path.is_symlink():
        raise ConfigurationError(
            f"{path} is a symbolic link, refused: it could make the store read or write "
            "another file; remove it (the store writes a regular file there)"
        )
    return path


def _profile(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"profile must be a non-empty name, got {name!r}")
    return name


def _read(path: Path) -> dict[str, Any]:
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOFOLLOW)
    except FileNotFoundError:
        return {}
    except OSError as exc:  # no permission; on Windows also a directory
        raise ConfigurationError(
            f"cannot read {path} ({exc.strerror}): fix its permissions or remove it"
        ) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            with os.fdopen(fd, "rb", closefd=False) as file:
                raw = file.read()
    finally:
        os.close(fd)
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise ConfigurationError(
            f"{path} is {kind}, not a credential file: remove it, or set "
            "MANTYX_CONFIG_DIR (or pass directory=) to use another place"
        )
    if os.name == "posix" and stat.S_IMODE(info.st_mode) & 0o077:
        mode = stat.S_IMODE(info.st_mode)
        log.warning("%s is readable by other users (mode %o): run chmod 600 on it", path, mode)
    try:
        data = json.loads(raw)
    except ValueError:  # not JSON, or not UTF-8
        raise ConfigurationError(f"{path} is not valid JSON: delete it and sign in again") from None
    if not isinstance(data, dict) or not isinstance(data.get("profiles"), dict):
        raise ConfigurationError(f"{path} is not a mantyx credential file: delete it")
    return data


@contextlib.contextmanager
def _locked(path: Path, wait: object) -> Iterator[None]:
    """Hold the store's lock for one read-modify-write, against other processes
    (and threads: each holder opens the lock file anew), waiting ``wait`` seconds
    at most for it.

    :raises ConfigurationError: another process held it all that time.
    """
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0:
        raise ConfigurationError(f"lock_timeout must be seconds >= 0, got {wait!r}")
    seconds = float(wait)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = path.with_name(f"{path.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | _NONBLOCK | _NOFOLLOW, 0o600)
    try:
        _acquire(fd, lock, seconds)
        try:
            yield
        finally:
            if sys.platform == "win32":
                msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
            # elsewhere released when fd is closed
    finally:
        os.close(fd)


def _acquire(fd: int, lock: Path, wait: float) -> None:
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            if sys.platform == "win32":
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:  # held by another process (or thread)
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConfigurationError(
                    f"the credential store is locked by another process ({lock}) and "
                    f"stayed so for {wait:g}s: let it finish, pass a larger lock_timeout=, "
                    "or delete the lock file if no mantyx process is running"
                ) from None
            time.sleep(min(pause, left))  # the other holder gives no signal to wait on
            pause = min(pause * 2, 0.1)


def _write(path: Path, data: Mapping[str, Any]) -> None:
    """Atomically replace ``path``; the file is created ``0600`` and never wider."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        if os.name == "posix":
            os.chmod(tmp, 0o600)  # whatever the umask did
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save(
    tokens: TokenSet,
    *,
    profile: str = "default",
    directory: str | os.PathLike[str] | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
) -> Path:
    """Store ``tokens`` under ``profile`` (replacing what was there); returns the file.

    :param directory: another directory than :func:`config_dir` (tests, CI).
    :param lock_timeout: seconds to wait at most for another process's lock.
    :raises ConfigurationError: ``tokens`` is not a :class:`TokenSet`; the lock
        stayed taken ``lock_timeout`` seconds; the place is unsafe (a directory
        every user may write to, a symbolic link at the path).
    """
    if not isinstance(tokens, TokenSet):
        raise ConfigurationError(
            f"save(): tokens must be a TokenSet (from OAuth.sign_in), got {type(tokens).__name__}"
        )
    name = _profile(profile)
    path = _path(directory)
    with _locked(path, lock_timeout):
        data = _read(path) or {"version": _VERSION, "profiles": {}}
        data["profiles"][name] = tokens.to_dict()
        _write(path, data)
    log.debug("saved credentials for profile %r in %s", name, path)
    return path


def load(
    *, profile: str = "default", directory: str | os.PathLike[str] | None = None
) -> TokenSet | None:
    """The token set stored under ``profile``, or ``None`` if there is none.

    :raises ConfigurationError: the file is damaged or is not a file (a
        directory, a FIFO, a symbolic link), or its directory is writable by
        every user: the message says which and what to do.
    """
    name = _profile(profile)
    path = _path(directory)
    stored = _read(path).get("profiles", {}).get(name)
    if stored is None:
        return None
    if not isinstance(stored, dict):
        raise ConfigurationError(f"{path}: profile {name!r} is damaged: delete it")
    try:
        return TokenSet.from_dict(stored)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{path}: profile {name!r}: {exc}") from None


def delete(
    *,
    profile: str = "default",
    directory: str | os.PathLike[str] | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
) -> bool:
    """Forget ``profile``; ``True`` if it was stored. The file goes when it is empty.

    :param lock_timeout: seconds to wait at most for another process's lock.
    :raises ConfigurationError: as :func:`save`.
    """
    name = _profile(profile)
    path = _path(directory)
    if not path.parent.is_dir():
        return False
    with _locked(path, lock_timeout):
        data = _read(path)
        if name not in data.get("profiles", {}):
            return False
        del data["profiles"][name]
        if data["profiles"]:
            _write(path, data)
        else:
            path.unlink(missing_ok=True)
    log.debug("deleted credentials for profile %r in %s", name, path)
    return True
