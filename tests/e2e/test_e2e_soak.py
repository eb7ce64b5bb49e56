"""The chaos soak: many runs at once under seeded faults on every layer (issue 15).

200 runs from 8 threads share one ``Client`` against ``LocalMantyx``, while the
emulator drops, stalls and replays streams, duplicates tool calls, answers
creation and tool results with 5xx and 429, loses answers after applying them,
and cancelled runs meet 409s; handlers sleep, raise (``SystemExit`` and
``KeyboardInterrupt`` too) and return large values. It checks that every
handler ran exactly once per call, that the server holds exactly one accepted
result per call, that every run ended the right way within ``RUN_BOUND``
seconds, and that threads and file descriptors return to where they started:
every thread the soak started has ended and every descriptor it opened is
closed. (Ones open before it that close meanwhile, an earlier test's socket
collected as garbage, do not count.) The threaded soak also checks that each
kind of fault it claims to inject was met at least once.
A second variant does the same from 4 processes forked after the ``Client``
was created.

``pytest -k soak`` runs only these. A failure prints its seed; replay it with
``MANTYX_SOAK_SEED=<seed> pytest -k soak``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import attrs
import pytest
from soak_support import RUN_BOUND, Outcome, Soak, seed_from_env
from sockets_support import HAVE_PROC, fd_map, opened_since, settle

from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.skipif(not HAVE_PROC, reason="needs /proc to count descriptors")

RUNS = 200
THREADS = 8


def _client_options() -> dict[str, object]:
    # A stalled stream is noticed after 0.75 s without an event and resumed.
    return {"stream_idle_timeout": 0.75, "max_retries": 4}


def _names(threads: set[threading.Thread]) -> list[str]:
    return sorted(thread.name for thread in threads)


def _report(seed: int, problems: list[str]) -> str:
    shown = "\n  ".join(problems[:40])
    return (
        f"soak failed with MANTYX_SOAK_SEED={seed} ({len(problems)} problems):\n  {shown}\n"
        f"replay: MANTYX_SOAK_SEED={seed} pytest -k soak"
    )


def test_soak_threads_share_one_client() -> None:
    seed = seed_from_env()
    print(f"soak seed: MANTYX_SOAK_SEED={seed}")
    soak = Soak(seed, RUNS)
    threads_before = set(threading.enumerate())
    fds_before = fd_map()

    server = LocalMantyx(tool_timeout=20.0).start()
    soak.arm(server)
    client = server.client(**_client_options())
    with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="soak") as pool:
        outcomes = list(pool.map(lambda plan: soak.drive(client, plan), soak.plans))
    problems = soak.problems(server, outcomes)
    problems += soak.unexercised(server, outcomes)
    client.close()
    server.stop()

    kinds = sorted({o.kind for o in outcomes})
    print(f"soak outcomes: {kinds}; slowest run {max(o.seconds for o in outcomes):.1f}s")
    threads = settle(lambda: _names(set(threading.enumerate()) - threads_before), [])
    if threads:
        problems.append(f"threads the soak started still running: {threads}")
    fds = settle(lambda: opened_since(fds_before), [])
    if fds:
        problems.append(f"file descriptors the soak opened still open: {fds}")
    assert not problems, _report(seed, problems)
    assert sum(o.kind == "ok" for o in outcomes) > RUNS // 2, _report(seed, ["too few ok runs"])


CHILDREN = 4
CHILD_RUNS = 20
CHILD_THREADS = 2


def _child(soak: Soak, client: object, plans: list[int], out: int) -> None:  # pragma: no cover
    """Runs in a forked child: drive its share of the plans, report as JSON on ``out``."""
    code = 1
    try:
        signal.alarm(int(RUN_BOUND * 3))  # never let a broken child hang the suite
        threads_before = set(threading.enumerate())
        fds_before = fd_map()
        with ThreadPoolExecutor(max_workers=CHILD_THREADS) as pool:
            outcomes = list(pool.map(lambda i: soak.drive(client, soak.plans[i]), plans))  # type: ignore[arg-type]
        client.close()  # type: ignore[attr-defined]
        report = {
            "outcomes": [attrs.asdict(o) for o in outcomes],
            "executions": dict(soak.executions),
            "threads": settle(lambda: _names(set(threading.enumerate()) - threads_before), []),
            "fds": settle(lambda: opened_since(fds_before), []),
        }
        os.write(out, json.dumps(report).encode())
        code = 0
    except BaseException as exc:
        print(f"soak child failed: {exc!r}", file=sys.stderr)
    finally:
        os._exit(code)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_soak_forked_processes_share_a_client_made_before_the_fork() -> None:
    seed = seed_from_env()
    print(f"soak seed: MANTYX_SOAK_SEED={seed}")
    soak = Soak(seed, CHILDREN * CHILD_RUNS)
    server = LocalMantyx(tool_timeout=20.0).start()
    soak.arm(server)
    client = server.client(**_client_options())
    client.models.list()  # the parent's pool holds a live connection when it forks
    children = []
    for n in range(CHILDREN):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            os.close(read)
            _child(soak, client, list(range(n, CHILDREN * CHILD_RUNS, CHILDREN)), write)
        os.close(write)
        children.append((pid, read))
    outcomes: list[Outcome] = []
    problems: list[str] = []
    for pid, read in children:
        chunks = []
        while chunk := os.read(read, 1 << 20):
            chunks.append(chunk)
        os.close(read)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or not chunks:
            problems.append(f"child {pid} exited with {os.waitstatus_to_exitcode(status)}")
            continue
        report = json.loads(b"".join(chunks))
        outcomes += [Outcome(**o) for o in report["outcomes"]]
        soak.executions.update(report["executions"])
        for what in ("threads", "fds"):
            if report[what]:
                problems.append(f"child {pid}: {what} it started still open: {report[what]}")
    problems += soak.problems(server, outcomes)
    # The parent's client still works after its children used their own pools.
    assert client.models.list().models
    client.close()
    server.stop()
    assert not problems, _report(seed, problems)
