"""OpenTelemetry tracing of runs and local tool calls, on the GenAI semantic
conventions: the span tree across pool threads, exact attributes, token counts,
failures, content capture (off by default), trace propagation, metrics, and no
import of OpenTelemetry when nobody asked for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tool_support import final_with_results

import mantyx_sync
from mantyx_sync.testing import Fail, LocalMantyx, Supervise, ToolCall, Turn, WSGITransport

otel_sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

SYSTEM = "You are a test agent."
CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


class Recorded:
    """A transport that remembers each request it carries."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests: list[Any] = []

    def send(self, request: Any) -> Any:
        self.requests.append(request)
        return self.inner.send(request)

    def stream(self, request: Any) -> Any:
        self.requests.append(request)
        return self.inner.stream(request)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def traced(emulator: LocalMantyx, provider: TracerProvider) -> Iterator[mantyx_sync.Client]:
    with emulator.client(in_memory=True, tracer_provider=provider) as client:
        yield client


@pytest.fixture(autouse=True)
def _no_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CAPTURE, raising=False)


def _spans(exporter: InMemorySpanExporter, name_start: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith(name_start)]


def _two_tools(threads: list[str], barrier: threading.Barrier) -> list[Any]:
    @mantyx_sync.local_tool(read_only=True)
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        threads.append(threading.current_thread().name)
        barrier.wait()  # both calls are running at once, on two pool threads
        return f"value of {key}"

    @mantyx_sync.local_tool(read_only=True)
    def count(text: str) -> int:
        """Count words.

        Args:
            text: The text.
        """
        threads.append(threading.current_thread().name)
        barrier.wait()
        return len(text.split())

    return [lookup, count]


def test_a_run_with_two_parallel_tool_calls_is_one_span_with_two_children(
    emulator: LocalMantyx, traced: mantyx_sync.Client, exporter: InMemorySpanExporter
) -> None:
    threads: list[str] = []
    tools = _two_tools(threads, threading.Barrier(2, timeout=10))
    emulator.set_model(
        [
            Turn(tool_calls=[ToolCall("lookup", {"key": "k"}), ToolCall("count", {"text": "a b"})]),
            Turn(final_with_results),
        ]
    )
    agent = mantyx_sync.Agent(
        traced, system_prompt=SYSTEM, tools=tools, name="researcher", model_id="claude-sonnet-4-5"
    )
    result = agent.run("Look it up")

    [run_span] = _spans(exporter, "invoke_agent")
    tool_spans = sorted(_spans(exporter, "execute_tool"), key=lambda s: s.name)
    assert run_span.name == "invoke_agent researcher"
    assert run_span.kind is SpanKind.CLIENT
    assert run_span.status.status_code is StatusCode.UNSET
    assert run_span.parent is None
    assert dict(run_span.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "mantyx",
        "gen_ai.agent.name": "researcher",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "server.address": "127.0.0.1",
        "server.port": 80,
        "mantyx.run.id": result.run_id,
        "gen_ai.usage.input_tokens": result.tokens.input_tokens,  # type: ignore[union-attr]
        "gen_ai.usage.output_tokens": result.tokens.output_tokens,  # type: ignore[union-attr]
    }
    assert result.tokens is not None and result.tokens.input_tokens > 0

    assert [s.name for s in tool_spans] == ["execute_tool count", "execute_tool lookup"]
    calls = {
        e.data["name"]: e.data["toolUseId"] for e in result.events if e.type == "local_tool_call"
    }
    for span in tool_spans:
        name = span.name.removeprefix("execute_tool ")
        assert span.kind is SpanKind.INTERNAL
        assert span.parent is not None
        assert span.parent.span_id == run_span.context.span_id
        assert span.context.trace_id == run_span.context.trace_id
        assert dict(span.attributes or {}) == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.provider.name": "mantyx",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": calls[name],
            "gen_ai.tool.type": "function",
        }
        # Each tool span lies within the run's span.
        assert run_span.start_time <= span.start_time <= span.end_time <= run_span.end_time
    assert len(set(threads)) == 2 and all(t.startswith("mantyx-tool") for t in threads)


