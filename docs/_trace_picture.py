"""The tracing page's picture: a real trace, drawn as each build starts.

A run of an agent whose model calls two local tools at once goes through the
SDK against an in-memory emulator with OpenTelemetry's SDK collecting the spans
in memory; they are drawn as a waterfall (one bar per span, on a shared time
axis), with the attributes each carries, into an SVG the page shows.
"""

from __future__ import annotations

import html
import threading
import time
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import mantyx_sync
from mantyx_sync.testing import LocalMantyx

__all__ = ["write"]

_WIDTH, _LABEL, _ROW = 900, 250, 46
_SHOWN = (
    "gen_ai.agent.name",
    "gen_ai.request.model",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.type",
)


def _spans() -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    both = threading.Barrier(2, timeout=10)

    @mantyx_sync.local_tool(read_only=True)
    def weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: The city.
        """
        both.wait()
        time.sleep(0.25)  # the tool's own work, so that its bar can be seen
        return f"sunny in {city}"

    @mantyx_sync.local_tool(read_only=True)
    def local_time(city: str) -> str:
        """The local time in a city.

        Args:
            city: The city.
        """
        both.wait()
        time.sleep(0.15)
        return f"09:00 in {city}"

    emulator = LocalMantyx()
    try:
        with emulator.client(in_memory=True, tracer_provider=provider) as client:
            agent = mantyx_sync.Agent(
                client,
                system_prompt="You are a concierge.",
                tools=[weather, local_time],
                name="concierge",
                model_id="claude-sonnet-4-5",
            )
            agent.run("Weather and time in Lisbon?")
    finally:
        emulator.stop()
        provider.shutdown()
    return sorted(exporter.get_finished_spans(), key=lambda s: (s.start_time or 0, s.name))


def _draw(spans: list[ReadableSpan]) -> str:
    start = min(s.start_time or 0 for s in spans)
    end = max(s.end_time or 0 for s in spans)
    scale = (_WIDTH - _LABEL - 20) / max(end - start, 1)
    rows = [(span, _notes(span)) for span in spans]
    height = 40 + sum(_ROW + 14 * len(notes) for _, notes in rows) + 30
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}" '
        'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{_WIDTH}" height="{height}" fill="white"/>',
        '<text x="10" y="22" font-size="14" font-weight="bold">'
        f"trace {spans[0].context.trace_id:032x}</text>",
    ]
    y = 40
    for span, notes in rows:
        child = span.parent is not None
        x = _LABEL + ((span.start_time or 0) - start) * scale
        w = max(((span.end_time or 0) - (span.start_time or 0)) * scale, 2)
        ms = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
        colour = "#5b8def" if not child else "#f0a030"
        indent = 26 if child else 10
        kind = str(span.kind).rsplit(".", 1)[-1]
        out += [
            f'<text x="{indent}" y="{y + 14}" font-weight="bold">{html.escape(span.name)}</text>',
            f'<text x="{indent}" y="{y + 30}" fill="#555">{kind}, {ms:,.0f} ms</text>',
            f'<rect x="{x:.1f}" y="{y + 4}" width="{w:.1f}" height="16" rx="3" fill="{colour}"/>',
        ]
        for n, note in enumerate(notes):
            out.append(
                f'<text x="{_LABEL}" y="{y + 36 + 14 * n}" fill="#333" font-size="11">'
                f"{html.escape(note)}</text>"
            )
        y += _ROW + 14 * len(notes)
    total = (end - start) / 1e6
    out.append(
        f'<text x="{_LABEL}" y="{height - 10}" fill="#777">0 ms</text>'
        f'<text x="{_WIDTH - 20}" y="{height - 10}" fill="#777" text-anchor="end">'
        f"{total:,.0f} ms</text></svg>"
    )
    return "\n".join(out)


def _notes(span: ReadableSpan) -> list[str]:
    """The span's attributes worth showing, and its events, in lines that fit."""
    shown = [f"{k}={_value(v)}" for k, v in (span.attributes or {}).items() if k in _SHOWN]
    lines: list[str] = []
    for item in shown:
        if lines and len(lines[-1]) + len(item) < 95:
            lines[-1] += ", " + item
        else:
            lines.append(item)
    if span.events:
        lines.append("events: " + ", ".join(event.name for event in span.events))
    return lines


def _value(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def write(path: Path) -> Path:
    """Draw a fresh trace into ``path`` and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_draw(_spans()), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write(Path(__file__).resolve().parent / "guide" / "_generated" / "trace.svg"))
