"""Every route the SDK calls, seen at the HTTP seam (``responses`` patches HTTPAdapter.send).

For each route: the method, the URL under ``<base_url>/api/v1/workspaces/<slug>``,
the ``Authorization: Bearer`` header, the exact camelCase JSON body, and the
value the public method returns. Then the error each status maps to, and which
requests are retried (safe ones) and which never are (run/session/message
creation after a 500 or a timeout).

Event streams are served from a :class:`_Pipe`: a raw body whose reads return
exactly what the test pushed, like a socket. That exercises the transport's
``raw.read1`` path for real (``responses`` wraps the body in a urllib3
``HTTPResponse``, whose ``read1`` reaches our pipe), and lets a test hold the
stream open until a tool result has been posted.
"""

from __future__ import annotations

import io
import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
import requests
import responses
from core_support import BASE, KEY, ROOT

import mantyx_sync
from mantyx_sync import (
    A2ATool,
    Agent,
    APIConnectionError,
    AuthError,
    Client,
    ConflictError,
    ConnectError,
    InvalidRequestError,
    LocalToolCall,
    LoopDetection,
    MantyxTool,
    McpTool,
    Message,
    ModelCatalog,
    NotFoundError,
    PermissionDeniedError,
    Plan,
    PluginTool,
    RateLimitError,
    RequestTimeoutError,
    RunError,
    RunSnapshot,
    ServerError,
    SessionInfo,
    ToolBudget,
)
from mantyx_sync import client as client_module
from mantyx_sync import session as session_module
from mantyx_sync._http import retry as retry_module
from mantyx_sync._http.retry import Backoff
from mantyx_sync.events import ModelInfo, TokenUsage
from mantyx_sync.spec import OverrideKeywords, SpecKeywords
from mantyx_sync.types import UNSET

PIPE_TIMEOUT = 5.0


def frame(seq: int, event_type: str, data: dict[str, Any] | None = None) -> bytes:
    """One SSE frame carrying the envelope ``{"seq", "type", "data"}``."""
    envelope = {"seq": seq, "type": event_type, "data": data or {}}
    return f"id: {seq}\nevent: {event_type}\ndata: {json.dumps(envelope)}\n\n".encode()


USAGE = {
    "tokens": {"inputTokens": 120, "cachedTokens": 20, "reasoningTokens": 5, "outputTokens": 30},
    "turns": 2,
    "model": {"id": "openai/gpt-5.5", "provider": "openai", "vendorModelId": "gpt-5.5"},
}


def result_frame(seq: int, text: str = "done", **extra: Any) -> bytes:
    return frame(seq, "result", {"subtype": "success", "text": text, **extra})


class _Pipe(io.RawIOBase):
    """A response body fed by the test; each read returns at most one pushed chunk.

    If nothing is pushed in time, it ends the run with an ``error`` frame so a
    broken test fails with a message instead of hanging.
    """

    def __init__(self) -> None:
        super().__init__()
        self._chunks: queue.Queue[bytes] = queue.Queue()
        self._pending = b""
        self._eof = False

    def readable(self) -> bool:
        return True

    def push(self, *chunks: bytes) -> None:
        for chunk in chunks:
            self._chunks.put(chunk)

    def finish(self) -> None:
        self._chunks.put(b"")

    def readinto(self, buffer: Any) -> int:
        if self._eof:
            return 0
        if not self._pending:
            try:
                self._pending = self._chunks.get(timeout=PIPE_TIMEOUT)
            except queue.Empty:
                # End the run and then the body, so even a reader that waits
                # for a full buffer gets an answer.
                self._pending = frame(10**6, "error", {"error": "test pipe starved"})
                self._chunks.put(b"")
            if not self._pending:
                self._eof = True
                return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def body(self) -> io.BufferedReader:
        return io.BufferedReader(self)


def _piped_run(mock: responses.RequestsMock, run_id: str) -> _Pipe:
    """Answer the run's creation with ``run_id``; its event stream is the returned pipe."""
    pipe = _Pipe()
    mock.post(f"{ROOT}/agent-runs", json={"runId": run_id}, status=202)
    mock.add(
        responses.Response(
            "GET",
            f"{ROOT}/agent-runs/{run_id}/stream",
            body=pipe.body(),
            content_type="text/event-stream",
        )
    )
    return pipe


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every retry wait of the facades' policies, recorded instead of slept."""
    recorded: list[float] = []
    for module in (client_module, session_module, retry_module):
        for name in ("CREATE_POLICY", "SAFE_POLICY"):
            if hasattr(module, name):
                policy = getattr(module, name)
                monkeypatch.setattr(module, name, attrs.evolve(policy, sleep=recorded.append))
    # Stream reconnects wait on an Event; make those waits negligible.
    fast = Backoff(initial=0.001, maximum=0.001, jitter=0.0)
    monkeypatch.setattr(
        retry_module, "RECONNECT_POLICY", attrs.evolve(retry_module.RECONNECT_POLICY, backoff=fast)
    )
    return recorded


@pytest.fixture
def client(waits: list[float]) -> Iterator[Client]:
    c = Client(KEY, workspace="acme", base_url=BASE, request_timeout=5.0)
    yield c
    c.close()


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield rsps


def request_of(mock: responses.RequestsMock, index: int) -> requests.PreparedRequest:
    sent = mock.calls[index].request
    assert isinstance(sent, requests.PreparedRequest)
    return sent


def json_of(sent: requests.PreparedRequest) -> Any:
    assert sent.headers["Content-Type"] == "application/json"
    assert isinstance(sent.body, bytes)
    return json.loads(sent.body)


def assert_auth(sent: requests.PreparedRequest, key: str = KEY) -> None:
    assert sent.headers["Authorization"] == f"Bearer {key}"
    assert sent.headers["User-Agent"] == f"mantyx-sync/{mantyx_sync.__version__}"


def calls(mock: responses.RequestsMock) -> list[tuple[str, str]]:
    return [(str(c.request.method), str(c.request.url)) for c in mock.calls]


def read_file_tool() -> mantyx_sync.LocalTool:
    return mantyx_sync.define_local_tool(
        name="read_file",
        description="Read a file.",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        execute=lambda args: "contents",
        output_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        long_running=True,
    )


@mantyx_sync.local_tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


EVERY_TOOL_KIND: list[Any] = [
    MantyxTool("tool_cm6abc"),
    PluginTool("web_search"),
    A2ATool(
        "billing_agent",
        "https://billing.example/.well-known/agent-card.json",
        description="Billing questions.",
        headers={"Authorization": "Bearer peer-token"},
        context_id="ctx_abc",
    ),
    McpTool(
        "github",
        "https://mcp.github.example/v1",
        headers={"Authorization": "Bearer gh-token"},
        tool_filter=("search_repos", "read_file"),
    ),
    read_file_tool(),
    add,
]