def test_a_span_the_handler_opens_nests_under_its_tool_span(
    emulator: LocalMantyx,
    traced: mantyx_sync.Client,
    exporter: InMemorySpanExporter,
    provider: TracerProvider,
) -> None:
    tracer = provider.get_tracer("user-code")

    @mantyx_sync.local_tool(read_only=True)
    def fetch() -> str:
        """Fetch a thing."""
        with tracer.start_as_current_span("http GET"):
            return "fetched"

    emulator.set_model([Turn(tool_calls=[ToolCall("fetch", {})]), Turn(final_with_results)])
    mantyx_sync.Agent(traced, system_prompt=SYSTEM, tools=[fetch]).run("x")
    [inner] = _spans(exporter, "http GET")
    [tool_span] = _spans(exporter, "execute_tool")
    assert inner.parent is not None and inner.parent.span_id == tool_span.context.span_id


def test_a_span_around_the_run_is_its_parent_and_the_create_request_carries_traceparent(
    emulator: LocalMantyx, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    transport = Recorded(WSGITransport(emulator.app))
    emulator.set_model([Turn("hello")])
    client = emulator.client(in_memory=True, transport=transport, tracer_provider=provider)
    with client, provider.get_tracer("app").start_as_current_span("handle request") as outer:
        mantyx_sync.Agent(client, system_prompt=SYSTEM).run("x")
    [run_span] = _spans(exporter, "invoke_agent")
    assert run_span.name == "invoke_agent"  # no agent name
    assert run_span.parent is not None
    assert run_span.parent.span_id == outer.get_span_context().span_id
    [create] = [
        r for r in transport.requests if r.method == "POST" and r.url.endswith("/agent-runs")
    ]
    context = run_span.context
    version, trace_id, span_id, _flags = create.headers["traceparent"].split("-")
    assert (version, trace_id, span_id) == (
        "00",
        f"{context.trace_id:032x}",
        f"{context.span_id:016x}",
    )
    others = [r for r in transport.requests if r is not create]
    assert others and not any("traceparent" in r.headers for r in others)


def test_a_session_run_names_its_conversation(
    emulator: LocalMantyx, traced: mantyx_sync.Client, exporter: InMemorySpanExporter
) -> None:
    emulator.set_model([Turn("one"), Turn("two")])
    with mantyx_sync.Agent(traced, system_prompt=SYSTEM).session() as chat:
        chat.run("first")
        chat.run("second")
        session_id = chat.id
    spans = _spans(exporter, "invoke_agent")
    assert len(spans) == 2
    assert all((s.attributes or {})["gen_ai.conversation.id"] == session_id for s in spans)


def test_server_side_work_is_span_events_not_spans(
    emulator: LocalMantyx, traced: mantyx_sync.Client, exporter: InMemorySpanExporter
) -> None:
    emulator.set_model(
        [Supervise("on_track"), Turn(tool_calls=[ToolCall("web_search", {"q": "x"})]), Turn("ok")]
    )
    mantyx_sync.Agent(traced, system_prompt=SYSTEM).run("x")
    assert [s.name for s in exporter.get_finished_spans()] == ["invoke_agent"]
    [run_span] = exporter.get_finished_spans()
    names = [event.name for event in run_span.events]
    assert "mantyx.supervisor" in names


def test_a_failed_run_is_an_error_span_with_the_runs_code(
    emulator: LocalMantyx, traced: mantyx_sync.Client, exporter: InMemorySpanExporter
) -> None:
    emulator.set_model([Fail("the model is overloaded", code="overloaded")])
    with pytest.raises(mantyx_sync.RunError):
        mantyx_sync.Agent(traced, system_prompt=SYSTEM).run("x")
    [run_span] = _spans(exporter, "invoke_agent")
    assert run_span.status.status_code is StatusCode.ERROR
    assert (run_span.attributes or {})["error.type"] == "overloaded"


@pytest.fixture
def stuck() -> Iterator[Any]:
    """A tool that answers only once the test is over: its run waits on it."""
    release = threading.Event()

    @mantyx_sync.local_tool(read_only=True)
    def stuck() -> str:
        """Waits to be released."""
        release.wait(10)
        return "late"

    yield stuck
    release.set()


def test_a_cancelled_run_and_a_closed_stream_are_cancelled_spans(
    emulator: LocalMantyx, traced: mantyx_sync.Client, exporter: InMemorySpanExporter, stuck: Any
) -> None:
    emulator.set_model([Turn(tool_calls=[ToolCall("stuck", {})]), Turn("done")])
    agent = mantyx_sync.Agent(traced, system_prompt=SYSTEM, tools=[stuck])
    with agent.stream("x") as run:
        next(iter(run))  # leave early: the run is cancelled
    with pytest.raises(mantyx_sync.RunCancelledError), agent.start("y") as run:
        for event in run:
            if event.type == "local_tool_call":
                run.cancel()
    spans = _spans(exporter, "invoke_agent")
    assert len(spans) == 2
    for span in spans:
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "cancelled"


def test_a_run_out_of_time_is_a_timeout_span(
    mantyx_server: LocalMantyx,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
    stuck: Any,
) -> None:
    mantyx_server.set_model([Turn(tool_calls=[ToolCall("stuck", {})]), Turn("done")])
    with mantyx_server.client(tracer_provider=provider) as client:
        agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[stuck])
        with pytest.raises(mantyx_sync.RunTimeoutError):
            agent.run("x", run_timeout=1)
    [run_span] = _spans(exporter, "invoke_agent")
    assert run_span.status.status_code is StatusCode.ERROR
    assert (run_span.attributes or {})["error.type"] == "timeout"


