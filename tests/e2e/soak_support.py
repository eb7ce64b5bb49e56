"""The chaos soak's machinery (test helper): seeded plans, the model, the handler,
the faults, one driven run, and the checks on what the server holds.

Every random choice comes from one seed, so a failing soak can be replayed
with ``MANTYX_SOAK_SEED=<seed>``. Thread scheduling still varies between
runs of the same seed, but the plans and faults do not.
"""

from __future__ import annotations

import collections
import os
import random
import threading
import time
from typing import Any

import attrs

import mantyx_sync
from mantyx_sync.testing import Faults, LocalMantyx, ToolCall, Turn

__all__ = ["Outcome", "Plan", "Soak", "seed_from_env"]

# A run must end within this many seconds, whatever faults hit it. The worst
# case adds up a stall (idle timeout 0.75 s, then a resume), two dropped
# connections with backoff, tool-result retries (503 x2, 429), a 2.5 s handler
# sleep, and a 2 s busy machine; 30 s leaves room without hiding a hang.
RUN_BOUND = 30.0
BIG = 300_000

MODES = ("ok", "ok", "sleep", "sleep", "raise", "big", "exit", "interrupt")


def _bucket(status: int) -> int:
    """500 for any 5xx, the status itself otherwise (0: the answer was lost)."""
    return 500 if status >= 500 else status


def seed_from_env() -> int:
    """``MANTYX_SOAK_SEED`` when set (to replay a failure), else a fresh random seed."""
    given = os.environ.get("MANTYX_SOAK_SEED")
    return int(given) if given else random.SystemRandom().randrange(2**32)


@attrs.frozen
class Plan:
    """What one run does: its prompt (the key), tool turns, and whether it is cancelled."""

    prompt: str
    turns: tuple[tuple[tuple[str, str, float], ...], ...]  # (token, mode, seconds)
    cancel: bool

    def expected_text(self) -> str:
        return digest(
            {token: _expected_answer(token, mode) for turn in self.turns for token, mode, _ in turn}
        )


def _expected_answer(token: str, mode: str) -> tuple[str, str]:
    if mode == "ok":
        return ("result", f"ok:{token}")
    if mode == "sleep":
        return ("result", f"slept:{token}")
    if mode == "big":
        return ("result", "x" * BIG)
    if mode == "raise":
        return ("error", f"ValueError: boom {token}")
    if mode == "exit":
        return ("error", "SystemExit: 3")
    return ("error", "KeyboardInterrupt")


def digest(answers: dict[str, tuple[str, str]]) -> str:
    """The final text the model writes: each token's answer, sorted, big ones by length."""
    parts = []
    for token in sorted(answers):
        kind, text = answers[token]
        parts.append(f"{token}={kind[0]}:{text if len(text) < 100 else len(text)}")
    return "|".join(parts) or "no tools"


@attrs.frozen
class Outcome:
    """What the client saw for one plan."""

    prompt: str
    kind: str  # "ok", "cancelled", "create_refused", "create_lost", or "unexpected"
    detail: str
    seconds: float
    run_id: str | None