EVERY_TOOL_KIND_WIRE: list[dict[str, Any]] = [
    {"kind": "mantyx", "id": "tool_cm6abc"},
    {"kind": "mantyx_plugin", "name": "web_search"},
    {
        "kind": "a2a",
        "name": "billing_agent",
        "agentCardUrl": "https://billing.example/.well-known/agent-card.json",
        "description": "Billing questions.",
        "headers": {"Authorization": "Bearer peer-token"},
        "contextId": "ctx_abc",
    },
    {
        "kind": "mcp",
        "name": "github",
        "url": "https://mcp.github.example/v1",
        "headers": {"Authorization": "Bearer gh-token"},
        "toolFilter": ["search_repos", "read_file"],
    },
    {
        "kind": "local",
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "longRunning": True,
    },
    {
        "kind": "local",
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "The first."},
                "b": {"type": "integer", "description": "The second."},
            },
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    },
]

FULL_SPEC: dict[str, Any] = {
    "name": "support-bot",
    "agent_id": "agent_cm6abc123",
    "system_prompt": "You are terse.",
    "model_id": "openai/gpt-5.5",
    "reasoning_level": "medium",
    "tools": EVERY_TOOL_KIND,
    "output_schema": {
        "name": "report",
        "schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    "loop_detection": LoopDetection(consecutive_threshold=3, hard_cutoff_threshold=5),
    "tool_budgets": {"web_search": 2, "read_file": ToolBudget(max_calls=0), "add": {"maxCalls": 1}},
    "budgets": {"maxToolTurns": 32},
    "metadata": {"customer": "acme", "env": "prod"},
    "fallback_model_id": "openai/gpt-5.5-mini",
    "supervisor": True,
    "plan": "required",
}

FULL_SPEC_WIRE: dict[str, Any] = {
    "name": "support-bot",
    "agentId": "agent_cm6abc123",
    "systemPrompt": "You are terse.",
    "modelId": "openai/gpt-5.5",
    "reasoningLevel": "medium",
    "tools": EVERY_TOOL_KIND_WIRE,
    "outputSchema": {
        "name": "report",
        "schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    "loopDetection": {"consecutiveThreshold": 3, "hardCutoffThreshold": 5},
    "toolBudgets": {
        "web_search": {"maxCalls": 2},
        "read_file": {"maxCalls": 0},
        "add": {"maxCalls": 1},
    },
    "budgets": {"maxToolTurns": 32},
    "metadata": {"customer": "acme", "env": "prod"},
    "fallbackModelId": "openai/gpt-5.5-mini",
    "supervisor": True,
    "plan": "required",
}

# Every keyword a session message may give, and its wire form.
EVERY_OVERRIDE: dict[str, Any] = {
    "tools": [PluginTool("web_search"), read_file_tool()],
    "reasoning_level": "low",
    "output_schema": {"type": "object"},
    "loop_detection": {"consecutiveThreshold": 4, "hardCutoffThreshold": 8},
    "tool_budgets": {"web_search": 1},
    "metadata": {"turn": "2"},
    "supervisor": False,
    "plan": Plan(mode="off"),
}
EVERY_OVERRIDE_WIRE: dict[str, Any] = {
    "tools": [EVERY_TOOL_KIND_WIRE[1], EVERY_TOOL_KIND_WIRE[4]],
    "reasoningLevel": "low",
    "outputSchema": {"schema": {"type": "object"}},
    "loopDetection": {"consecutiveThreshold": 4, "hardCutoffThreshold": 8},
    "toolBudgets": {"web_search": {"maxCalls": 1}},
    "metadata": {"turn": "2"},
    "supervisor": False,
    "plan": {"mode": "off"},
}


def test_the_full_bodies_give_every_spec_keyword() -> None:
    # So the body tests below cover a keyword as soon as it is declared.
    assert set(FULL_SPEC) == set(SpecKeywords.__annotations__)
    assert set(EVERY_OVERRIDE) == set(OverrideKeywords.__annotations__)


# (argument, wire value or None when the key must be absent) - wire-protocol §8.
LOOP_DETECTION_CASES: list[tuple[Any, Any]] = [
    (UNSET, None),
    (None, None),
    (False, False),
    ({}, {}),
    ({"consecutive_threshold": 4}, {"consecutiveThreshold": 4}),
    ({"hardCutoffThreshold": 9}, {"hardCutoffThreshold": 9}),
]
TOOL_BUDGET_CASES: list[tuple[Any, Any]] = [
    (UNSET, None),
    (None, None),
    ({}, {}),
    ({"add": 0}, {"add": {"maxCalls": 0}}),
]


def guard_kwargs(loop_detection: Any, tool_budgets: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if loop_detection is not UNSET:
        kwargs["loop_detection"] = loop_detection
    if tool_budgets is not UNSET:
        kwargs["tool_budgets"] = tool_budgets
    return kwargs


def assert_guards(body: dict[str, Any], loop_wire: Any, budgets_wire: Any) -> None:
    if loop_wire is None:
        assert "loopDetection" not in body
    else:
        assert body["loopDetection"] == loop_wire
    if budgets_wire is None:
        assert "toolBudgets" not in body
    else:
        assert body["toolBudgets"] == budgets_wire


# --------------------------------------------------------------------------- GET /models


def test_models_route_and_catalog(client: Client, mock: responses.RequestsMock) -> None:
    mock.get(
        f"{ROOT}/models",
        json={
            "models": [
                {
                    "id": "platform:cm6abc123",
                    "label": "Claude (platform)",
                    "provider": "anthropic",
                    "vendorModelId": "claude-sonnet-4-5",
                    "source": "platform_offering",
                    "contextWindowTokens": 200000,
                    "pricing": {"inputPer1MUsd": 3.0, "outputPer1MUsd": 15.0},
                },
                {"id": "provider:cm6def456", "provider": "openai", "pricing": None},
            ],
            "defaultModelId": "platform:cm6abc123",
        },
    )
    catalog = client.models.list()
    assert isinstance(catalog, ModelCatalog)
    assert catalog.default_model_id == "platform:cm6abc123"
    assert [m.id for m in catalog] == ["platform:cm6abc123", "provider:cm6def456"]
    first = catalog.get("platform:cm6abc123")
    assert first is not None and first.pricing is not None
    assert first.pricing.output_per_1m_usd == 15.0
    assert first.context_window_tokens == 200000
    byok = catalog.get("provider:cm6def456")
    assert byok is not None and byok.pricing is None
    sent = request_of(mock, 0)
    assert (sent.method, sent.url) == ("GET", f"{BASE}/api/v1/workspaces/acme/models")
    assert_auth(sent)
    assert sent.body is None
    assert sent.headers["Accept"] == "application/json"


# --------------------------------------------------------------------------- POST /agent-runs


def test_create_run_full_body(client: Client, mock: responses.RequestsMock) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"runId": "run_1"}, status=202)
    mock.post(f"{ROOT}/agent-runs/run_1/cancel", json={"ok": True})
    agent = Agent(client, **FULL_SPEC)
    with agent.start("Hello") as run:
        assert run.id == "run_1"
    sent = request_of(mock, 0)
    assert (sent.method, sent.url) == ("POST", f"{ROOT}/agent-runs")
    assert_auth(sent)
    assert json_of(sent) == {**FULL_SPEC_WIRE, "prompt": "Hello"}


def test_create_run_minimal_body_and_201(client: Client, mock: responses.RequestsMock) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"id": "run_2"}, status=201)
    mock.post(f"{ROOT}/agent-runs/run_2/cancel", status=204)
    with Agent(client, system_prompt="p").start("hi") as run:
        assert run.id == "run_2"
    assert json_of(request_of(mock, 0)) == {"systemPrompt": "p", "tools": [], "prompt": "hi"}


