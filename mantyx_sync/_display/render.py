"""How a run looks in a notebook: HTML and Markdown built from its events.

Used by :meth:`RunResult._repr_html_` and the live :class:`~mantyx_sync.Run`'s
reprs, and by :func:`mantyx_sync.notebook.show`. Every piece of text from the
run (answer, tool arguments and results, errors) is HTML-escaped: a model
cannot inject markup into the page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import attrs

from ..events import ModelInfo, RunEvent, TokenUsage, outcome_of
from .steps import tool_step
from .text import one_line

__all__ = ["RunDisplay", "render_html", "render_markdown", "summary", "view_of"]

# Fenced blocks and inline code spans keep their text verbatim in Markdown.
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)


@attrs.frozen(kw_only=True)
class ToolLine:
    """One tool call and, once known, its outcome."""

    name: str
    args: Any
    done: bool = False
    ok: bool = True
    outcome: Any = None


@attrs.frozen(kw_only=True)
class RunDisplay:
    """What a run shows; ``status`` is ``running`` or how the run ended (its outcome's)."""

    run_id: str
    text: str
    tools: tuple[ToolLine, ...] = ()
    status: str = "running"
    error: str | None = None
    tokens: TokenUsage | None = None
    turns: int | None = None
    model: ModelInfo | None = None


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _tool_lines(events: Sequence[RunEvent]) -> tuple[ToolLine, ...]:
    lines: dict[str, ToolLine] = {}  # in call order
    for event in events:
        step = tool_step(event)
        if step is None:
            continue
        key = step.tool_use_id
        if not step.done and key not in lines:
            lines[key] = ToolLine(name=step.name or "?", args=step.args or {})
        elif step.done and key in lines:
            lines[key] = attrs.evolve(lines[key], done=True, ok=step.ok, outcome=step.outcome)
    return tuple(lines.values())


def _streamed_text(events: Sequence[RunEvent]) -> str:
    turns: list[str] = []
    current: list[str] = []
    for event in events:
        if event.type == "assistant_delta":
            current.append(event.text or "")
        elif event.type == "assistant_message":
            turns.append("".join(current) or event.text or "")
            current = []
    if current:
        turns.append("".join(current))
    return "\n\n".join(turn for turn in turns if turn)


def view_of(
    run_id: str,
    events: Sequence[RunEvent],
    *,
    final_text: str | None = None,
    status: str | None = None,
    tokens: TokenUsage | None = None,
    turns: int | None = None,
    model: ModelInfo | None = None,
) -> RunDisplay:
    """The display of a run from its events; ``final_text``, when known, replaces the text
    streamed so far, and ``status`` the one read from the terminal event."""
    outcome = outcome_of(events[-1]) if events else None
    text = final_text if final_text else _streamed_text(events)
    return RunDisplay(
        run_id=run_id,
        text=text,
        tools=_tool_lines(events),
        status=status or (outcome.status if outcome else "running"),
        error=outcome.message if outcome and outcome.status == "failed" else None,
        tokens=tokens,
        turns=turns,
        model=model,
    )


def summary(
    run_id: str, tokens: TokenUsage | None, turns: int | None, model: ModelInfo | None
) -> str:
    """``12 tokens (8 in, 4 out) · 2 turns · model m · run r``, with what is known."""
    parts = []
    if tokens is not None:
        parts.append(
            f"{tokens.total_tokens} tokens ({tokens.input_tokens} in, {tokens.output_tokens} out)"
        )
    if turns is not None:
        parts.append(f"{turns} turn{'' if turns == 1 else 's'}")
    if model is not None and model.id:
        parts.append(f"model {model.id}")
    parts.append(f"run {run_id}")
    return " · ".join(parts)


def _footer(view: RunDisplay) -> str:
    text = summary(view.run_id, view.tokens, view.turns, view.model)
    return text if view.status == "succeeded" else f"{view.status} · {text}"


def _mark(line: ToolLine) -> str:
    if not line.done:
        return "…"
    return "✓" if line.ok else "✗"


def _escape(text: str, quote: bool = True) -> str:
    # ``html`` loads its 2,000-entry entity table (~0.4 MiB) on import: only a
    # notebook that renders a result pays for it, never a plain script.
    import html

    return html.escape(text, quote=quote)


def _tool_html(line: ToolLine) -> str:
    e = _escape
    summary = f"{_mark(line)} {line.name}({one_line(line.args, 40)})"
    if line.done:
        summary += f" → {one_line(line.outcome)}"
    body = f"<pre>{e(_as_text(line.args))}</pre>"
    if line.done:
        body += f"<pre>{e(_as_text(line.outcome))}</pre>"
    return f"<details><summary><code>{e(summary)}</code></summary>{body}</details>"


def render_html(view: RunDisplay) -> str:
    """The view as one self-contained HTML fragment (every text escaped)."""
    e = _escape
    parts = ['<div class="mantyx-run">']
    if view.tools:
        parts.append('<div class="mantyx-tools">')
        parts.extend(_tool_html(line) for line in view.tools)
        parts.append("</div>")
    parts.append(f'<div class="mantyx-text" style="white-space: pre-wrap">{e(view.text)}</div>')
    if view.error:
        parts.append(f'<div class="mantyx-error" style="color: #b00">{e(view.error)}</div>')
    parts.append(
        f'<div class="mantyx-footer" style="opacity: 0.6"><small>{e(_footer(view))}</small></div>'
    )
    parts.append("</div>")
    return "".join(parts)


def _escape_markdown_html(text: str) -> str:
    # Markup from the model is neutralised; its Markdown (and code) stays.
    pieces = _CODE.split(text)
    return "".join(
        piece if index % 2 else _escape(piece, quote=False) for index, piece in enumerate(pieces)
    )


def render_markdown(view: RunDisplay) -> str:
    """The view as Markdown: the answer as Markdown, tool calls as ``<details>``."""
    parts = [_tool_html(line) for line in view.tools]
    parts.append(_escape_markdown_html(view.text))
    if view.error:
        parts.append(f"**{_escape(view.error, quote=False)}**")
    parts.append(f"<small>{_escape(_footer(view), quote=False)}</small>")
    return "\n\n".join(part for part in parts if part)
