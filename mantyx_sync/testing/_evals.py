"""Evaluations (EVALS.md): stored datasets, eval runs whose cases are real emulated runs.

Each case of an evaluation becomes an ordinary emulated agent run (the
emulator's model decides what it says and which tools it calls), so a case
that calls a ``local`` tool waits for the client's answer on
``/agent-runs/{agentRunId}/tool-results`` like any run. The evaluation's
stream relays those runs' ``local_tool_call`` / ``local_tool_result_in``
events with their ``agentRunId``, around ``case_started`` / ``case_completed``
progress events, and ends with ``run_completed``, ``run_error`` or
``run_cancelled``. Frames are flat ``{type, ...}`` objects without ``seq``;
every connection replays the whole log (a client must drop what it saw).

Emulator conventions where EVALS.md says nothing: ``toolMocks`` (dataset or
case) is ``{tool name: canned result}``, answered server-side instead of by
the client unless named in ``overrides.disabledMocks``; scorers
``{"type": "contains"|"equals", "value": str}`` check the final text and
``{"type": "tool_called", "name": str}`` the calls made; other scorer types
are ignored. A case passes when its run succeeded and every scorer passed.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ._runs import EmulatedRun
from ._sse import drop_connection
from ._validation import InvalidRequest

__all__ = ["EmulatedEval", "EvalStore"]

log = logging.getLogger(__name__)


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _score(case: Mapping[str, Any], run: EmulatedRun) -> tuple[bool, float, list[dict[str, Any]]]:
    text = run.final_text or ""
    called = {
        e["data"].get("name") for e in run.events if e["type"] in ("local_tool_call", "tool_call")
    }
    scores = []
    for scorer in case.get("scorers") or ():
        kind, value = scorer.get("type"), scorer.get("value")
        if kind == "contains":
            ok = isinstance(value, str) and value in text
        elif kind == "equals":
            ok = text == value
        elif kind == "tool_called":
            ok = scorer.get("name") in called
        else:
            continue
        scores.append({"scorer": kind, "passed": ok, "score": 1.0 if ok else 0.0})
    succeeded = run.status == "succeeded"
    score = sum(s["score"] for s in scores) / len(scores) if scores else float(succeeded)
    return succeeded and all(s["passed"] for s in scores), score, scores


class EmulatedEval:
    """One evaluation: its cases run one after another in a worker thread.

    Public attributes (read them): :attr:`id`, :attr:`status`, :attr:`events`
    (flat dicts as streamed), :attr:`case_runs` (agent run ids in case order),
    :attr:`results`. Thread-safety: changes happen under :attr:`cond`.
    """

    def __init__(
        self,
        *,
        eval_id: str,
        body: dict[str, Any],
        dataset: dict[str, Any],
        create_run: Callable[[dict[str, Any]], EmulatedRun],
    ) -> None:
        self.id = eval_id
        self.body = body
        self.dataset = dataset
        self.status = "running"
        self.events: list[dict[str, Any]] = []
        self.frames: list[bytes] = []
        self.case_runs: list[str] = []
        self.results: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.done = False
        self.closed = False
        self.created_at = time.time()
        self.finished_at: float | None = None
        self._create_run = create_run
        self._current: EmulatedRun | None = None
        self.stream_connections = 0
        # Stream faults (EvalStore.inject_stream_fault): drop the first connection
        # after this many frames; later connections get only the live tail.
        self.drop_after: int | None = None
        self.live_tail_on_reconnect = False
        self._thread = threading.Thread(
            target=self._work, name=f"mantyx-eval-{eval_id}", daemon=True
        )

    def start(self) -> None:
        """Run the cases in the worker thread."""
        self._thread.start()

    def _emit(self, kind: str, data: Mapping[str, Any]) -> None:
        with self.cond:
            event = {"type": kind, **data}
            self.events.append(event)
            text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
            self.frames.append(f"event: {kind}\ndata: {text}\n\n".encode())
            self.cond.notify_all()

    def _finish(self, status: str, kind: str, **data: Any) -> None:
        with self.cond:
            if self.done:
                return
            self.status = status
            self.finished_at = time.time()
            self._emit(kind, {"runId": self.id, **data})
            self.done = True
            self.cond.notify_all()

    def cancel(self) -> bool:
        """Cancel (``False`` when already over): the running case run is cancelled too."""
        with self.cond:
            if self.done:
                return False
            run = self._current
        if run is not None:
            run.cancel()
        self._finish("cancelled", "run_cancelled")
        return True

    def close(self) -> None:
        """The server is stopping."""
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def _case_body(self, case: Mapping[str, Any]) -> dict[str, Any]:
        body = dict(self.body.get("agent") or {})
        if "agentId" in self.body:
            body["agentId"] = self.body["agentId"]
            if self.body.get("tools"):
                body["tools"] = self.body["tools"]
        overrides = self.body.get("overrides") or {}
        if "systemPrompt" in overrides:
            body["systemPrompt"] = overrides["systemPrompt"]
        if "systemPromptAppend" in overrides:
            body["systemPrompt"] = (
                f"{body.get('systemPrompt', '')}\n{overrides['systemPromptAppend']}"
            )
        if self.body.get("modelId"):
            body["modelId"] = self.body["modelId"]
        if overrides.get("disableTools"):
            body.pop("tools", None)
        mocks = {**(self.dataset.get("toolMocks") or {}), **(case.get("toolMocks") or {})}
        for name in overrides.get("disabledMocks") or ():
            mocks.pop(name, None)
        if mocks:
            body["toolMocks"] = mocks
        body.update(case.get("input") or {})
        body["metadata"] = {**(body.get("metadata") or {}), "evalRunId": self.id}
        return body

    def _work(self) -> None:
        try:
            self._play()
        except Exception as exc:
            log.exception("evaluation %s: the emulator failed", self.id)
            self._finish("failed", "run_error", error=f"emulator error: {exc}")

    def _play(self) -> None:
        cases = list(self.dataset.get("cases") or ())
        for index, case in enumerate(cases):
            case_id = case.get("id") or f"case_{index + 1}"
            with self.cond:
                if self.done or self.closed:
                    return
            try:
                run = self._create_run(self._case_body(case))
            except Exception as exc:
                self._finish("failed", "run_error", error=f"case {case_id}: {exc}")
                return
            with self.cond:
                self._current = run
                self.case_runs.append(run.id)
            self._emit(
                "case_started",
                {"caseId": case_id, "caseName": case.get("name"), "agentRunId": run.id},
            )
            if not self._relay(run):
                return
            passed, score, scores = _score(case, run)
            result = {
                "id": f"res_{secrets.token_hex(4)}",
                "caseId": case_id,
                "case": {"id": case_id, **case},
                "agentRunId": run.id,
                "finalText": run.final_text,
                "toolCalls": [e["data"] for e in run.events if e["type"] == "local_tool_call"],
                "scores": scores,
                "passed": passed,
                "score": score,
                "tokens": run.tokens,
                "error": run.error,
                "createdAt": _iso(time.time()),
            }
            with self.cond:
                self.results.append(result)
            self._emit(
                "case_completed",
                {
                    "caseId": case_id,
                    "agentRunId": run.id,
                    "passed": passed,
                    "score": score,
                    "finalText": run.final_text,
                },
            )
        summary = self.summary()
        self._finish(
            "succeeded",
            "run_completed",
            passedCases=summary["passedCases"],
            totalCases=summary["totalCases"],
            score=summary["score"],
        )

    def _relay(self, run: EmulatedRun) -> bool:
        """Forward the case run's tool events until it ends; ``False`` if the eval stopped."""
        index = 0
        while True:
            with run.cond:
                while len(run.events) <= index and not run.done and not run.closed:
                    run.cond.wait(0.2)
                    with self.cond:
                        if self.done or self.closed:
                            return False
                batch = run.events[index:]
                index += len(batch)
                ended = run.done or run.closed
            for event in batch:
                if event["type"] in ("local_tool_call", "local_tool_result_in"):
                    self._emit(event["type"], {**event["data"], "agentRunId": run.id})
            if ended and index >= len(run.events):
                with self.cond:
                    return not (self.done or self.closed)

    def summary(self) -> dict[str, Any]:
        """The list item of ``GET /eval-runs``."""
        with self.cond:
            results = list(self.results)
            status = self.status
        passed = sum(1 for r in results if r["passed"])
        return {
            "id": self.id,
            "datasetId": self.dataset.get("id"),
            "datasetName": self.dataset.get("name"),
            "agentId": self.body.get("agentId"),
            "inlineAgent": "agent" in self.body,
            "status": status,
            "totalCases": len(self.dataset.get("cases") or ()),
            "completedCases": len(results),
            "passedCases": passed,
            "score": sum(r["score"] for r in results) / len(results) if results else None,
            "agentOverrides": self.body.get("overrides"),
            "startedAt": _iso(self.created_at),
            "finishedAt": _iso(self.finished_at),
            "createdAt": _iso(self.created_at),
        }

    def detail(self) -> dict[str, Any]:
        """The ``GET /eval-runs/{id}`` body."""
        with self.cond:
            results = [dict(r) for r in self.results]
        return {
            **self.summary(),
            "inlineAgentSpec": self.body.get("agent"),
            "updatedAt": _iso(time.time()),
            "results": results,
        }

    def stream(self, stop: threading.Event, sock: Any = None) -> Iterator[bytes]:
        """The whole log, then the live tail; ends after the terminal event.

        With :attr:`drop_after` set, the first connection is cut after that many
        frames (once the next one exists); with :attr:`live_tail_on_reconnect`,
        later connections start at the end of the log (what a server without
        resume may do).
        """
        with self.cond:
            self.stream_connections += 1
            first = self.stream_connections == 1
            index = len(self.frames) if not first and self.live_tail_on_reconnect else 0
        drop_after = self.drop_after if first else None
        sent = 0
        yield b""
        while True:
            with self.cond:
                while len(self.frames) <= index:
                    if self.done or self.closed or stop.is_set():
                        return
                    self.cond.wait(0.5)
                batch = self.frames[index:]
            if drop_after is not None:
                batch = batch[: drop_after - sent]
            index += len(batch)
            sent += len(batch)
            yield b"".join(batch)
            if drop_after is not None and sent >= drop_after:
                # Cut only once the next frame exists, so a client cannot reconnect
                # in time to see it live: it is missed for certain.
                with self.cond:
                    while len(self.frames) <= index and not (self.done or self.closed):
                        self.cond.wait(0.5)
                log.debug(
                    "fault: dropping the stream of evaluation %s after %d frames", self.id, sent
                )
                drop_connection(sock)
                return