def test_create_run_persisted_agent_and_messages(
    client: Client, mock: responses.RequestsMock
) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"runId": "run_3"}, status=202)
    mock.post(f"{ROOT}/agent-runs/run_3/cancel", status=204)
    attachment = {"type": "input_file_url", "url": "https://x.example/a.pdf"}
    agent = Agent(client, agent_id="agent_cm6abc123", reasoning_level=0)
    with agent.start(
        messages=[
            ("system", "Answer in French."),
            {"role": "assistant", "content": "Bonjour"},
            {"role": "user", "content": "Summarise", "attachments": [attachment]},
        ]
    ):
        pass
    assert json_of(request_of(mock, 0)) == {
        "agentId": "agent_cm6abc123",
        "reasoningLevel": 0,
        "tools": [],
        "messages": [
            {"role": "system", "content": "Answer in French."},
            {"role": "assistant", "content": "Bonjour"},
            {"role": "user", "content": "Summarise", "attachments": [attachment]},
        ],
    }


@pytest.mark.parametrize(("loop_arg", "loop_wire"), LOOP_DETECTION_CASES)
@pytest.mark.parametrize(("budget_arg", "budget_wire"), TOOL_BUDGET_CASES)
def test_create_run_guard_semantics(
    client: Client,
    mock: responses.RequestsMock,
    loop_arg: Any,
    loop_wire: Any,
    budget_arg: Any,
    budget_wire: Any,
) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"runId": "run_g"}, status=202)
    mock.post(f"{ROOT}/agent-runs/run_g/cancel", status=204)
    agent = Agent(client, system_prompt="p", tools=[add], **guard_kwargs(loop_arg, budget_arg))
    with agent.start("hi"):
        pass
    assert_guards(json_of(request_of(mock, 0)), loop_wire, budget_wire)


def test_spec_error_sends_nothing(client: Client, mock: responses.RequestsMock) -> None:
    with pytest.raises(mantyx_sync.SpecError, match=r"^loop_detection\.consecutive_threshold:"):
        Agent(client, system_prompt="p", loop_detection={"consecutiveThreshold": 1})
    with pytest.raises(mantyx_sync.SpecError, match="tools"):
        Agent(client, system_prompt="p", tools=[add, add]).start("hi")
    assert len(mock.calls) == 0


# --------------------------------------------------------------------------- GET /agent-runs/{id}


def test_get_run_snapshot_with_usage(client: Client, mock: responses.RequestsMock) -> None:
    mock.get(
        f"{ROOT}/agent-runs/run_1",
        json={"id": "run_1", "status": "completed", "finalText": "hi", **USAGE},
    )
    snapshot = client.runs.get("run_1")
    assert isinstance(snapshot, RunSnapshot)
    assert (snapshot.id, snapshot.status, snapshot.final_text) == ("run_1", "completed", "hi")
    assert snapshot.tokens == TokenUsage(
        input_tokens=120, cached_tokens=20, reasoning_tokens=5, output_tokens=30
    )
    assert snapshot.turns == 2
    assert snapshot.model == ModelInfo(
        id="openai/gpt-5.5", provider="openai", vendor_model_id="gpt-5.5"
    )
    sent = request_of(mock, 0)
    assert (sent.method, sent.url) == ("GET", f"{ROOT}/agent-runs/run_1")
    assert_auth(sent)
    assert sent.body is None


@pytest.mark.parametrize(
    "extra",
    [
        {"tokens": None, "turns": None, "model": None},
        {},
        {"tokens": {"inputTokens": 0}, "turns": 0, "model": {"id": "", "provider": ""}},
    ],
    ids=["null-until-terminal", "older-server", "empty-provider"],
)
def test_get_run_snapshot_without_usage(
    client: Client, mock: responses.RequestsMock, extra: dict[str, Any]
) -> None:
    mock.get(f"{ROOT}/agent-runs/run_1", json={"runId": "run_1", "status": "running", **extra})
    snapshot = client.runs.get("run_1")
    assert snapshot.id == "run_1"
    assert (snapshot.tokens, snapshot.turns, snapshot.model) == (None, None, None)


# --------------------------------------------------------------------------- GET .../stream


def test_run_streams_events_and_result(client: Client, mock: responses.RequestsMock) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"runId": "run_1"}, status=202)
    mock.get(
        f"{ROOT}/agent-runs/run_1/stream",
        body=b": ping\n\n"
        + frame(1, "started")
        + frame(2, "assistant_delta", {"text": "Hel"})
        + frame(3, "assistant_delta", {"text": "lo"})
        + result_frame(4, "Hello", **USAGE),
        content_type="text/event-stream",
    )
    seen: list[str] = []
    result = Agent(client, system_prompt="p").run("hi", on_event=lambda e: seen.append(e.type))
    assert seen == ["started", "assistant_delta", "assistant_delta", "result"]
    assert result.run_id == "run_1"
    assert result.text == "Hello"
    assert [e.seq for e in result.events] == [1, 2, 3, 4]
    assert result.tokens == TokenUsage(
        input_tokens=120, cached_tokens=20, reasoning_tokens=5, output_tokens=30
    )
    assert result.turns == 2
    assert result.model is not None and result.model.id == "openai/gpt-5.5"
    assert calls(mock) == [
        ("POST", f"{ROOT}/agent-runs"),
        ("GET", f"{ROOT}/agent-runs/run_1/stream"),
    ]
    stream = request_of(mock, 1)
    assert_auth(stream)
    assert stream.headers["Accept"] == "text/event-stream"
    assert stream.headers["Cache-Control"] == "no-cache"
    assert "Last-Event-ID" not in stream.headers
    assert stream.body is None


