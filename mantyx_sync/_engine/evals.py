"""Evaluations: the ``client.evals`` front — datasets, starting, reading, comparing."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, Union

from .._base.argcheck import checked
from .._base.handout import handed_out
from .._http.api import Api
from .._http.routes import (
    cancel_eval,
    compare_evals,
    eval_dataset,
    eval_datasets,
    get_eval,
    list_evals,
    start_eval,
)
from .._models import evals as values
from .._models.checks import check_text
from .._models.evals import EvalRunDetail
from .._models.paging import Listing, filters, paged
from .._models.wire import camel
from ..errors import ArgumentTypeError, SpecError, deprecated
from ..spec import AgentSpec
from ..tools import ToolLike
from .eval_run import EvalRun
from .executor import ToolActivity
from .resolution import resolve_tools

__all__ = ["Evals"]

log = logging.getLogger(__name__)


class HasSpec(Protocol):
    """Anything that holds an agent spec: an :class:`~mantyx_sync.Agent`."""

    @property
    def spec(self) -> AgentSpec:
        """The agent's spec."""
        ...


DatasetSource = Union[str, values.EvalDataset, Mapping[str, Any]]  # noqa: UP007 - runtime alias
"""What an evaluation runs on: a stored dataset's id, an :class:`EvalDataset`
or an inline ``{"name", "cases": [...]}`` mapping."""

_OVERRIDE_KEYS = frozenset(
    {
        "systemPrompt",
        "systemPromptAppend",
        "model",
        "llmProviderId",
        "reasoningLevel",
        "disableTools",
        "toolAllowlist",
        "disabledMocks",
    }
)


def _dataset_source(dataset: Any, tool_mocks: Any) -> dict[str, Any]:
    if isinstance(dataset, str):
        if not dataset:
            raise SpecError("must be a dataset id or an inline dataset", path="dataset")
        if tool_mocks is not None:
            raise SpecError(
                "applies to an inline dataset only; a stored dataset keeps its own mocks "
                "(turn some off with overrides={'disabledMocks': [...]})",
                path="tool_mocks",
            )
        return {"datasetId": dataset}
    if isinstance(dataset, values.EvalDataset):
        dataset = {
            "name": dataset.name,
            "toolMocks": dataset.tool_mocks,
            "cases": [
                {
                    k: v
                    for k, v in (
                        ("input", c.input),
                        ("name", c.name),
                        ("scorers", list(c.scorers)),
                        ("tags", list(c.tags)),
                        ("toolMocks", c.tool_mocks),
                    )
                    if v
                }
                for c in dataset.cases
            ],
        }
    if not isinstance(dataset, Mapping):
        raise SpecError(
            "must be a dataset id (str) or an inline dataset mapping, "
            f"got {type(dataset).__name__}",
            path="dataset",
        )
    cases = dataset.get("cases")
    if not isinstance(cases, Sequence) or isinstance(cases, str) or not cases:
        raise SpecError("an inline dataset needs a non-empty list of cases", path="dataset.cases")
    for index, case in enumerate(cases):
        if not isinstance(case, Mapping) or not isinstance(case.get("input"), Mapping):
            raise SpecError("each case needs an 'input' object", path=f"dataset.cases[{index}]")
    inline = {k: v for k, v in dataset.items() if v is not None}
    if tool_mocks is not None:
        inline["toolMocks"] = tool_mocks
    try:
        json.dumps(inline, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"is not JSON-serialisable ({exc})", path="dataset") from exc
    return {"dataset": inline}


def _overrides(overrides: Any) -> dict[str, Any]:
    if not isinstance(overrides, Mapping):
        raise SpecError(f"must be a mapping, got {type(overrides).__name__}", path="overrides")
    out = {}
    for key, value in overrides.items():
        wire = camel(key) if isinstance(key, str) else key
        if wire not in _OVERRIDE_KEYS:
            allowed = ", ".join(sorted(_OVERRIDE_KEYS))
            raise SpecError(f"unknown override {key!r} (expected: {allowed})", path="overrides")
        out[wire] = value
    return out