class Soak:
    """Plans, faults, the model and the tool for one soak, all from ``seed``."""

    def __init__(self, seed: int, runs: int) -> None:
        self.seed = seed
        rng = random.Random(seed)
        self.plans = [self._plan(rng, i) for i in range(runs)]
        self.by_prompt = {plan.prompt: plan for plan in self.plans}
        self.faults = [self._faults(rng) for _ in range(runs)]
        self.request_faults = self._request_faults(rng, runs)
        self.executions: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        tool = mantyx_sync.local_tool(self.work)
        self.tool = tool

    # -- the plans and faults ---------------------------------------------------
    @staticmethod
    def _plan(rng: random.Random, i: int) -> Plan:
        turns = []
        for t in range(rng.choice((0, 1, 1, 1, 2))):
            calls = []
            for j in range(rng.randint(1, 3)):
                mode = rng.choice(MODES)
                seconds = round(rng.uniform(0.02, 0.3), 3) if mode == "sleep" else 0.0
                calls.append((f"r{i}t{t}c{j}", mode, seconds))
            turns.append(tuple(calls))
        cancel = bool(turns) and rng.random() < 0.08
        if cancel:  # the first call sleeps long enough to be cancelled under
            token, _, _ = turns[0][0]
            turns[0] = ((token, "sleep", 2.5), *turns[0][1:])
        return Plan(prompt=f"soak run {i}", turns=tuple(turns), cancel=cancel)

    @staticmethod
    def _faults(rng: random.Random) -> Faults:
        def maybe(p: float) -> bool:
            return rng.random() < p

        return Faults(
            drop_after=rng.randint(1, 8) if maybe(0.3) else None,
            drop_times=rng.randint(1, 2),
            stall_after=rng.randint(1, 6) if maybe(0.12) else None,
            stall_seconds=2.5,
            replay_overlap=rng.randint(1, 4) if maybe(0.3) else 0,
            duplicate_tool_calls=maybe(0.3),
            tool_result_errors=rng.randint(1, 2) if maybe(0.2) else 0,
            tool_result_error_status=rng.choice((500, 502, 503)),
            tool_result_rate_limited=1 if maybe(0.15) else 0,
            retry_after=0.0,
            tool_result_accept_then_drop=rng.randint(1, 2) if maybe(0.2) else 0,
            stream_open_errors=1 if maybe(0.1) else 0,
            stream_open_status=rng.choice((500, 503)),
        )

    @staticmethod
    def _request_faults(rng: random.Random, runs: int) -> list[dict[str, Any]]:
        """``fail_next`` rules: on run creation and on tool results, across all runs."""
        rules: list[dict[str, Any]] = []
        create = r"/agent-runs$"
        results = r"/tool-results$"
        for _ in range(runs // 25):
            rules.append({"method": "POST", "path_regex": create, "status": 503})
            rules.append(
                {
                    "method": "POST",
                    "path_regex": create,
                    "status": 429,
                    "headers": {"Retry-After": "0"},
                }
            )
        for _ in range(runs // 50):
            rules.append({"method": "POST", "path_regex": create, "status": 500})
            rules.append({"method": "POST", "path_regex": create, "drop": True, "applied": True})
        for _ in range(runs // 10):
            rules.append(
                {"method": "POST", "path_regex": results, "status": rng.choice((500, 503, 429))}
            )
            rules.append({"method": "POST", "path_regex": results, "drop": True})
            rules.append({"method": "POST", "path_regex": results, "drop": True, "applied": True})
        rng.shuffle(rules)
        return rules

    def arm(self, server: LocalMantyx) -> None:
        """Queue every fault plan and request fault on ``server`` (before any run)."""
        server.set_model(self.model)
        for faults in self.faults:
            server.inject(faults)
        for rule in self.request_faults:
            server.fail_next(**rule)

    # -- the model and the tool ---------------------------------------------------
    def model(self, ctx: Any) -> Turn:
        plan = self.by_prompt[ctx.prompt]
        if ctx.turn < len(plan.turns):
            return Turn(
                tool_calls=[
                    ToolCall("work", {"token": token, "mode": mode, "seconds": seconds})
                    for token, mode, seconds in plan.turns[ctx.turn]
                ]
            )
        tokens = {call["toolUseId"]: call["args"]["token"] for call in ctx.tool_calls}
        answers = {}
        for result in ctx.tool_results:
            kind = "error" if "error" in result else "result"
            answers[tokens[result["toolUseId"]]] = (kind, str(result[kind]))
        return Turn(digest(answers))

    def work(self, token: str, mode: str, seconds: float = 0.0) -> str:
        """Do what the plan says: answer, sleep, raise, or return a large value."""
        with self._lock:
            self.executions[token] += 1
        if mode == "sleep":
            threading.Event().wait(seconds)  # simulated work, not synchronisation
            return f"slept:{token}"
        if mode == "big":
            return "x" * BIG
        if mode == "raise":
            raise ValueError(f"boom {token}")
        if mode == "exit":
            raise SystemExit(3)
        if mode == "interrupt":
            raise KeyboardInterrupt
        return f"ok:{token}"

    # -- one run ------------------------------------------------------------------
    def drive(self, client: mantyx_sync.Client, plan: Plan) -> Outcome:
        agent = mantyx_sync.Agent(client, system_prompt="soak", tools=[self.tool])
        started = time.monotonic()

        def outcome(kind: str, detail: str, run_id: str | None) -> Outcome:
            return Outcome(plan.prompt, kind, detail, time.monotonic() - started, run_id)

        try:
            run = agent.start(plan.prompt)
        except (mantyx_sync.ServerError, mantyx_sync.RateLimitError) as exc:
            # The fault list is shared by every thread, so one run's attempts can
            # all draw refusals; whichever comes last (5xx or 429) is raised.
            return outcome("create_refused", repr(exc), None)
        except mantyx_sync.APIConnectionError as exc:
            return outcome("create_lost", repr(exc), None)
        except Exception as exc:
            return outcome("unexpected", f"create: {exc!r}", None)
        try:
            with run:
                cancelled = False
                for event in run:
                    if plan.cancel and not cancelled and event.type == "local_tool_call":
                        client.runs.cancel(run.id)
                        cancelled = True
            assert run.result is not None
            if run.result.text != plan.expected_text():
                return outcome("unexpected", f"text {run.result.text[:300]!r}", run.id)
            return outcome("ok", "", run.id)
        except mantyx_sync.RunCancelledError as exc:
            return outcome("cancelled" if plan.cancel else "unexpected", repr(exc), run.id)
        except Exception as exc:
            return outcome("unexpected", repr(exc), run.id)

    # -- the checks -----------------------------------------------------------------
    @staticmethod
    def unexercised(server: LocalMantyx, outcomes: list[Outcome]) -> list[str]:
        """The faults the soak claims to inject that no run met (empty when all were met).

        Status 0 is an answer lost after the request arrived (``drop``); 409 is a
        tool result for a run already cancelled.
        """
        seen: set[tuple[str, int]] = set()
        resumed = False
        for request in server.requests:
            for kind, suffix in (("create", "/agent-runs"), ("results", "/tool-results")):
                if request.method == "POST" and request.path.endswith(suffix):
                    seen.add((kind, _bucket(request.status)))
            if request.path.endswith("/stream"):
                seen.add(("stream", _bucket(request.status)))
                # A stream opened again after events arrived: a drop or stall resumed.
                resumed = resumed or bool(
                    request.headers.get("Last-Event-ID") or request.query.get("lastSeq")
                )
        wanted = {
            ("create", 500): "5xx on create",
            ("create", 429): "429 on create",
            ("create", 0): "create answer lost",
            ("results", 500): "5xx on tool results",
            ("results", 429): "429 on tool results",
            ("results", 0): "tool-result answer lost",
            ("results", 409): "409 on tool results",
            ("stream", 500): "5xx opening a stream",
        }
        missing = [f"never met: {what}" for key, what in wanted.items() if key not in seen]
        runs = list(server.runs.values())
        if not resumed:
            missing.append("never met: a dropped or stalled stream resumed")
        duplicated = any(
            len(calls) != len(set(calls))
            for calls in (
                [e["data"]["toolUseId"] for e in run.events if e["type"] == "local_tool_call"]
                for run in runs
            )
        )
        if not duplicated:
            missing.append("never met: a duplicated local_tool_call")
        if not any(o.kind == "cancelled" for o in outcomes):
            missing.append("never met: a cancelled run")
        return missing

    def problems(self, server: LocalMantyx, outcomes: list[Outcome]) -> list[str]:
        """Every broken promise, as readable lines (empty when all held)."""
        found: list[str] = []
        runs_by_prompt: dict[str, list[Any]] = collections.defaultdict(list)
        for emulated in server.runs.values():
            runs_by_prompt[str(emulated.spec.get("prompt"))].append(emulated)
        accepted_posts: collections.Counter[str] = collections.Counter()
        for request in server.requests:
            if request.path.endswith("/tool-results") and 200 <= request.status < 300:
                accepted_posts[str((request.json or {}).get("toolUseId"))] += 1
        if len(outcomes) != len(self.plans):
            found.append(f"{len(outcomes)} outcomes for {len(self.plans)} plans")
        for out in outcomes:
            plan = self.by_prompt[out.prompt]
            server_runs = runs_by_prompt.get(out.prompt, [])
            tokens = [token for turn in plan.turns for token, _, _ in turn]
            if out.seconds > RUN_BOUND:
                found.append(f"{out.prompt}: took {out.seconds:.1f}s (bound {RUN_BOUND}s)")
            if out.kind == "unexpected":
                found.append(f"{out.prompt}: unexpected outcome {out.detail}")
                continue
            if out.kind == "create_refused":
                if server_runs:
                    found.append(f"{out.prompt}: create refused, yet the server has a run")
                continue
            if out.kind == "create_lost":
                if len(server_runs) > 1:
                    found.append(f"{out.prompt}: create retried after a lost answer")
                continue
            if len(server_runs) != 1:
                found.append(f"{out.prompt}: {len(server_runs)} server runs")
                continue
            emulated = server_runs[0]
            calls = {
                e["data"]["toolUseId"] for e in emulated.events if e["type"] == "local_tool_call"
            }
            for tool_use_id in calls:
                if accepted_posts[tool_use_id] > 1:
                    found.append(f"{out.prompt}: {tool_use_id} accepted twice")
                if out.kind == "ok" and tool_use_id not in emulated.tool_results:
                    found.append(f"{out.prompt}: {tool_use_id} never answered")
            for token in tokens:
                ran = self.executions[token]
                if ran > 1 or (out.kind == "ok" and ran != 1):
                    found.append(f"{out.prompt}: handler for {token} ran {ran} times")
        return found