def test_result_without_usage_is_none(client: Client, mock: responses.RequestsMock) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"runId": "run_1"}, status=202)
    mock.get(
        f"{ROOT}/agent-runs/run_1/stream",
        body=frame(1, "result", {"ok": True, "text": "legacy"}),
        content_type="text/event-stream",
    )
    result = Agent(client, system_prompt="p").run("hi")
    assert result.text == "legacy"
    assert (result.tokens, result.turns, result.model) == (None, None, None)


def test_stream_url_from_create_reply_is_followed(
    client: Client, mock: responses.RequestsMock
) -> None:
    mock.post(
        f"{ROOT}/agent-runs",
        json={"runId": "run_1", "streamUrl": "/api/v1/workspaces/acme/agent-runs/run_1/events"},
        status=202,
    )
    mock.get(
        f"{ROOT}/agent-runs/run_1/events",
        body=result_frame(1, "ok"),
        content_type="text/event-stream",
    )
    assert Agent(client, system_prompt="p").run("hi").text == "ok"
    assert calls(mock)[1] == ("GET", f"{ROOT}/agent-runs/run_1/events")


def test_stream_is_read_incrementally_with_read1(
    client: Client, mock: responses.RequestsMock
) -> None:
    # Each event must be yielded as soon as its bytes arrive: with a blocking
    # read(65536) the first next() would wait for the whole body.
    pipe = _piped_run(mock, "run_1")
    first = frame(1, "assistant_delta", {"text": "a"})
    pipe.push(first[:10], first[10:])
    with Agent(client, system_prompt="p").stream("hi") as run:
        event = next(run)
        assert (event.seq, event.type, event.text) == (1, "assistant_delta", "a")
        pipe.push(frame(2, "assistant_delta", {"text": "b"}), result_frame(3, "ab"))
        assert [e.seq for e in run] == [2, 3]
    assert run.result is not None and run.result.text == "ab"


def test_stream_resumes_with_last_event_id_and_drops_replays(
    client: Client, mock: responses.RequestsMock
) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"runId": "run_1"}, status=202)
    stream_url = f"{ROOT}/agent-runs/run_1/stream"
    body1 = frame(1, "assistant_delta", {"text": "a"}) + frame(2, "assistant_delta", {"text": "b"})
    mock.get(stream_url, body=body1, content_type="text/event-stream")
    mock.get(stream_url, status=503, json={"error": "unavailable"})
    body3 = frame(2, "assistant_delta", {"text": "b"}) + result_frame(3, "ab")
    mock.get(stream_url, body=body3, content_type="text/event-stream")
    result = Agent(client, system_prompt="p").run("hi")
    assert [e.seq for e in result.events] == [1, 2, 3]
    assert [m for m, _ in calls(mock)] == ["POST", "GET", "GET", "GET"]
    for index in (2, 3):
        resumed = request_of(mock, index)
        assert resumed.headers["Last-Event-ID"] == "2"
        assert resumed.url == f"{stream_url}?lastSeq=2"
        assert_auth(resumed)


def test_stream_open_404_is_raised(client: Client, mock: responses.RequestsMock) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"runId": "run_1"}, status=202)
    mock.get(f"{ROOT}/agent-runs/run_1/stream", status=404, json={"error": "not_found"})
    mock.post(f"{ROOT}/agent-runs/run_1/cancel", status=204)
    with pytest.raises(NotFoundError):
        Agent(client, system_prompt="p").run("hi")
    # Not retried; the run never ended, so leaving run() cancels it (best effort).
    assert calls(mock) == [
        ("POST", f"{ROOT}/agent-runs"),
        ("GET", f"{ROOT}/agent-runs/run_1/stream"),
        ("POST", f"{ROOT}/agent-runs/run_1/cancel"),
    ]


@pytest.mark.parametrize(
    ("terminal", "error_type", "code"),
    [
        (
            frame(2, "error", {"error": "boom", "errorClass": "provider", "retryable": True}),
            RunError,
            "provider",
        ),
        (
            frame(2, "result", {"subtype": "error_local_tool_timeout", "error": "late"}),
            RunError,
            "error_local_tool_timeout",
        ),
        (frame(2, "cancelled", {"reason": "user"}), mantyx_sync.RunCancelledError, "cancelled"),
    ],
)
def test_failed_terminal_raises(
    client: Client,
    mock: responses.RequestsMock,
    terminal: bytes,
    error_type: type[RunError],
    code: str,
) -> None:
    mock.post(f"{ROOT}/agent-runs", json={"runId": "run_1"}, status=202)
    mock.get(
        f"{ROOT}/agent-runs/run_1/stream",
        body=frame(1, "assistant_delta", {"text": "par"}) + terminal,
        content_type="text/event-stream",
    )
    with pytest.raises(error_type) as info:
        Agent(client, system_prompt="p").run("hi")
    assert type(info.value) is error_type
    assert info.value.run_id == "run_1"
    assert info.value.code == code
    # A run that ended on the server is not cancelled again.
    assert [m for m, _ in calls(mock)] == ["POST", "GET"]


# --------------------------------------------------------------------------- POST .../tool-results


