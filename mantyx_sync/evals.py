"""Evaluations: run a dataset's cases against an agent and score them.

Reach them through ``client.evals`` (an :class:`Evals`):

* :meth:`Evals.datasets` / :meth:`Evals.dataset` read the stored datasets;
* :meth:`Evals.start` starts an evaluation of a stored or inline dataset
  against a stored agent or an :class:`~mantyx_sync.AgentSpec` /
  :class:`~mantyx_sync.Agent`, and returns an :class:`EvalRun`;
* :meth:`EvalRun.iterate` / :meth:`EvalRun.wait` follow it and answer the
  ``local_tool_call`` of every case run with this process's tools — the same
  executor and exactly-once result posting as an ordinary run, routed by the
  call's ``agentRunId``;
* :meth:`Evals.list`, :meth:`Evals.get`, :meth:`Evals.compare` and
  :meth:`Evals.cancel` read, compare and stop evaluations.

Example::

    with client.evals.start(dataset="ds_123", agent=agent, tools=[lookup]) as run:
        detail = run.wait()
    print(f"{detail.passed_cases}/{detail.total_cases} passed, score {detail.score}")
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, Union

import attrs

from ._base.argcheck import checked
from ._base.handout import handed_out
from ._base.types import ReleaseOnce
from ._engine.eval_cases import (
    TERMINAL_EVENTS,
    TERMINAL_STATUS_EVENT,
    CaseRuns,
    FlatFrames,
    abandon,
    weakly,
)
from ._engine.outcome import Followed
from ._engine.resolution import ResolvedTools, resolve_tools
from ._http.api import Api
from ._http.routes import (
    cancel_eval,
    compare_evals,
    eval_dataset,
    eval_datasets,
    get_eval,
    list_evals,
    start_eval,
)
from ._http.stream import RunStream
from ._models.checks import check_text
from ._models.wire import ALIASES, RAW, FromWire, camel
from .errors import (
    ArgumentTypeError,
    MantyxError,
    RunCancelledError,
    RunError,
    SpecError,
    deprecated,
)
from .events import RunEvent, event_of
from .paging import Listing, filters, paged
from .spec import AgentSpec
from .tools import ToolActivity, ToolLike

if TYPE_CHECKING:
    from .events import AnyRunEvent

__all__ = [
    "EvalCase",
    "EvalCaseComparison",
    "EvalCaseResult",
    "EvalComparison",
    "EvalDataset",
    "EvalDatasetSummary",
    "EvalRun",
    "EvalRunDetail",
    "EvalRunSummary",
    "Evals",
]

log: logging.Logger = logging.getLogger(__name__)

EVAL_TERMINAL_STATUSES: Final = frozenset({"succeeded", "failed", "cancelled"})
"""Statuses after which an evaluation changes no more."""


_RAW_FIELD: Final[Any] = {"factory": dict, "metadata": {RAW: True}, "repr": False, "eq": False}


@attrs.frozen(kw_only=True)
class EvalDatasetSummary(FromWire):
    """A dataset as ``GET /eval-datasets`` lists it."""

    id: str
    name: str | None = None
    description: str | None = None
    case_count: int | None = None
    run_count: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalCase(FromWire):
    """One case: the run input, its scorers and tags.

    :ivar input: the run input (e.g. ``{"prompt": ...}`` or ``{"messages": [...]}``).
    :ivar scorers: how the case is scored, as the server describes them.
    :ivar tool_mocks: canned tool answers for this case, as sent.
    """

    id: str | None = None
    name: str | None = None
    input: dict[str, Any] = attrs.field(factory=dict)
    scorers: tuple[dict[str, Any], ...] = ()
    tags: tuple[str, ...] = ()
    tool_mocks: Any = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalDataset(FromWire):
    """A dataset with its cases (``GET /eval-datasets/{id}``)."""

    id: str
    name: str | None = None
    description: str | None = None
    tool_mocks: Any = None
    cases: tuple[EvalCase, ...] = ()
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalRunSummary(FromWire):
    """An evaluation as ``GET /eval-runs`` lists it.

    :ivar status: ``succeeded``, ``failed`` or ``cancelled`` once it is over;
        anything else means it is still in progress.
    :ivar score: the overall score, when scored.
    """

    id: str = attrs.field(metadata={ALIASES: ("runId",)})
    dataset_id: str | None = None
    dataset_name: str | None = None
    agent_id: str | None = None
    inline_agent: bool | None = None
    status: str | None = None
    total_cases: int | None = None
    completed_cases: int | None = None
    passed_cases: int | None = None
    score: float | None = None
    token_usage: Any = None
    error: Any = None
    agent_overrides: dict[str, Any] | None = None
    started_at: str | None = None
    finished_at: str | None = None
    created_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)

    @property
    def done(self) -> bool:
        """Whether the evaluation is over (a terminal status)."""
        return self.status in EVAL_TERMINAL_STATUSES


@attrs.frozen(kw_only=True)
class EvalCaseResult(FromWire):
    """One case's outcome in an evaluation."""

    id: str | None = None
    case_id: str | None = None
    case: EvalCase | None = None
    final_text: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    scores: tuple[dict[str, Any], ...] = ()
    passed: bool | None = None
    score: float | None = None
    tokens: Any = None
    latency_ms: float | None = None
    error: Any = None
    created_at: str | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalRunDetail(EvalRunSummary):
    """An evaluation with its per-case results (``GET /eval-runs/{id}``)."""

    results: tuple[EvalCaseResult, ...] = ()
    inline_agent_spec: dict[str, Any] | None = None
    agent_spec_snapshot: dict[str, Any] | None = None
    updated_at: str | None = None