def test_a_handler_that_raises_is_an_error_tool_span(
    emulator: LocalMantyx, traced: mantyx_sync.Client, exporter: InMemorySpanExporter
) -> None:
    @mantyx_sync.local_tool(read_only=True)
    def broken() -> str:
        """Always fails."""
        raise LookupError("no such row")

    emulator.set_model([Turn(tool_calls=[ToolCall("broken", {})]), Turn(final_with_results)])
    mantyx_sync.Agent(traced, system_prompt=SYSTEM, tools=[broken]).run("x")
    [tool_span] = _spans(exporter, "execute_tool")
    assert tool_span.status.status_code is StatusCode.ERROR
    assert (tool_span.attributes or {})["error.type"] == "LookupError"
    [run_span] = _spans(exporter, "invoke_agent")
    assert run_span.status.status_code is StatusCode.UNSET  # the run itself succeeded


def _content_run(emulator: LocalMantyx, client: mantyx_sync.Client) -> mantyx_sync.RunResult:
    @mantyx_sync.local_tool(read_only=True)
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        return f"secret-ish value for {key}: mantyx_abcdefghijkl"

    emulator.set_model([Turn(tool_calls=[ToolCall("lookup", {"key": "k1"})]), Turn("the answer")])
    agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, tools=[lookup])
    return agent.run("What is k1? My key is mantyx_zyxwvutsrqpo")


def _all_text(exporter: InMemorySpanExporter) -> str:
    spans = exporter.get_finished_spans()
    return json.dumps(
        [
            [dict(s.attributes or {}), [(e.name, dict(e.attributes or {})) for e in s.events]]
            for s in spans
        ]
    )


def test_content_is_absent_by_default(
    emulator: LocalMantyx, traced: mantyx_sync.Client, exporter: InMemorySpanExporter
) -> None:
    _content_run(emulator, traced)
    text = _all_text(exporter)
    for content in ("What is k1", "the answer", "k1", "secret-ish", "mantyx_"):
        assert content not in text