def _tool_round_trip(
    client: Client,
    mock: responses.RequestsMock,
    tools: list[Any],
    call: dict[str, Any],
) -> tuple[mantyx_sync.RunResult, list[dict[str, Any]]]:
    pipe = _piped_run(mock, "run_t")
    posted: list[dict[str, Any]] = []

    def on_result(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        body = json_of(request)
        posted.append(body)
        # The server's echo, then the end of the run, only once the answer is in.
        pipe.push(
            frame(3, "local_tool_result_in", {"toolUseId": body["toolUseId"]}),
            result_frame(4, "answered"),
        )
        pipe.finish()
        return 200, {}, json.dumps({"ok": True})

    mock.add_callback("POST", f"{ROOT}/agent-runs/run_t/tool-results", callback=on_result)
    pipe.push(frame(1, "started"), frame(2, "local_tool_call", call))
    result = Agent(client, system_prompt="p", tools=tools).run("go")
    return result, posted


def test_tool_result_is_posted(client: Client, mock: responses.RequestsMock) -> None:
    result, posted = _tool_round_trip(
        client, mock, [add], {"toolUseId": "tu_1", "name": "add", "args": {"a": 2, "b": 3}}
    )
    assert result.text == "answered"
    assert posted == [{"toolUseId": "tu_1", "result": "5"}]
    sent = next(c.request for c in mock.calls if str(c.request.url).endswith("/tool-results"))
    assert isinstance(sent, requests.PreparedRequest)
    assert (sent.method, sent.url) == ("POST", f"{ROOT}/agent-runs/run_t/tool-results")
    assert_auth(sent)


def test_tool_error_is_posted(client: Client, mock: responses.RequestsMock) -> None:
    def explode(args: dict[str, Any]) -> str:
        raise ValueError("no such file")

    tool = mantyx_sync.define_local_tool(name="read_file", execute=explode)
    _, posted = _tool_round_trip(
        client, mock, [tool], {"toolUseId": "tu_2", "name": "read_file", "input": {}}
    )
    assert posted == [{"toolUseId": "tu_2", "error": "ValueError: no such file"}]


def test_invalid_tool_args_answered_without_calling(
    client: Client, mock: responses.RequestsMock
) -> None:
    _, posted = _tool_round_trip(
        client, mock, [add], {"toolUseId": "tu_3", "name": "add", "args": {"a": "x", "b": 1}}
    )
    assert len(posted) == 1
    assert set(posted[0]) == {"toolUseId", "error"}
    assert posted[0]["toolUseId"] == "tu_3"


class _FakeMcpConnection:
    """A resolved mcp_local toolset, standing in for a real MCP server connection."""

    kind = "mcp_local"
    name = "fs"

    def __init__(self) -> None:
        self.closed = threading.Event()
        self.calls: list[LocalToolCall] = []

    def wire_ref(self) -> dict[str, Any]:
        return {
            "kind": "mcp_local",
            "name": "fs",
            "serverInfo": {"name": "fake-fs", "version": "1.0"},
            "tools": [
                {
                    "name": "fs_read",
                    "description": "Read a file.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}},
                        "required": ["path"],
                    },
                }
            ],
        }

    def tool_names(self) -> list[str]:
        return ["fs_read"]

    def input_schema(self, tool_name: str) -> dict[str, Any] | None:
        return dict(self.wire_ref()["tools"][0]["inputSchema"])

    def call(self, call: LocalToolCall, *, timeout: float | None) -> str:
        self.calls.append(call)
        return "127.0.0.1 localhost"

    def close(self) -> None:
        self.closed.set()


class _FakeMcpDefinition:
    kind = "mcp_local"
    name = "fs"

    def __init__(self) -> None:
        self.connections: list[_FakeMcpConnection] = []

    def connect(self) -> _FakeMcpConnection:
        conn = _FakeMcpConnection()
        self.connections.append(conn)
        return conn


def test_client_resolved_tool_ref_call_and_close(
    client: Client, mock: responses.RequestsMock
) -> None:
    definition = _FakeMcpDefinition()
    call = {
        "toolUseId": "tu_m",
        "name": "fs_read",
        "args": {"path": "/etc/hosts"},
        "kind": "mcp_local",
        "mcpServer": "fs",
        "mcpToolName": "fs_read",
    }
    result, posted = _tool_round_trip(client, mock, [definition], call)
    assert result.text == "answered"
    body = json_of(request_of(mock, 0))
    assert body["tools"] == [definition.connections[0].wire_ref()]
    assert posted == [{"toolUseId": "tu_m", "result": "127.0.0.1 localhost"}]
    (conn,) = definition.connections
    # The connection gets the stream's call as one typed value, never a dict.
    assert conn.calls == [
        LocalToolCall(
            tool_use_id="tu_m",
            name="fs_read",
            args={"path": "/etc/hosts"},
            kind="mcp_local",
            mcp_server="fs",
            mcp_tool_name="fs_read",
            raw=call,
        )
    ]
    assert conn.closed.is_set()


def test_client_resolved_tool_closed_when_create_fails(
    client: Client, mock: responses.RequestsMock
) -> None:
    definition = _FakeMcpDefinition()
    mock.post(f"{ROOT}/agent-runs", status=500, json={"error": "internal"})
    with pytest.raises(ServerError):
        Agent(client, system_prompt="p", tools=[definition]).start("hi")
    assert definition.connections[0].closed.is_set()


def test_session_keeps_client_resolved_tools_until_it_ends(
    client: Client, mock: responses.RequestsMock
) -> None:
    definition = _FakeMcpDefinition()
    mock.post(f"{ROOT}/agent-sessions", json={"sessionId": "ses_t"}, status=201)
    mock.delete(f"{ROOT}/agent-sessions/ses_t", status=204)
    with client.sessions.create(system_prompt="p", tools=[definition]) as session:
        assert json_of(request_of(mock, 0))["tools"] == [definition.connections[0].wire_ref()]
        assert not definition.connections[0].closed.is_set()
        assert session.id == "ses_t"
    assert definition.connections[0].closed.is_set()
    assert calls(mock)[-1] == ("DELETE", f"{ROOT}/agent-sessions/ses_t")


# --------------------------------------------------------------------------- POST .../cancel


def test_client_cancel(client: Client, mock: responses.RequestsMock) -> None:
    mock.post(f"{ROOT}/agent-runs/run_1/cancel", json={"ok": True})
    client.runs.cancel("run_1")
    sent = request_of(mock, 0)
    assert (sent.method, sent.url) == ("POST", f"{ROOT}/agent-runs/run_1/cancel")
    assert_auth(sent)
    assert sent.body is None


