"""examples/recipes/celery_app.py's ``Lease`` on a real Redis: what holding leases costs
in threads, and every lease lost on time while its renewals hang (``pytest -k celery``)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="os.fork"),
    pytest.mark.timeout(60),
]
for module in ("celery", "redis"):
    pytest.importorskip(module, reason='needs celery[redis]: pip install -e ".[test]"')


@pytest.fixture
def hung(recipe: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Renewal calls hang (a silent Redis) while the event is clear, and then fail;
    set, they reach Redis, as acquiring and releasing always do. The test's end sets it."""
    answering = threading.Event()
    real_eval = recipe.lease_store.eval

    def hanging_renewals(script: str, *args: Any) -> Any:
        if script == recipe.Lease._RENEW and not answering.is_set():
            answering.wait(30)
            raise recipe.redis.TimeoutError("Redis did not answer")
        return real_eval(script, *args)

    monkeypatch.setattr(recipe.lease_store, "eval", hanging_renewals)
    yield answering
    answering.set()


def _lease_threads(before: set[threading.Thread]) -> list[str]:
    return sorted(t.name for t in set(threading.enumerate()) - before if t.name.startswith("lease"))


def test_celery_leases_held_at_once_cost_a_thread_each(recipe: ModuleType) -> None:
    # A renewal thread per lease and one watchdog per process, not a watchdog per
    # lease: a threads worker holding N runs had 3N threads instead of 2N.
    before = set(threading.enumerate())
    held = [recipe.Lease(f"mantyx:job:held{i}:lease", "a") for i in range(8)]
    try:
        assert all(lease.acquire() for lease in held)
        threads = _lease_threads(before)
        assert len(threads) == len(held) + 1, threads
        assert threads == sorted(["lease watchdog", *(f"lease {lease.key}" for lease in held)])
    finally:
        for lease in held:
            lease.release()
    # Released, a lease leaves no thread; the watchdog stays for the next ones.
    assert _lease_threads(before) == ["lease watchdog"]
    again = recipe.Lease("mantyx:job:again:lease", "a")
    assert again.acquire()
    again.release()
    assert _lease_threads(before) == ["lease watchdog"]


def test_celery_leases_not_renewed_are_each_lost_on_time(
    recipe: ModuleType, hung: threading.Event
) -> None:
    # One watchdog keeps every lease's time. Longest first: each lease taken later
    # is due sooner, so the watchdog must wake up for it. The first lost has a
    # callback that fails: the watchdog goes on.
    taken: list[tuple[Any, float]] = []
    lost_at: dict[str, float] = {}

    def failing() -> None:
        raise RuntimeError("a callback that fails")

    try:
        for seconds in (2.4, 1.8, 1.2):
            lease = recipe.Lease(f"mantyx:job:hung{seconds}:lease", "a", seconds)
            asked = time.monotonic()
            assert lease.acquire()
            lease.on_lost(lambda key=lease.key: lost_at.setdefault(key, time.monotonic()))
            taken.append((lease, asked))
        lease.on_lost(failing)
        for lease, asked in taken:
            assert lease.lost.wait(10), lease.key
            half = lease.ms / 2000
            # Not before half the lease, and well before the key lapses (a whole one).
            assert half <= lost_at[lease.key] - asked < half + 0.25, (lease.key, lost_at)
        assert sorted(lost_at, key=lost_at.__getitem__) == [lease.key for lease, _ in taken][::-1]
    finally:
        hung.set()
        for lease, _ in taken:
            lease.release()


def test_celery_lease_in_a_forked_child_is_lost_on_time(
    recipe: ModuleType, hung: threading.Event
) -> None:
    # A Celery prefork pool process is forked from a process whose watchdog may
    # already run: the child has no copy of that thread and must start its own.
    hung.set()  # the parent's lease renews; only the child's renewals hang
    parent = recipe.Lease("mantyx:job:parent:lease", "a")
    assert parent.acquire()
    try:
        pid = os.fork()
        if pid == 0:
            verdict = 3  # an exception
            try:
                hung.clear()
                lease = recipe.Lease("mantyx:job:child:lease", "b")
                asked = time.monotonic()
                assert lease.acquire()
                lost = lease.lost.wait(5)
                late = time.monotonic() - asked - lease.ms / 2000
                verdict = 0 if lost and late < 0.25 else 2 if lost else 1
            finally:
                os._exit(verdict)
        statuses: list[int] = []
        waiter = threading.Thread(target=lambda: statuses.append(os.waitpid(pid, 0)[1]))
        waiter.start()
        waiter.join(15)
        if waiter.is_alive():  # never a hung test: the child is ended and the test fails
            os.kill(pid, signal.SIGKILL)
            waiter.join(5)
            pytest.fail("the forked child hung")
        assert os.waitstatus_to_exitcode(statuses[0]) == 0, "1: never lost, 2: lost late, 3: raised"
        assert not parent.lost.is_set()
    finally:
        parent.release()


def test_celery_lease_released_while_being_lost_waits_for_its_callbacks(
    recipe: ModuleType, hung: threading.Event
) -> None:
    # The callback closes the run, waiting for an answer on the wire: the job
    # must not attach to the run again (and answer that call twice) before then.
    lease = recipe.Lease("mantyx:job:closing:lease", "a")
    closing, closed = threading.Event(), threading.Event()
    done: list[str] = []

    def close_the_run() -> None:
        closing.set()
        closed.wait(10)
        done.append("callback")

    assert lease.acquire()
    lease.on_lost(close_the_run)
    assert closing.wait(10)  # the watchdog found the loss and runs the callback
    hung.set()  # the renewal call returns: nothing else holds up the release
    releasing = threading.Thread(target=lambda: (lease.release(), done.append("release")))
    releasing.start()
    releasing.join(0.5)  # long enough for a release that does not wait to return
    closed.set()
    releasing.join(10)
    assert done == ["callback", "release"]
