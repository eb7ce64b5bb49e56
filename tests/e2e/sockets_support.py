"""Counting this process's open sockets and descriptors from /proc (test helper, no psutil)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "HAVE_PROC",
    "client_sockets",
    "fd_map",
    "fd_targets",
    "open_fds",
    "open_sockets",
    "opened_since",
    "settle",
]

T = TypeVar("T")

HAVE_PROC = os.path.isdir("/proc/self/fd") and os.path.exists("/proc/self/net/tcp")


def _fd_targets() -> dict[str, str]:
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile (or the listing's own descriptor)
    return found


def open_fds() -> int:
    """How many file descriptors this process has open, werkzeug's stray epolls aside.

    werkzeug's request handler (the emulator's server, in this process) opens
    an epoll selector to drain a request body and leaks it until garbage
    collection when the client reset the connection meanwhile — which the
    soak's dropped connections do on purpose. The client opens no epoll of its
    own (urllib3 waits with ``poll``), so leaving those out hides nothing of it.
    """
    return sum(1 for t in _fd_targets().values() if t != "anon_inode:[eventpoll]")


def fd_map() -> dict[str, str]:
    """Descriptor -> what it points at, werkzeug's stray epolls left out (see :func:`open_fds`)."""
    return {fd: t for fd, t in _fd_targets().items() if t != "anon_inode:[eventpoll]"}


def opened_since(before: dict[str, str]) -> list[str]:
    """What each descriptor opened since ``before`` (a :func:`fd_map`) and still open points at.

    A descriptor open before and closed meanwhile (an earlier test's socket
    closed by garbage collection) does not count: only what was opened since.
    """
    return sorted(t for fd, t in fd_map().items() if before.get(fd) != t)


def fd_targets() -> list[str]:
    """What each open descriptor points at (for a failure message)."""
    return sorted(_fd_targets().values())


def open_sockets() -> set[str]:
    """This process's open sockets, as ``socket:[inode]``."""
    return {t for t in _fd_targets().values() if t.startswith("socket:")}


def client_sockets(port: int) -> set[str]:
    """This process's TCP sockets connected *to* ``port`` (the client ends), any state."""
    mine = {t[len("socket:[") : -1] for t in open_sockets()}
    found = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(table) as lines:
                rows = lines.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            inode = fields[9]
            if remote_port == port and inode in mine:
                found.add(f"socket:[{inode}]")
    return found


def settle(read: Callable[[], T], expected: T, *, timeout: float = 5.0) -> T:
    """``read()`` once it equals ``expected``, or its value when ``timeout`` passed.

    Sockets close asynchronously (a peer's FIN, a pool thread finishing its
    answer): there is no event to wait on, so this re-reads at short intervals.
    """
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    current = read()
    while current != expected and time.monotonic() < deadline:
        tick.wait(0.02)
        current = read()
    return current