@attrs.frozen(kw_only=True)
class EvalCaseComparison(FromWire):
    """One case in a comparison: its two results (either may be missing)."""

    case_id: str | None = None
    case_name: str | None = None
    case_input: dict[str, Any] | None = None
    a: EvalCaseResult | None = None
    b: EvalCaseResult | None = None
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@attrs.frozen(kw_only=True)
class EvalComparison(FromWire):
    """Two evaluations of one dataset side by side (``GET /eval-runs/compare``)."""

    dataset_id: str | None = None
    dataset_name: str | None = None
    run_a: EvalRunSummary | None = None
    run_b: EvalRunSummary | None = None
    cases: tuple[EvalCaseComparison, ...] = ()
    raw: dict[str, Any] = attrs.field(**_RAW_FIELD)


@handed_out("client.evals.start() returns one")
class EvalRun(Followed):
    """A live evaluation: iterate it for its events, :meth:`wait` for the outcome.

    While you iterate, every ``local_tool_call`` of every case run is answered
    on a thread pool, each exactly once. Iteration yields each event as a
    :class:`~mantyx_sync.RunEvent` (numbered locally; progress events pass
    through as the server sent them) and ends after ``run_completed``; after
    ``run_error`` or ``run_cancelled`` the next step raises
    :class:`~mantyx_sync.RunError` / :class:`~mantyx_sync.RunCancelledError`.

    Leaving a ``with`` block (or :meth:`close`) before the end cancels the
    evaluation (best effort); so does dropping an unfinished handle, when it
    is garbage-collected.

    Thread-safety: iterate from one thread; :meth:`cancel` and :meth:`close`
    from any.
    """

    def __init__(
        self,
        api: Api,
        eval_id: str,
        stream_path: str,
        *,
        tools: ResolvedTools,
        max_workers: int,
        on_tool: Callable[[ToolActivity], None] | None = None,
        settle: float = 0.5,
    ) -> None:
        self.id: str = eval_id
        self._api = api
        self._settle = settle
        self._cases = CaseRuns(api, tools, max_workers=max_workers, on_tool=on_tool)
        self._frames = FlatFrames()
        # Events are numbered here, so a reopened stream asks for those after
        # the last one seen; a break first polls whether the evaluation is over.
        # Callbacks held weakly: the stream is reachable from the finalizer's
        # arguments and must not keep this handle alive.
        self._stream = RunStream(
            api,
            stream_path,
            run_id=eval_id,
            parse=self._frames.parse,
            terminal=TERMINAL_EVENTS,
            on_open=weakly(self._on_open),
            on_break=weakly(self._poll),
            busy=lambda: True,  # a quiet evaluation is polled, never given up on
            follows="evaluation",
        )
        self._resources = ReleaseOnce(self._stream.close, self._cases.close, tools.close)
        self._finalizer = weakref.finalize(self, abandon, api, eval_id, self._resources)
        self._finalizer.atexit = False
        self._connections = 0
        self._events: list[AnyRunEvent] = []
        self._failure: RunError | None = None
        self._done = False

    def __repr__(self) -> str:
        return (
            f"<EvalRun {self.id} {'done' if self._done else 'running'}, {len(self._events)} events>"
        )

    @property
    def case_run_ids(self) -> tuple[str, ...]:
        """The agent runs of the cases seen so far (``agentRunId``)."""
        return tuple(self._cases.known())

    def iterate(self) -> Iterator[AnyRunEvent]:
        """The events as they come (the same as iterating the handle)."""
        return self

    def __next__(self) -> AnyRunEvent:
        if self._done:
            self._release()
            if self._failure is not None:
                raise self._failure
            raise StopIteration
        try:
            event = next(self._stream)  # StopIteration once closed
        except KeyboardInterrupt:
            self.close()
            raise
        except MantyxError:
            self._release()
            raise
        self._handle(event)
        return event

    @checked(ArgumentTypeError)
    def wait(self, on_event: Callable[[AnyRunEvent], None] | None = None) -> EvalRunDetail:
        """Follow the evaluation to its end and return its results (``GET /eval-runs/{id}``).

        :raises RunError: the evaluation failed (``RunCancelledError``: it was cancelled).
        :raises StreamError: the stream broke and the evaluation could not be followed.
        """
        for event in self:
            if on_event is not None:
                on_event(event)
        return EvalRunDetail.from_wire(get_eval(self._api, self.id) or {})

    def cancel(self) -> None:
        """Ask the server to cancel the evaluation (its stream then ends)."""
        cancel_eval(self._api, self.id)

    def close(self) -> None:
        """Stop following; an evaluation still going is cancelled (best effort)."""
        first = self._finalizer.detach() is not None
        if first and not self._done:
            cancel_eval(self._api, self.id, best_effort=True)
        self._release()

    def _on_open(self) -> None:
        self._frames.new_connection()
        self._connections += 1
        if self._connections > 1:
            # Calls made while we were away are only in the case runs' own logs.
            for agent_run_id in self._cases.known():
                self._cases.catch_up(agent_run_id, self._settle)

    def _poll(self) -> AnyRunEvent | None:
        """The stream broke: the terminal event if the evaluation is over."""
        try:
            summary = EvalRunSummary.from_wire(get_eval(self._api, self.id) or {})
        except MantyxError as exc:
            log.debug("evaluation %s: poll failed: %s", self.id, exc)
            return None
        if not summary.done or summary.status is None:
            return None
        log.debug("evaluation %s ended (%s) while the stream was down", self.id, summary.status)
        self._frames.count += 1
        kind = TERMINAL_STATUS_EVENT[summary.status]
        return event_of(self._frames.count, kind, {**summary.raw, "polled": True})

    def _handle(self, event: AnyRunEvent) -> None:
        self._events.append(event)
        agent_run_id = event.data.get("agentRunId")
        if isinstance(agent_run_id, str) and agent_run_id:
            # Any event makes its case run known, for catch_up after a break.
            self._cases.handle(agent_run_id, event)
        elif event.type == "local_tool_call":
            log.warning(
                "evaluation %s: a local_tool_call without agentRunId cannot be answered", self.id
            )
        if event.type in TERMINAL_EVENTS:
            self._finish(event)

    def _finish(self, event: RunEvent) -> None:
        self._done = True
        data = event.data
        message = data.get("error") or data.get("message")
        text = message if isinstance(message, str) else None
        if event.type == "run_cancelled":
            self._failure = RunCancelledError(
                f"evaluation {self.id} was cancelled", run_id=self.id, code="cancelled"
            )
        elif event.type == "run_error":
            self._failure = RunError(
                f"evaluation {self.id} failed: {text or 'no reason given'}",
                run_id=self.id,
                code=data.get("code") if isinstance(data.get("code"), str) else None,
            )
        self._release()

    def _release(self) -> None:
        if self._done:
            self._finalizer.detach()
        self._resources.release()