def _check_case(case: Any, where: str) -> dict[str, Any]:
    if not isinstance(case, Mapping) or not isinstance(case.get("input"), Mapping):
        raise InvalidRequest(f"{where}: each case needs an 'input' object")
    if not ("prompt" in case["input"] or "messages" in case["input"]):
        raise InvalidRequest(f"{where}.input: needs 'prompt' or 'messages'")
    return dict(case)


class EvalStore:
    """Datasets and evaluations. Thread-safe."""

    def __init__(self, create_run: Callable[[dict[str, Any]], EmulatedRun]) -> None:
        self._create_run = create_run
        self._lock = threading.Lock()
        self.datasets: dict[str, dict[str, Any]] = {}
        self.evals: dict[str, EmulatedEval] = {}
        self._stream_fault: tuple[int, bool] | None = None

    def inject_stream_fault(self, drop_after: int, *, live_tail_on_reconnect: bool) -> None:
        """Apply a stream fault to the next evaluation started."""
        with self._lock:
            self._stream_fault = (drop_after, live_tail_on_reconnect)

    def add_dataset(
        self,
        name: str,
        cases: list[dict[str, Any]],
        *,
        description: str | None = None,
        tool_mocks: dict[str, Any] | None = None,
    ) -> str:
        """Store a dataset; returns its id."""
        now = _iso(time.time())
        dataset_id = f"ds_{secrets.token_hex(5)}"
        stored = []
        for index, case in enumerate(cases):
            checked = _check_case(case, f"cases[{index}]")
            checked.setdefault("id", f"case_{secrets.token_hex(4)}")
            checked.setdefault("scorers", [])
            checked.setdefault("tags", [])
            checked.setdefault("createdAt", now)
            checked.setdefault("updatedAt", now)
            stored.append(checked)
        with self._lock:
            self.datasets[dataset_id] = {
                "id": dataset_id,
                "name": name,
                "description": description,
                "toolMocks": tool_mocks,
                "cases": stored,
                "createdAt": now,
                "updatedAt": now,
            }
        return dataset_id

    def datasets_body(self) -> dict[str, Any]:
        """``GET /eval-datasets``."""
        with self._lock:
            datasets = list(self.datasets.values())
            runs = list(self.evals.values())
        return {
            "datasets": [
                {
                    "id": d["id"],
                    "name": d["name"],
                    "description": d["description"],
                    "caseCount": len(d["cases"]),
                    "runCount": sum(1 for r in runs if r.dataset.get("id") == d["id"]),
                    "createdAt": d["createdAt"],
                    "updatedAt": d["updatedAt"],
                }
                for d in datasets
            ]
        }

    def dataset(self, dataset_id: str) -> dict[str, Any] | None:
        """A stored dataset (a copy), or ``None``."""
        with self._lock:
            found = self.datasets.get(dataset_id)
            return json.loads(json.dumps(found)) if found is not None else None

    def start(self, body: Any) -> EmulatedEval:
        """``POST /eval-runs``: check the body, create the evaluation and start it.

        :raises InvalidRequest: not exactly one dataset source and one agent source, etc.
        :raises LookupError: the stored dataset does not exist.
        """
        if not isinstance(body, dict):
            raise InvalidRequest("the body must be a JSON object")
        if ("datasetId" in body) == ("dataset" in body):
            raise InvalidRequest("give exactly one of datasetId and dataset")
        if ("agentId" in body) == ("agent" in body):
            raise InvalidRequest("give exactly one of agentId and agent")
        if "agent" in body and not isinstance(body["agent"], dict):
            raise InvalidRequest("agent must be an agent spec object")
        if "datasetId" in body:
            dataset = self.dataset(str(body["datasetId"]))
            if dataset is None:
                raise LookupError(f"dataset {body['datasetId']} not found")
        else:
            inline = body["dataset"]
            cases = inline.get("cases") if isinstance(inline, dict) else None
            if not isinstance(cases, list) or not cases:
                raise InvalidRequest("dataset.cases must be a non-empty list")
            dataset = {
                "id": None,
                "name": inline.get("name") or "inline",
                "toolMocks": inline.get("toolMocks"),
                "cases": [
                    {"id": f"case_{i + 1}", **_check_case(c, f"dataset.cases[{i}]")}
                    for i, c in enumerate(cases)
                ],
            }
        overrides = body.get("overrides")
        if overrides is not None and not isinstance(overrides, dict):
            raise InvalidRequest("overrides must be an object")
        evaluation = EmulatedEval(
            eval_id=f"evr_{secrets.token_hex(5)}",
            body=body,
            dataset=dataset,
            create_run=self._create_run,
        )
        with self._lock:
            self.evals[evaluation.id] = evaluation
            if self._stream_fault is not None:
                evaluation.drop_after, evaluation.live_tail_on_reconnect = self._stream_fault
                self._stream_fault = None
        evaluation.start()
        return evaluation

    def get(self, eval_id: str) -> EmulatedEval | None:
        """An evaluation by id, or ``None``."""
        with self._lock:
            return self.evals.get(eval_id)

    def list_body(self, query: Mapping[str, str]) -> dict[str, Any]:
        """``GET /eval-runs``: newest first, filtered, ``limit``/``offset`` paged."""
        try:
            limit = int(query.get("limit") or 50)
            offset = int(query.get("offset") or 0)
        except ValueError:
            raise InvalidRequest("limit and offset must be integers") from None
        with self._lock:
            runs = list(reversed(self.evals.values()))
        summaries = [r.summary() for r in runs]
        for key in ("datasetId", "agentId", "status"):
            if query.get(key):
                summaries = [s for s in summaries if s.get(key) == query[key]]
        return {"runs": summaries[offset : offset + limit], "limit": limit, "offset": offset}

    def compare_body(self, a: EmulatedEval, b: EmulatedEval) -> dict[str, Any]:
        """``GET /eval-runs/compare``: the two runs' results case by case."""
        detail_a, detail_b = a.detail(), b.detail()
        by_a = {r["caseId"]: r for r in detail_a["results"]}
        by_b = {r["caseId"]: r for r in detail_b["results"]}
        cases = []
        for case in a.dataset.get("cases") or ():
            case_id = case.get("id")
            cases.append(
                {
                    "caseId": case_id,
                    "caseName": case.get("name"),
                    "caseInput": case.get("input"),
                    "a": by_a.get(case_id),
                    "b": by_b.get(case_id),
                }
            )
        return {
            "datasetId": a.dataset.get("id"),
            "datasetName": a.dataset.get("name"),
            "runA": a.summary(),
            "runB": b.summary(),
            "cases": cases,
        }

    def snapshot(self) -> dict[str, EmulatedEval]:
        """Every evaluation by id (a copy of the mapping)."""
        with self._lock:
            return dict(self.evals)

    def close(self) -> None:
        """The server is stopping: end every evaluation's worker and stream."""
        with self._lock:
            evals = list(self.evals.values())
        for evaluation in evals:
            evaluation.close()
