"""Celery recipe: agent runs on a fleet of workers over Redis, surviving a worker's death.

    redis-server
    celery -A examples.recipes.celery_app worker        # on every worker machine
    python examples/recipes/celery_app.py "How much did the north region sell in 14 days?"

Workers and producers read MANTYX_API_KEY, MANTYX_WORKSPACE (and MANTYX_BASE_URL)
and REDIS_URL (default ``redis://localhost:6379/0``, broker and result backend).
To try it without MANTYX, start a local emulator and point both at it::

    python -m mantyx_sync.testing serve --port 8765
    export MANTYX_BASE_URL=http://127.0.0.1:8765 MANTYX_API_KEY=mantyx_test_key
    export MANTYX_WORKSPACE=test-ws

Queue jobs with :func:`submit` (``submit(prompt, job_key=...)``; the key
defaults to a new one and is the task id). A job never starts a second MANTYX
run and no tool call is answered twice, whatever happens to the workers:

* Late acknowledgement: a message is acknowledged when its task returns, so
  the job of a worker that dies comes back, after ``JOB_VISIBILITY_TIMEOUT``
  seconds, to another worker. A message the broker lost outright (a worker
  killed just as it took the message) is queued again by :func:`sweep`, which
  every worker runs in turn.
* The job's state lives in Redis under ``mantyx:job:<key>:`` -- ``run``: the
  MANTYX run id, written before any event is read (a worker that comes back to
  the job attaches to that run, ``Runs.attach``, and answers only the
  calls still pending); ``lease``: which worker follows the run, expiring
  ``JOB_LEASE_SECONDS`` after its last renewal; ``answer``: the outcome;
  ``prompt``: what :func:`sweep` queues again, kept only while the job is open.
* A job starts at most one run. The run carries the job key in its metadata;
  an attempt that may have made one without recording its id (its worker died,
  its create's answer was lost) looks it up by that key before creating, and a
  failed lookup fails the attempt. A failure once the run exists hands it over
  (``Run.close(cancel=False)``) rather than cancelling it.
* One worker follows a run at a time. A second copy of the job (a message
  redelivered while its first worker still runs it) waits for the answer, or
  takes over once the lease lapses. The lease is lost at its last successful
  renewal plus half the lease, whether or not a renewal call has returned (a
  silent Redis): the worker then stops answering calls, and sends none once
  ``Run.close(cancel=False)`` has returned, before another one can take it.

The pattern needs nothing of Celery but late acknowledgement: call
:func:`run_job` from an RQ job, a Django-Q task or a plain worker loop.
What no lease can rule out: a worker frozen (not dead) for half its lease at
the wrong moment -- while creating a run, or between deciding to send an
answer and sending it -- could start a second run or send a late answer; and
a server that makes a run only after the lookup for it (the create's answer
lost, the request still queued there) can leave a second one.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from typing import Any

import redis
from celery import Celery
from celery.result import AsyncResult
from celery.signals import worker_ready

import mantyx_sync

log = logging.getLogger(__name__)

REDIS_URL = os.environ.get("REDIS_URL", "redis://localhost:6379/0")
# Longer than most jobs: a job still running then is handed out again and the
# copy only waits (a worker slot spent). It is also how long a dead worker's
# jobs take to come back.
VISIBILITY_TIMEOUT_S = float(os.environ.get("JOB_VISIBILITY_TIMEOUT", "600"))
LEASE_S = float(os.environ.get("JOB_LEASE_SECONDS", "30"))
KEEP_S = 86_400  # a job's run id and answer; the same job key later starts afresh
STARTING = "starting"  # the run key while a run is being created
RESTORE_S = int(min(10, max(1, VISIBILITY_TIMEOUT_S // 10)))
JOBS = "mantyx:jobs"  # job key -> when it was last queued or taken, until answered

app = Celery("mantyx_jobs", broker=REDIS_URL, backend=REDIS_URL)
app.conf.update(
    task_acks_late=True,  # acknowledged when the task returns, not when it starts
    task_reject_on_worker_lost=True,  # a pool process killed under a live worker: requeue now
    worker_prefetch_multiplier=1,  # reserve only the jobs a worker runs: none stranded
    broker_transport_options={
        "visibility_timeout": VISIBILITY_TIMEOUT_S,
        # Look for lost jobs every tenth of the timeout (at most every 10 s).
        "unacked_restore_interval": RESTORE_S,
        "unacked_restore_throttle": 1,
    },
    result_expires=KEEP_S,
    broker_connection_retry_on_startup=True,
)


def sales_total(region: str, days: int) -> dict[str, Any]:
    """Units sold in a region over the last days.

    Args:
        region: The sales region, e.g. "north".
        days: How many days back to count, 1 to 90.
    """
    time.sleep(0.1 * days)  # a stand-in for a slow warehouse query
    units = (zlib.crc32(region.encode()) % 90 + 10) * days
    return {"region": region, "days": days, "units": units, "worker_pid": os.getpid()}


def _log_tool(step: mantyx_sync.ToolActivity) -> None:
    # What became of each answer: "run_terminal" is one this worker no longer sent.
    if step.phase == "start":
        log.info("tool %s (%s) started", step.name, step.tool_use_id)
    else:
        log.info("tool %s (%s) ended; answer %s", step.name, step.tool_use_id, step.delivery)


# Built at import, before the worker forks its pool (the SDK is fork-safe).
client = mantyx_sync.Client()  # MANTYX_API_KEY, MANTYX_WORKSPACE, MANTYX_BASE_URL
agent = mantyx_sync.Agent(
    client,
    system_prompt="You answer sales questions. Use sales_total for every region asked about.",
    tools=[sales_total],
)
store = redis.Redis.from_url(REDIS_URL, decode_responses=True)
# The lease's own client: a call that hangs (a silent partition) fails within a
# quarter of the lease instead of never returning.
lease_store = redis.Redis.from_url(
    REDIS_URL,
    decode_responses=True,
    socket_timeout=LEASE_S / 4,
    socket_connect_timeout=LEASE_S / 4,
)


class Lease:
    """This worker's claim to follow one job's run, renewed in the background while held.

    It is lost when another worker holds the key, or at the last successful
    renewal plus half the lease, whether or not a renewal call has returned (the
    process's watchdog keeps that time): ``on_lost`` callbacks then run at once,
    so this worker stops answering calls well before another one may take over.
    A held lease costs one thread, its renewal's.
    """

    _RENEW = (
        "if redis.call('get', KEYS[1]) == ARGV[1] then "
        "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
    )
    _RELEASE = (
        "if redis.call('get', KEYS[1]) == ARGV[1] then "
        "return redis.call('del', KEYS[1]) end return 0"
    )

    def __init__(self, key: str, owner: str, seconds: float = LEASE_S) -> None:
        self.key, self.token, self.ms = key, f"{owner}:{os.urandom(6).hex()}", int(seconds * 1000)
        self.lost = threading.Event()
        self._changed = threading.Condition()
        self._stopped = False
        self._callbacks: list[Callable[[], None]] = []
        self._called_back = False  # a loss's callbacks have all returned
        self._renewer = threading.Thread(target=self._renew, name=f"lease {key}", daemon=True)

    def acquire(self) -> bool:
        asked = time.monotonic()  # the key lives at least a lease from here
        if not lease_store.set(self.key, self.token, nx=True, px=self.ms):
            return False
        _watchdog.watch(self, asked + self.ms / 2000)
        self._renewer.start()
        return True

    def on_lost(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once the lease is lost (now, if it already is).

        It runs on the thread that found the loss, the watchdog's when the lease
        was not renewed in time, so it must return quickly: another lease lost at
        the same moment waits for it. ``run.close(cancel=False)`` does, waiting at
        most for an answer already on the wire."""
        with self._changed:
            if not self.lost.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def release(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify_all()
            # A loss under way closes the run, waiting for an answer on the wire:
            # the job must not attach to the run again (and answer twice) before.
            self._changed.wait_for(lambda: self._called_back or not self.lost.is_set())
        _watchdog.forget(self)
        self._renewer.join()
        try:
            lease_store.eval(self._RELEASE, 1, self.key, self.token)
        except redis.RedisError:
            log.warning("%s: could not release; it lapses by itself", self.key)

    def _over(self) -> bool:
        return self._stopped or self.lost.is_set()

    def _renew(self) -> None:
        while True:
            with self._changed:
                if self._changed.wait_for(self._over, self.ms / 3000):
                    return
            asked = time.monotonic()
            try:
                held = bool(lease_store.eval(self._RENEW, 1, self.key, self.token, self.ms))
            except redis.RedisError as exc:
                log.warning("%s: could not renew (%s)", self.key, exc)
                continue
            if not held:
                self._lose("another worker holds it")
                return
            _watchdog.renewed(self, asked + self.ms / 2000)

    def _lose(self, why: str) -> None:
        with self._changed:
            if self._over():
                return
            self.lost.set()
            self._changed.notify_all()
            callbacks = list(self._callbacks)
        _watchdog.forget(self)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # the watchdog goes on watching the other leases
                log.exception("%s: a callback of the lost lease failed", self.key)
        with self._changed:
            self._called_back = True
            self._changed.notify_all()
        log.warning("%s: lease lost (%s); this worker stopped answering its calls", self.key, why)


class _Watchdog:
    """Declares leases lost at their last successful renewal plus half the lease.

    Not the renewing thread's job: a renewal call can hang (a silent Redis)
    for longer than that. One thread per process watches every lease held in
    it, started on first use.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._lost_at: dict[Lease, float] = {}  # the leases watched: when each is lost (monotonic)
        self._pid = 0  # the process whose thread watches them
        if hasattr(os, "register_at_fork"):
            # A child forked while a thread here held the lock would wait for it forever.
            os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self._changed = threading.Condition()
        self._lost_at = {}
        self._pid = 0

    def watch(self, lease: Lease, lost_at: float) -> None:
        with self._changed:
            if self._pid != os.getpid():
                # First use in this process. A forked child (a Celery prefork pool
                # process) has neither its parent's thread nor its leases.
                self._pid = os.getpid()
                self._lost_at.clear()
                threading.Thread(target=self._run, name="lease watchdog", daemon=True).start()
            self._lost_at[lease] = lost_at
            self._changed.notify()  # it may be lost before all the others

    def renewed(self, lease: Lease, lost_at: float) -> None:
        # Only ever later: the thread wakes up at the earlier time, and sleeps again.
        with self._changed:
            if lease in self._lost_at:  # not released or lost meanwhile
                self._lost_at[lease] = lost_at

    def forget(self, lease: Lease) -> None:
        with self._changed:
            self._lost_at.pop(lease, None)

    def _run(self) -> None:
        while True:
            with self._changed:
                now = time.monotonic()
                due = [lease for lease, lost_at in self._lost_at.items() if lost_at <= now]
                if not due:
                    earliest = min(self._lost_at.values(), default=None)
                    self._changed.wait(None if earliest is None else earliest - now)
                    continue
                for lease in due:
                    del self._lost_at[lease]
            for lease in due:  # outside the lock: a callback may take a while
                lease._lose("not renewed for half the lease")


_watchdog = _Watchdog()


def _key(job_key: str, field: str) -> str:
    return f"mantyx:job:{job_key}:{field}"


def run_job(job_key: str, prompt: str, *, owner: str) -> dict[str, Any]:
    """Follow the job's run to its end, starting it only if the job has none, and
    return the outcome (plain data, for a result backend).

    Any number of workers may call it for one job at once; one follows the run,
    the others wait for its answer or take over when its lease lapses.
    """
    while True:
        answer = store.get(_key(job_key, "answer"))
        if answer is not None:
            return dict(json.loads(answer))
        lease = Lease(_key(job_key, "lease"), owner)
        if not lease.acquire():
            log.info("job %s: another worker follows its run; waiting", job_key)
            time.sleep(LEASE_S / 3)
            continue
        store.zadd(JOBS, {job_key: time.time()}, xx=True)
        try:
            outcome = _follow(job_key, prompt, lease)
            if outcome is not None:  # stored while the lease is held: no one re-follows
                outcome["worker"] = owner
                _close_job(job_key, outcome)
                return outcome
        finally:
            lease.release()


def _close_job(job_key: str, outcome: dict[str, Any], *, only_if_open: bool = False) -> None:
    """Store the job's outcome; its prompt is kept only while the job is open."""
    with store.pipeline() as tx:  # MULTI: all or nothing
        tx.set(_key(job_key, "answer"), json.dumps(outcome), ex=KEEP_S, nx=only_if_open)
        tx.delete(_key(job_key, "prompt"))
        tx.zrem(JOBS, job_key)
        tx.execute()


def _follow(job_key: str, prompt: str, lease: Lease) -> dict[str, Any] | None:
    """The run's outcome, or ``None`` when the lease was lost on the way."""
    run, attached = _open_run(job_key, prompt)
    try:
        lease.on_lost(lambda: run.close(cancel=False))
        result = run.wait()
    except mantyx_sync.RunError as exc:  # failed or cancelled: the job's outcome
        return {"run_id": run.id, "error": str(exc), "code": exc.code, "attached": attached}
    except mantyx_sync.MantyxError:
        if lease.lost.is_set():
            return None  # closed under us: another worker follows the run now
        raise
    finally:
        run.close(cancel=False)  # after the end nothing; else the run goes on for a retry
    return {"run_id": run.id, "text": result.text, "attached": attached}


def _open_run(job_key: str, prompt: str) -> tuple[mantyx_sync.Run, bool]:
    """The job's run: attached to when it has one, else started (at most once)."""
    run_key = _key(job_key, "run")
    run_id = store.get(run_key)
    if run_id == STARTING:
        # An earlier attempt may have made the run before recording its id (its
        # worker died, its create's answer was lost): look before creating.
        run_id = _made_earlier(job_key)
    if run_id:
        return _attach(job_key, run_id), True
    store.set(run_key, STARTING, ex=KEEP_S)
    spec = agent.spec.replace(metadata={**(agent.spec.metadata or {}), "job": job_key})
    try:
        run = client.runs.start(spec, prompt, on_tool=_log_tool)
    except (mantyx_sync.APIConnectionError, mantyx_sync.ServerError) as exc:
        if isinstance(exc, mantyx_sync.ConnectError):
            raise  # nothing reached the server
        # The server may have made the run: never create again before the lookup
        # says it did not (a failed lookup raises, the run key stays STARTING).
        run_id = _made_earlier(job_key)
        if run_id is None:
            raise
        log.warning("job %s: its run was made though creating it failed (%s)", job_key, exc)
        return _attach(job_key, run_id), True
    try:
        store.set(run_key, run.id, ex=KEEP_S)  # before any event is read
        if store.exists(_key(job_key, "answer")):
            run.cancel()  # cancel_job came first
    except BaseException:
        # Dropped, the handle would cancel the run: hand it over to the next
        # attempt instead, which finds it by the job key on its metadata.
        run.close(cancel=False)
        raise
    return run, False


def _made_earlier(job_key: str) -> str | None:
    """The id of the run an earlier attempt made for the job, if the server has one."""
    found = list(client.runs.list(metadata={"job": job_key}, max_items=1))
    return found[0].id if found else None


def _attach(job_key: str, run_id: str) -> mantyx_sync.Run:
    log.info("job %s: attaching to run %s", job_key, run_id)
    store.set(_key(job_key, "run"), run_id, ex=KEEP_S)
    return client.runs.attach(run_id, tools=[sales_total], on_tool=_log_tool)


def cancel_job(job_key: str) -> None:
    """Cancel a job: its run on MANTYX (the task then returns the cancelled
    outcome), or, before it has one, every delivery of it from now on."""
    cancelled = {"error": "cancelled before its run started", "code": "cancelled"}
    _close_job(job_key, cancelled, only_if_open=True)
    run_id = store.get(_key(job_key, "run"))
    if run_id and run_id != STARTING:
        client.runs.cancel(run_id)


def submit(prompt: str, job_key: str | None = None) -> AsyncResult:
    """Queue a job (its key is the task id); one the broker loses is queued again."""
    key = job_key or uuid.uuid4().hex
    store.set(_key(key, "prompt"), prompt, ex=KEEP_S)
    store.zadd(JOBS, {key: time.time()})
    return run_agent.apply_async((prompt,), {"job_key": key}, task_id=key)


def sweep(now: float | None = None, db: redis.Redis = store) -> list[str]:
    """Queue again the submitted jobs the broker lost; return their keys.

    Kombu's Redis transport takes a message off the queue before it records
    it as unacknowledged: a worker killed between the two loses it. A job is
    lost when nothing was heard of it for longer than the visibility timeout
    and it is neither answered, followed, queued nor unacknowledged.
    """
    now = time.time() if now is None else now
    stale = db.zrangebyscore(JOBS, 0, now - VISIBILITY_TIMEOUT_S - 2 * RESTORE_S)
    done = [k for k in stale if db.exists(_key(k, "answer")) or not db.exists(_key(k, "prompt"))]
    if done:
        db.zrem(JOBS, *done)
    lost = {k for k in stale if k not in done and not db.exists(_key(k, "lease"))}
    if lost:  # the broker's own lists: the queue, and what workers hold
        lost -= _held_by_broker(db)
    requeued = []
    for key in sorted(lost):
        prompt = db.get(_key(key, "prompt"))
        if prompt is None:
            continue  # answered meanwhile
        log.warning("job %s: lost by the broker; queued again", key)
        db.zadd(JOBS, {key: now})
        run_agent.apply_async((prompt,), {"job_key": key}, task_id=key)
        requeued.append(key)
    return requeued


def _held_by_broker(db: redis.Redis) -> set[str]:
    """The task ids of the messages queued or unacknowledged; entries that are not
    Celery messages (another producer's, a damaged one) are skipped and logged."""
    entries = [("celery", m, False) for m in db.lrange("celery", 0, -1)]
    entries += [("unacked", m, True) for m in db.hvals("unacked")]
    held = set()
    for where, raw, wrapped in entries:
        try:
            message = json.loads(raw)
            held.add(str((message[0] if wrapped else message)["headers"]["id"]))
        except (ValueError, LookupError, TypeError) as exc:
            # Its text is not logged: it may hold a prompt.
            log.warning("skipped an entry of %r that is not a Celery message (%r)", where, exc)
    return held


@worker_ready.connect
def _start_sweeping(**_: Any) -> None:
    threading.Thread(target=_sweep_forever, name="mantyx job sweep", daemon=True).start()


def _sweep_forever() -> None:
    # A client of its own: the pool processes forked from this one inherit `store` unused.
    db = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    every = max(1.0, VISIBILITY_TIMEOUT_S / 2)
    while True:
        time.sleep(every)
        try:  # every worker looks; a lock makes it one sweep per period in the fleet
            if db.set("mantyx:sweep", "1", nx=True, px=int(every * 1000)):
                sweep(db=db)
        except redis.RedisError as exc:
            log.warning("could not look for lost jobs: %s", exc)
        except Exception:  # whatever one sweep meets, the next one still runs
            log.exception("looking for lost jobs failed")


@app.task(
    name="mantyx.run_agent",  # the same name when this file is run as a script
    bind=True,
    # Safe to retry: a run that may exist is looked up before any other is made.
    autoretry_for=(
        mantyx_sync.APIConnectionError,
        mantyx_sync.ServerError,
        redis.ConnectionError,
        redis.TimeoutError,
    ),
    retry_backoff=True,
    max_retries=5,
)
def run_agent(self: Any, prompt: str, job_key: str | None = None) -> dict[str, Any]:
    """Run the agent on ``prompt`` once per job (default: once per task id).

    Queue it with :func:`submit`: ``run_agent.delay()`` works too, but a message
    the broker then loses stays lost."""
    return run_job(job_key or self.request.id, prompt, owner=self.request.hostname or "worker")


def main(argv: list[str]) -> int:
    prompts = argv or ["How much did the north region sell in the last 14 days?"]
    pending = [(prompt, submit(prompt)) for prompt in prompts]
    failed = 0
    for prompt, result in pending:
        outcome = result.get(timeout=3600)
        failed += "error" in outcome
        print(f"{prompt}\n  [{outcome['worker']}] {outcome.get('text') or outcome['error']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