def test_content_when_switched_on_is_there_with_secrets_masked(
    emulator: LocalMantyx,
    traced: mantyx_sync.Client,
    exporter: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CAPTURE, "true")
    _content_run(emulator, traced)
    [run_span] = _spans(exporter, "invoke_agent")
    [tool_span] = _spans(exporter, "execute_tool")
    attributes = dict(run_span.attributes or {})
    assert json.loads(str(attributes["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": "What is k1? My key is mantyx_***"}]}
    ]
    assert json.loads(str(attributes["gen_ai.output.messages"])) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "the answer"}],
            "finish_reason": "stop",
        }
    ]
    tool = dict(tool_span.attributes or {})
    assert json.loads(str(tool["gen_ai.tool.call.arguments"])) == {"key": "k1"}
    assert tool["gen_ai.tool.call.result"] == "secret-ish value for k1: mantyx_***"
    assert "abcdefghijkl" not in _all_text(exporter)
    assert "zyxwvutsrqpo" not in _all_text(exporter)


def test_metrics_through_meter_provider(emulator: LocalMantyx) -> None:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    emulator.set_model([Turn("hello")])
    with emulator.client(in_memory=True, meter_provider=meters) as client:
        agent = mantyx_sync.Agent(client, system_prompt=SYSTEM, model_id="claude-sonnet-4-5")
        result = agent.run("x")
    data = reader.get_metrics_data()
    assert data is not None
    metrics = {
        metric.name: metric
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    [duration] = metrics["gen_ai.client.operation.duration"].data.data_points
    assert metrics["gen_ai.client.operation.duration"].unit == "s"
    assert duration.count == 1 and duration.sum > 0
    assert dict(duration.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "mantyx",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "server.address": "127.0.0.1",
        "server.port": 80,
    }
    usage = {
        (p.attributes or {})["gen_ai.token.type"]: p.sum
        for p in metrics["gen_ai.client.token.usage"].data.data_points
    }
    assert result.tokens is not None
    assert usage == {"input": result.tokens.input_tokens, "output": result.tokens.output_tokens}
    meters.shutdown()


def test_the_global_provider_is_used_once_the_application_set_it(
    emulator: LocalMantyx,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    emulator.set_model([Turn("hello")])
    with emulator.client(in_memory=True) as client:
        mantyx_sync.Agent(client, system_prompt=SYSTEM).run("x")
    assert [s.name for s in exporter.get_finished_spans()] == ["invoke_agent"]


def test_a_provider_that_is_not_one_is_refused_naming_the_argument(emulator: LocalMantyx) -> None:
    with pytest.raises(mantyx_sync.ArgumentTypeError, match="tracer_provider") as info:
        emulator.client(in_memory=True, tracer_provider="jaeger")
    assert info.value.path == "tracer_provider"


_NO_OTEL = textwrap.dedent(
    """
    import sys

    class Refuse:
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ImportError("opentelemetry is not installed here")

    if sys.argv[1] == "absent":
        sys.meta_path.insert(0, Refuse())

    import mantyx_sync
    from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

    @mantyx_sync.local_tool(read_only=True)
    def echo(text: str) -> str:
        '''Echo.

        Args:
            text: The text.
        '''
        return text

    emulator = LocalMantyx()
    emulator.set_model([Turn(tool_calls=[ToolCall("echo", {"text": "hi"})]), Turn("done")])
    with emulator.client(in_memory=True) as client:
        result = mantyx_sync.Agent(client, system_prompt="s", tools=[echo]).run("x")
    emulator.stop()
    assert result.text == "done", result.text
    print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
    """
)


@pytest.mark.parametrize("otel", ["absent", "installed"])
def test_nothing_imports_opentelemetry_unless_asked(otel: str, tmp_path: Path) -> None:
    # Without the extra a run works; with it installed but never imported by
    # the application, the SDK does not import it either.
    script = tmp_path / "run.py"
    script.write_text(_NO_OTEL, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MANTYX_", "OTEL_"))}
    done = subprocess.run(
        [sys.executable, str(script), otel],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
