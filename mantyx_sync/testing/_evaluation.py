"""One emulated evaluation: its cases played as real emulated runs, scored, and streamed.

A case is an ordinary emulated run, so its ``local`` tool calls wait for the
client's answer like any run's. The evaluation's stream relays those calls and
answers (with their ``agentRunId``) between ``case_started`` and
``case_completed``, and ends with ``run_completed``, ``run_error`` or
``run_cancelled``: flat ``{type, ...}`` frames without ``seq``, the whole log
replayed on every connection (a client drops what it saw).

Scorers, an emulator convention: ``contains``/``equals`` (``value``) check the
final text, ``tool_called`` (``name``) the calls made; others are ignored. A
case passes when its run succeeded and every scorer passed.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ._sse import drop_connection
from .clock import iso_seconds
from .runs import EmulatedRun

__all__ = ["EmulatedEval"]

log = logging.getLogger(__name__)


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
        self.status: str = "running"
        self.events: list[dict[str, Any]] = []
        self.frames: list[bytes] = []
        self.case_runs: list[str] = []
        self.results: list[dict[str, Any]] = []
        self.cond: threading.Condition = threading.Condition()
        self.done: bool = False
        self.closed: bool = False
        self.created_at: float = time.time()
        self.finished_at: float | None = None
        self._create_run = create_run
        self._current: EmulatedRun | None = None
        self.stream_connections: int = 0
        # Stream faults (EvalStore.inject_stream_fault): drop the first connection
        # after this many frames; later connections get only the live tail.
        self.drop_after: int | None = None
        self.live_tail_on_reconnect = False
        self._thread = threading.Thread(
            target=self._work, name=f"mantyx-eval-{eval_id}", daemon=True
        )

    def start(self) -> None:
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
            self.done = True  # before the lock is let go, so whoever _emit woke sees it

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
                "createdAt": iso_seconds(time.time()),
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
            "startedAt": iso_seconds(self.created_at),
            "finishedAt": iso_seconds(self.finished_at),
            "createdAt": iso_seconds(self.created_at),
        }

    def detail(self) -> dict[str, Any]:
        """The ``GET /eval-runs/{id}`` body."""
        with self.cond:
            results = [dict(r) for r in self.results]
        return {
            **self.summary(),
            "inlineAgentSpec": self.body.get("agent"),
            "updatedAt": iso_seconds(time.time()),
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