class HasSpec(Protocol):
    """Anything that holds an agent spec: an :class:`~mantyx_sync.Agent`."""

    @property
    def spec(self) -> AgentSpec:
        """The agent's spec."""
        ...


DatasetSource = Union[str, EvalDataset, Mapping[str, Any]]  # noqa: UP007 - runtime alias
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
    if isinstance(dataset, EvalDataset):
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

    def datasets(self) -> list[EvalDatasetSummary]:
        """The workspace's datasets (``GET /eval-datasets``)."""
        body = eval_datasets(self._api) or {}
        return [EvalDatasetSummary.from_wire(d) for d in body.get("datasets") or ()]

    def dataset(self, dataset_id: str) -> EvalDataset:
        """One dataset with its cases (``GET /eval-datasets/{id}``)."""
        return EvalDataset.from_wire(eval_dataset(self._api, dataset_id) or {})

    def list(
        self,
        *,
        dataset_id: str | None = None,
        agent_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        max_items: int | None = None,
        offset: int | None = None,
    ) -> Listing[EvalRunSummary]:
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
            EvalRunSummary.from_wire,
            limit=limit,
            max_items=max_items,
            offset=offset or 0,
        )

    def get(self, eval_id: str) -> EvalRunDetail:
        """One evaluation with its case results (``GET /eval-runs/{id}``)."""
        return EvalRunDetail.from_wire(get_eval(self._api, eval_id) or {})

    def compare(self, a: str, b: str) -> EvalComparison:
        """Two evaluations of one dataset, case by case (``GET /eval-runs/compare``)."""
        return EvalComparison.from_wire(compare_evals(self._api, a, b) or {})

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