def test_run_cancel_from_another_thread(client: Client, mock: responses.RequestsMock) -> None:
    pipe = _piped_run(mock, "run_1")

    def on_cancel(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        pipe.push(frame(2, "cancelled", {"reason": "user"}))
        pipe.finish()
        return 200, {}, "{}"

    mock.add_callback("POST", f"{ROOT}/agent-runs/run_1/cancel", callback=on_cancel)
    pipe.push(frame(1, "started"))
    with Agent(client, system_prompt="p").start("hi") as run:
        assert next(run).type == "started"
        worker = threading.Thread(target=run.cancel)
        worker.start()
        worker.join(5)
        assert not worker.is_alive()
        with pytest.raises(mantyx_sync.RunCancelledError):
            run.wait()
    assert [u for _, u in calls(mock)].count(f"{ROOT}/agent-runs/run_1/cancel") == 1


def test_leaving_the_block_early_cancels(client: Client, mock: responses.RequestsMock) -> None:
    pipe = _piped_run(mock, "run_1")
    mock.post(f"{ROOT}/agent-runs/run_1/cancel", json={"ok": True})
    pipe.push(frame(1, "assistant_delta", {"text": "x"}))
    with Agent(client, system_prompt="p").stream("hi") as run:
        for _ in run:
            break
    assert calls(mock)[-1] == ("POST", f"{ROOT}/agent-runs/run_1/cancel")
    assert_auth(request_of(mock, len(mock.calls) - 1))


# --------------------------------------------------------------------------- sessions


def test_create_session_full_body(client: Client, mock: responses.RequestsMock) -> None:
    mock.post(f"{ROOT}/agent-sessions", json={"sessionId": "ses_abc"}, status=201)
    session = client.sessions.create(**FULL_SPEC)
    assert session.id == "ses_abc"
    sent = request_of(mock, 0)
    assert (sent.method, sent.url) == ("POST", f"{ROOT}/agent-sessions")
    assert_auth(sent)
    assert json_of(sent) == FULL_SPEC_WIRE


def test_agent_session_uses_agent_spec_with_overrides(
    client: Client, mock: responses.RequestsMock
) -> None:
    mock.post(f"{ROOT}/agent-sessions", json={"id": "ses_2"}, status=201)
    mock.delete(f"{ROOT}/agent-sessions/ses_2", status=204)
    agent = Agent(client, system_prompt="p", model_id="m1", tools=[PluginTool("web_search")])
    with agent.session(model_id="m2", loop_detection=False, tool_budgets={}) as chat:
        assert chat.id == "ses_2"
    assert json_of(request_of(mock, 0)) == {
        "systemPrompt": "p",
        "modelId": "m2",
        "tools": [{"kind": "mantyx_plugin", "name": "web_search"}],
        "loopDetection": False,
        "toolBudgets": {},
    }
    assert calls(mock)[1] == ("DELETE", f"{ROOT}/agent-sessions/ses_2")


@pytest.mark.parametrize(("loop_arg", "loop_wire"), LOOP_DETECTION_CASES)
@pytest.mark.parametrize(("budget_arg", "budget_wire"), TOOL_BUDGET_CASES)
def test_create_session_guard_semantics(
    client: Client,
    mock: responses.RequestsMock,
    loop_arg: Any,
    loop_wire: Any,
    budget_arg: Any,
    budget_wire: Any,
) -> None:
    mock.post(f"{ROOT}/agent-sessions", json={"sessionId": "ses_g"}, status=201)
    client.sessions.create(system_prompt="p", **guard_kwargs(loop_arg, budget_arg))
    assert_guards(json_of(request_of(mock, 0)), loop_wire, budget_wire)


def test_get_session(client: Client, mock: responses.RequestsMock) -> None:
    body = {
        "sessionId": "ses_abc",
        "status": "active",
        "metadata": {"env": "prod"},
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        "spec": {"systemPrompt": "p"},
    }
    mock.get(f"{ROOT}/agent-sessions/ses_abc", json=body)
    info = client.sessions.get("ses_abc")
    assert isinstance(info, SessionInfo)
    assert (info.id, info.status, info.metadata) == ("ses_abc", "active", {"env": "prod"})
    assert info.messages == (Message("user", "hi"), Message("assistant", "yo"))
    assert info.spec == {"systemPrompt": "p"}
    sent = request_of(mock, 0)
    assert (sent.method, sent.url) == ("GET", f"{ROOT}/agent-sessions/ses_abc")
    assert_auth(sent)
    assert sent.body is None


def test_session_info_history_and_resume(client: Client, mock: responses.RequestsMock) -> None:
    body = {"sessionId": "ses_abc", "messages": [{"role": "user", "content": "hi"}]}
    mock.get(f"{ROOT}/agent-sessions/ses_abc", json=body)
    session = client.sessions.resume("ses_abc", tools=[add])
    assert session.id == "ses_abc"
    assert session.info().status is None
    assert session.history() == [Message("user", "hi")]
    assert calls(mock) == [("GET", f"{ROOT}/agent-sessions/ses_abc")] * 3


def test_resume_unknown_session_is_not_found(client: Client, mock: responses.RequestsMock) -> None:
    mock.get(f"{ROOT}/agent-sessions/ses_x", status=404, json={"error": "not_found"})
    with pytest.raises(NotFoundError):
        client.sessions.resume("ses_x")


def _session(client: Client, mock: responses.RequestsMock) -> mantyx_sync.Session:
    mock.post(f"{ROOT}/agent-sessions", json={"sessionId": "ses_abc"}, status=201)
    return client.sessions.create(system_prompt="p", tools=[add])


def test_session_message_plain_body(client: Client, mock: responses.RequestsMock) -> None:
    session = _session(client, mock)
    mock.post(f"{ROOT}/agent-sessions/ses_abc/messages", json={"runId": "run_s1"}, status=202)
    mock.get(
        f"{ROOT}/agent-runs/run_s1/stream",
        body=result_frame(1, "Ada", **USAGE),
        content_type="text/event-stream",
    )
    result = session.run("What is my name?")
    assert (result.run_id, result.session_id, result.text) == ("run_s1", "ses_abc", "Ada")
    assert result.turns == 2
    sent = request_of(mock, 1)
    assert (sent.method, sent.url) == ("POST", f"{ROOT}/agent-sessions/ses_abc/messages")
    assert_auth(sent)
    assert json_of(sent) == {"prompt": "What is my name?"}
    assert calls(mock)[2] == ("GET", f"{ROOT}/agent-runs/run_s1/stream")


def test_session_message_every_override(client: Client, mock: responses.RequestsMock) -> None:
    session = _session(client, mock)
    mock.post(f"{ROOT}/agent-sessions/ses_abc/messages", json={"runId": "run_s2"}, status=202)
    mock.post(f"{ROOT}/agent-runs/run_s2/cancel", status=204)
    with session.start(messages=[{"role": "user", "content": "again"}], **EVERY_OVERRIDE):
        pass
    assert json_of(request_of(mock, 1)) == {
        "messages": [{"role": "user", "content": "again"}],
        **EVERY_OVERRIDE_WIRE,
    }


def test_session_message_empty_tools_override_is_sent(
    client: Client, mock: responses.RequestsMock
) -> None:
    session = _session(client, mock)
    mock.post(f"{ROOT}/agent-sessions/ses_abc/messages", json={"runId": "run_s3"}, status=202)
    mock.post(f"{ROOT}/agent-runs/run_s3/cancel", status=204)
    with session.start("no tools this time", tools=[]):
        pass
    assert json_of(request_of(mock, 1)) == {"prompt": "no tools this time", "tools": []}


@pytest.mark.parametrize(("loop_arg", "loop_wire"), LOOP_DETECTION_CASES)
@pytest.mark.parametrize(("budget_arg", "budget_wire"), TOOL_BUDGET_CASES)
def test_session_message_guard_semantics(
    client: Client,
    mock: responses.RequestsMock,
    loop_arg: Any,
    loop_wire: Any,
    budget_arg: Any,
    budget_wire: Any,
) -> None:
    session = _session(client, mock)
    mock.post(f"{ROOT}/agent-sessions/ses_abc/messages", json={"runId": "run_g"}, status=202)
    mock.post(f"{ROOT}/agent-runs/run_g/cancel", status=204)
    with session.start("hi", **guard_kwargs(loop_arg, budget_arg)):
        pass
    body = json_of(request_of(mock, 1))
    assert_guards(body, loop_wire, budget_wire)
    assert set(body) <= {"prompt", "loopDetection", "toolBudgets"}


def test_end_session_routes(client: Client, mock: responses.RequestsMock) -> None:
    mock.delete(f"{ROOT}/agent-sessions/ses_abc", status=204)
    client.sessions.end("ses_abc")
    sent = request_of(mock, 0)
    assert (sent.method, sent.url) == ("DELETE", f"{ROOT}/agent-sessions/ses_abc")
    assert_auth(sent)
    assert sent.body is None


def test_session_end_is_idempotent_and_with_block_ends(
    client: Client, mock: responses.RequestsMock
) -> None:
    mock.delete(f"{ROOT}/agent-sessions/ses_abc", json={"ok": True})
    with _session(client, mock) as session:
        session.end()
    session.end()
    assert [c for c in calls(mock) if c[0] == "DELETE"] == [
        ("DELETE", f"{ROOT}/agent-sessions/ses_abc")
    ]


# --------------------------------------------------------------------------- error mapping


def _no_retry_client() -> Client:
    return Client(KEY, workspace="acme", base_url=BASE, max_retries=0)


def test_invalid_model_with_candidates(client: Client, mock: responses.RequestsMock) -> None:
    mock.post(
        f"{ROOT}/agent-runs",
        status=400,
        json={
            "error": "invalid_model",
            "message": "Model 'gpt' is ambiguous",
            "candidates": ["openai/gpt-5.5", "provider:cm6def456"],
        },
    )
    with pytest.raises(InvalidRequestError) as info:
        Agent(client, system_prompt="p", model_id="gpt").start("hi")
    err = info.value
    assert (err.status, err.code, err.message) == (400, "invalid_model", "Model 'gpt' is ambiguous")
    assert err.candidates == ["openai/gpt-5.5", "provider:cm6def456"]
    assert "openai/gpt-5.5" in str(err)
    assert len(mock.calls) == 1


def test_401_from_models(waits: list[float], mock: responses.RequestsMock) -> None:
    mock.get(f"{ROOT}/models", status=401, json={"error": "unauthorized", "message": "bad key"})
    with pytest.raises(AuthError) as info:
        _no_retry_client().models.list()
    assert (info.value.status, info.value.code) == (401, "unauthorized")
    assert KEY not in str(info.value)


@pytest.mark.parametrize("required", ["runs:write", ["runs:write", "sessions:write"]])
def test_403_insufficient_scope(
    client: Client, mock: responses.RequestsMock, required: str | list[str]
) -> None:
    mock.post(
        f"{ROOT}/agent-sessions",
        status=403,
        json={"error": "insufficient_scope", "required": required},
        headers={"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="runs:write"'},
    )
    with pytest.raises(PermissionDeniedError) as info:
        client.sessions.create(system_prompt="p")
    expected = [required] if isinstance(required, str) else required
    assert info.value.required_scopes == expected
    assert info.value.code == "insufficient_scope"
    assert "runs:write" in str(info.value)


def test_404_with_hint(client: Client, mock: responses.RequestsMock) -> None:
    mock.get(
        f"{ROOT}/agent-runs/run_1",
        status=404,
        json={"error": "not_found", "message": "Unknown workspace", "hint": "acme-prod"},
    )
    with pytest.raises(NotFoundError) as info:
        client.runs.get("run_1")
    assert info.value.hint == "acme-prod"
    assert "acme-prod" in str(info.value)
    assert len(mock.calls) == 1


def test_409_conflict(client: Client, mock: responses.RequestsMock) -> None:
    session = _session(client, mock)
    mock.post(
        f"{ROOT}/agent-sessions/ses_abc/messages",
        status=409,
        json={"error": "session_busy", "message": "a run is in flight"},
    )
    with pytest.raises(ConflictError) as info:
        session.start("hi")
    assert (info.value.status, info.value.code) == (409, "session_busy")
    assert len(mock.calls) == 2


def test_429_retry_after(waits: list[float], mock: responses.RequestsMock) -> None:
    mock.get(
        f"{ROOT}/agent-sessions/s",
        status=429,
        json={"error": "rate_limited"},
        headers={"Retry-After": "7"},
    )
    with pytest.raises(RateLimitError) as info:
        _no_retry_client().sessions.get("s")
    assert info.value.retry_after == 7.0
    assert waits == []


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_5xx_is_server_error(waits: list[float], mock: responses.RequestsMock, status: int) -> None:
    mock.get(f"{ROOT}/models", status=status, body="<html>oops</html>")
    with pytest.raises(ServerError) as info:
        _no_retry_client().models.list()
    assert info.value.status == status


# --------------------------------------------------------------------------- retries

REFUSED = requests.exceptions.ConnectionError(ConnectionRefusedError(111, "Connection refused"))


def _transient() -> list[tuple[str, Any]]:
    return [
        ("500", {"status": 500, "json": {"error": "internal"}}),
        ("502", {"status": 502, "body": "bad gateway"}),
        ("503", {"status": 503, "json": {"error": "unavailable"}}),
        (
            "429",
            {"status": 429, "json": {"error": "rate_limited"}, "headers": {"Retry-After": "2"}},
        ),
        ("refused", {"body": REFUSED}),
        ("dropped", {"body": requests.exceptions.ConnectionError("Connection reset by peer")}),
        ("timeout", {"body": requests.exceptions.ReadTimeout("read timed out")}),
    ]


SAFE_CALLS: list[tuple[str, str, str, Callable[[Client], Any]]] = [
    ("models", "GET", "/models", lambda c: c.models.list()),
    ("get_run", "GET", "/agent-runs/r1", lambda c: c.runs.get("r1")),
    ("get_session", "GET", "/agent-sessions/s1", lambda c: c.sessions.get("s1")),
    ("cancel", "POST", "/agent-runs/r1/cancel", lambda c: c.runs.cancel("r1")),
    ("end_session", "DELETE", "/agent-sessions/s1", lambda c: c.sessions.end("s1")),
]
SAFE_OK: dict[str, dict[str, Any]] = {
    "models": {"json": {"models": []}},
    "get_run": {"json": {"id": "r1"}},
    "get_session": {"json": {"sessionId": "s1"}},
    "cancel": {"status": 204},
    "end_session": {"status": 204},
}


@pytest.mark.parametrize(("failure", "kwargs"), _transient(), ids=[t[0] for t in _transient()])
@pytest.mark.parametrize(
    ("name", "method", "path", "call"), SAFE_CALLS, ids=[s[0] for s in SAFE_CALLS]
)
def test_safe_requests_are_retried(
    client: Client,
    mock: responses.RequestsMock,
    waits: list[float],
    failure: str,
    kwargs: dict[str, Any],
    name: str,
    method: str,
    path: str,
    call: Callable[[Client], Any],
) -> None:
    mock.add(method, f"{ROOT}{path}", **kwargs)
    mock.add(method, f"{ROOT}{path}", **SAFE_OK[name])
    call(client)
    assert calls(mock) == [(method, f"{ROOT}{path}")] * 2
    assert len(waits) == 1
    if failure == "429":
        assert waits == [2.0]


@pytest.mark.parametrize(
    ("name", "method", "path", "call"), SAFE_CALLS, ids=[s[0] for s in SAFE_CALLS]
)
def test_client_errors_are_not_retried(
    client: Client,
    mock: responses.RequestsMock,
    waits: list[float],
    name: str,
    method: str,
    path: str,
    call: Callable[[Client], Any],
) -> None:
    mock.add(method, f"{ROOT}{path}", status=400, json={"error": "invalid_request"})
    with pytest.raises(InvalidRequestError):
        call(client)
    assert len(mock.calls) == 1
    assert waits == []


def test_max_retries_bounds_safe_requests(waits: list[float], mock: responses.RequestsMock) -> None:
    mock.get(f"{ROOT}/models", status=500, json={"error": "internal"})
    with pytest.raises(ServerError):
        Client(KEY, workspace="acme", base_url=BASE, max_retries=2).models.list()
    assert len(mock.calls) == 3
    assert len(waits) == 2
    mock.calls.reset()
    with pytest.raises(ServerError):
        _no_retry_client().models.list()
    assert len(mock.calls) == 1


CREATE_CALLS: list[tuple[str, str, str]] = [
    ("agent-runs", "/agent-runs", "runId"),
    ("agent-sessions", "/agent-sessions", "sessionId"),
    ("messages", "/agent-sessions/ses_abc/messages", "runId"),
]


def _create(client: Client, mock: responses.RequestsMock, which: str) -> Any:
    if which == "agent-runs":
        return Agent(client, system_prompt="p").start("hi")
    if which == "agent-sessions":
        return client.sessions.create(system_prompt="p")
    session = _session(client, mock)
    mock.calls.reset()
    return session.start("hi")


@pytest.mark.parametrize(
    ("failure", "kwargs", "error"),
    [
        ("500", {"status": 500, "json": {"error": "internal"}}, ServerError),
        ("502", {"status": 502, "body": "bad gateway"}, ServerError),
        ("504", {"status": 504, "body": "gateway timeout"}, ServerError),
        (
            "timeout",
            {"body": requests.exceptions.ReadTimeout("read timed out")},
            RequestTimeoutError,
        ),
        (
            "dropped",
            {"body": requests.exceptions.ConnectionError("Connection reset by peer")},
            APIConnectionError,
        ),
    ],
)
@pytest.mark.parametrize(
    ("which", "path", "id_key"), CREATE_CALLS, ids=[c[0] for c in CREATE_CALLS]
)
def test_creates_are_not_retried_when_the_server_may_have_acted(
    client: Client,
    mock: responses.RequestsMock,
    waits: list[float],
    failure: str,
    kwargs: dict[str, Any],
    error: type[Exception],
    which: str,
    path: str,
    id_key: str,
) -> None:
    mock.add("POST", f"{ROOT}{path}", **kwargs)
    with pytest.raises(error) as info:
        _create(client, mock, which)
    assert not isinstance(info.value, ConnectError)
    assert calls(mock) == [("POST", f"{ROOT}{path}")]
    assert waits == []


@pytest.mark.parametrize(
    ("failure", "kwargs"),
    [
        ("503", {"status": 503, "json": {"error": "unavailable"}}),
        (
            "429",
            {"status": 429, "json": {"error": "rate_limited"}, "headers": {"Retry-After": "3"}},
        ),
        ("refused", {"body": REFUSED}),
    ],
)
@pytest.mark.parametrize(
    ("which", "path", "id_key"), CREATE_CALLS, ids=[c[0] for c in CREATE_CALLS]
)
def test_creates_are_retried_when_the_server_cannot_have_acted(
    client: Client,
    mock: responses.RequestsMock,
    waits: list[float],
    failure: str,
    kwargs: dict[str, Any],
    which: str,
    path: str,
    id_key: str,
) -> None:
    mock.add("POST", f"{ROOT}{path}", **kwargs)
    mock.add("POST", f"{ROOT}{path}", json={id_key: "new_1"}, status=202)
    mock.post(f"{ROOT}/agent-runs/new_1/cancel", status=204)
    created = _create(client, mock, which)
    assert created.id == "new_1"
    if hasattr(created, "close"):
        created.close()
    posts = [c for c in calls(mock) if c == ("POST", f"{ROOT}{path}")]
    assert len(posts) == 2
    assert len(waits) == 1
    if failure == "429":
        assert waits == [3.0]


def test_create_gives_up_after_its_attempt_budget(
    client: Client, mock: responses.RequestsMock, waits: list[float]
) -> None:
    mock.post(f"{ROOT}/agent-runs", status=503, json={"error": "unavailable"})
    with pytest.raises(ServerError):
        Agent(client, system_prompt="p").start("hi")
    assert len(mock.calls) == retry_module.CREATE_POLICY.attempts
    assert len(waits) == retry_module.CREATE_POLICY.attempts - 1


def test_run_cancel_and_session_calls_are_retried(
    client: Client, mock: responses.RequestsMock, waits: list[float]
) -> None:
    session = _session(client, mock)
    mock.get(f"{ROOT}/agent-sessions/ses_abc", status=502, body="bad gateway")
    mock.get(f"{ROOT}/agent-sessions/ses_abc", json={"sessionId": "ses_abc"})
    mock.delete(f"{ROOT}/agent-sessions/ses_abc", status=503, json={})
    mock.delete(f"{ROOT}/agent-sessions/ses_abc", status=204)
    assert session.info().id == "ses_abc"
    session.end()
    methods = [m for m, _ in calls(mock)]
    assert methods == ["POST", "GET", "GET", "DELETE", "DELETE"]
    assert len(waits) == 2


def test_session_calls_honour_client_max_retries(
    waits: list[float], mock: responses.RequestsMock
) -> None:
    no_retry = _no_retry_client()
    mock.post(f"{ROOT}/agent-sessions", json={"sessionId": "ses_abc"}, status=201)
    mock.delete(f"{ROOT}/agent-sessions/ses_abc", status=500, json={"error": "internal"})
    session = no_retry.sessions.create(system_prompt="p")
    with pytest.raises(ServerError):
        session.end()
    assert [m for m, _ in calls(mock)].count("DELETE") == 1


def test_create_honours_client_max_retries(
    mock: responses.RequestsMock, waits: list[float]
) -> None:
    mock.post(f"{ROOT}/agent-runs", status=503, json={"error": "unavailable"})
    no_retry = _no_retry_client()
    with pytest.raises(ServerError):
        Agent(no_retry, system_prompt="p").start("hi")
    assert len(mock.calls) == 1
    assert waits == []