@handed_out("use the one a Client has, client.evals")
class Evals:
    """Evaluations of a workspace: ``client.evals``.

    Thread-safety: stateless; call it from any thread.

    Example::

        with client.evals.start(dataset="ds_123", agent=agent, tools=[lookup]) as run:
            detail = run.wait()
        print(detail.passed_cases, "/", detail.total_cases)
    """

    def __init__(self, api: Api) -> None:
        self._api = api

    def datasets(self) -> list[values.EvalDatasetSummary]:
        """The workspace's datasets (``GET /eval-datasets``)."""
        body = eval_datasets(self._api) or {}
        return [values.EvalDatasetSummary.from_wire(d) for d in body.get("datasets") or ()]

    def dataset(self, dataset_id: str) -> values.EvalDataset:
        """One dataset with its cases (``GET /eval-datasets/{id}``)."""
        return values.EvalDataset.from_wire(eval_dataset(self._api, dataset_id) or {})

    def list(
        self,
        *,
        dataset_id: str | None = None,
        agent_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        max_items: int | None = None,
        offset: int | None = None,
    ) -> Listing[values.EvalRunSummary]:
        """Evaluations, newest first (``GET /eval-runs``), as a lazy :class:`~mantyx_sync.Listing`.

        Each page is one request, made only when iteration reaches it.

        :param limit: page size sent to the server (1-200; default: the server's 50).
        :param max_items: stop after this many evaluations.
        :param offset: deprecated: skip this many first (iterate instead).
        :raises SpecError: a filter is invalid (nothing is sent).
        """
        params = filters(dataset_id=dataset_id, agent_id=agent_id, status=status)
        if offset is not None:
            deprecated("Evals.list(offset=)", "iterating the Listing it returns (it pages itself)")
        return paged(
            lambda query: list_evals(self._api, query),
            params,
            "runs",
            values.EvalRunSummary.from_wire,
            limit=limit,
            max_items=max_items,
            offset=offset or 0,
        )

    def get(self, eval_id: str) -> EvalRunDetail:
        """One evaluation with its case results (``GET /eval-runs/{id}``)."""
        return EvalRunDetail.from_wire(get_eval(self._api, eval_id) or {})

    def compare(self, a: str, b: str) -> values.EvalComparison:
        """Two evaluations of one dataset, case by case (``GET /eval-runs/compare``)."""
        return values.EvalComparison.from_wire(compare_evals(self._api, a, b) or {})

    def cancel(self, eval_id: str) -> bool:
        """Cancel an evaluation; ``True`` when the server did (``{ok}``)."""
        return cancel_eval(self._api, eval_id)

    @checked(ArgumentTypeError)
    def start(
        self,
        *,
        dataset: DatasetSource,
        agent: str | AgentSpec | HasSpec,
        tools: Sequence[ToolLike] = (),
        model_id: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        tool_mocks: Any = None,
        max_workers: int | None = None,
        on_tool: Callable[[ToolActivity], None] | None = None,
    ) -> EvalRun:
        """Start an evaluation (``POST /eval-runs``) and return its live :class:`EvalRun`.

        :param dataset: a stored dataset id, or an inline dataset
            ``{"name", "toolMocks", "cases": [{"input": {...}, ...}]}`` (or an
            :class:`EvalDataset`).
        :param agent: a stored agent id, or an :class:`~mantyx_sync.AgentSpec` /
            :class:`~mantyx_sync.Agent` (sent inline, with its tools).
        :param tools: tools added to the agent; local ones are answered by this process.
        :param overrides: ``systemPrompt``, ``systemPromptAppend``, ``model``,
            ``llmProviderId``, ``reasoningLevel``, ``disableTools``,
            ``toolAllowlist``, ``disabledMocks`` (snake_case accepted).
        :param tool_mocks: canned tool answers for an inline dataset.
        :raises SpecError: bad arguments (nothing is sent).
        :raises ToolResolutionError: an MCP server or A2A peer is unreachable.
        """
        body = _dataset_source(dataset, tool_mocks)
        spec = getattr(agent, "spec", agent)
        if model_id is not None:
            body["modelId"] = check_text(model_id, "model_id")
        if overrides is not None:
            body["overrides"] = _overrides(overrides)
        if isinstance(spec, AgentSpec):
            resolved = resolve_tools([*spec.tools, *tools])
            body["agent"] = spec.to_body(resolved.refs)
        elif isinstance(agent, str) and agent:
            resolved = resolve_tools(tools)
            body["agentId"] = agent
            if resolved.refs:
                body["tools"] = list(resolved.refs)
        else:
            raise SpecError(
                f"must be an agent id, an AgentSpec or an Agent, got {type(agent).__name__}",
                path="agent",
            )
        try:
            eval_id, stream_path = start_eval(self._api, body)
        except BaseException:
            resolved.close()
            raise
        log.debug("started evaluation %s", eval_id)
        return EvalRun(
            self._api,
            eval_id,
            stream_path,
            tools=resolved,
            max_workers=max_workers or self._api.config.max_workers,
            on_tool=on_tool,
        )
