"""Evaluations: stored datasets and the bodies of the ``/eval-runs`` routes.

Each evaluation plays its cases as real emulated runs in :mod:`._evaluation`.
An emulator convention where the API leaves it open: ``toolMocks`` (dataset or
case) is ``{tool name: canned result}``, answered server-side instead of by
the client unless named in ``overrides.disabledMocks``.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ._evaluation import EmulatedEval
from ._history import int_param
from ._validation import InvalidRequest
from .clock import iso_seconds
from .runs import EmulatedRun

__all__ = ["EvalStore"]


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
        self, name: str, cases: list[dict[str, Any]], description: str | None, tool_mocks: Any
    ) -> str:
        """Store a dataset (see ``LocalMantyx.add_eval_dataset``); returns its id."""
        now = iso_seconds(time.time())
        dataset_id = f"ds_{secrets.token_hex(5)}"
        stored = []
        for index, case in enumerate(cases):
            defaults = {"id": f"case_{secrets.token_hex(4)}", "scorers": [], "tags": []}
            times = {"createdAt": now, "updatedAt": now}
            stored.append({**defaults, **times, **_check_case(case, f"cases[{index}]")})
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
        with self._lock:
            return self.evals.get(eval_id)

    def list_body(self, query: Mapping[str, str]) -> dict[str, Any]:
        """``GET /eval-runs``: newest first, filtered, ``limit``/``offset`` paged."""
        limit, offset = int_param(query, "limit", 50), int_param(query, "offset", 0)
        with self._lock:
            runs = list(reversed(self.evals.values()))
        summaries = [r.summary() for r in runs]
        for key in ("datasetId", "agentId", "status"):
            if query.get(key):
                summaries = [s for s in summaries if s.get(key) == query[key]]
        return {"runs": summaries[offset : offset + limit], "limit": limit, "offset": offset}

    def compare_body(self, a: EmulatedEval, b: EmulatedEval) -> dict[str, Any]:
        """``GET /eval-runs/compare``: the two runs' results case by case."""
        by_a = {r["caseId"]: r for r in a.detail()["results"]}
        by_b = {r["caseId"]: r for r in b.detail()["results"]}
        cases = [
            {
                "caseId": case.get("id"),
                "caseName": case.get("name"),
                "caseInput": case.get("input"),
                "a": by_a.get(case.get("id")),
                "b": by_b.get(case.get("id")),
            }
            for case in a.dataset.get("cases") or ()
        ]
        return {
            "datasetId": a.dataset.get("id"),
            "datasetName": a.dataset.get("name"),
            "runA": a.summary(),
            "runB": b.summary(),
            "cases": cases,
        }

    def snapshot(self) -> dict[str, EmulatedEval]:
        with self._lock:
            return dict(self.evals)

    def close(self) -> None:
        """The server is stopping: end every evaluation's worker and stream."""
        with self._lock:
            evals = list(self.evals.values())
        for evaluation in evals:
            evaluation.close()
