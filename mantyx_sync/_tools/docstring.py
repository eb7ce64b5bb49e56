"""Docstring parsing for local tools: the description and per-parameter text, from
Google (``Args:``), NumPy (``Parameters`` + dashes) or reST (``:param x:``) style."""

from __future__ import annotations

import inspect
import re
from typing import Final

import attrs

__all__ = ["parse_docstring"]


@attrs.frozen
class Docstring:
    """``summary``: everything before the first section or field; ``params``: name → text."""

    summary: str
    params: dict[str, str] = attrs.field(factory=dict, hash=False)


_PARAM_SECTIONS: Final = frozenset(
    {
        "args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
        "other parameters", "attributes",
    }
)  # fmt: skip
_OTHER_SECTIONS: Final = frozenset(
    {
        "returns", "return", "raises", "yields", "yield", "examples", "example", "notes",
        "note", "see also", "warnings", "warning", "references", "todo", "methods", "warns",
    }
)  # fmt: skip
_ALL_SECTIONS: Final = _PARAM_SECTIONS | _OTHER_SECTIONS
_GOOGLE_HEADER_RE: Final = re.compile(r"^\s*([A-Za-z][A-Za-z ]*):\s*$")
_NUMPY_RULE_RE: Final = re.compile(r"^\s*-{3,}\s*$")
_REST_FIELD_RE: Final = re.compile(r"^\s*:([A-Za-z]+)((?:\s+[^:\s]+)*)\s*:(.*)$")
_GOOGLE_ITEM_RE: Final = re.compile(r"^\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:(.*)$")
_NUMPY_ITEM_RE: Final = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::(.*))?$")
_REST_PARAM_KINDS: Final = frozenset(
    {"param", "parameter", "arg", "argument", "key", "keyword", "ivar", "var", "cvar"}
)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _section_at(lines: list[str], i: int) -> tuple[str, str, int] | None:
    """``(name, style, first body line)`` when a section or field starts at line ``i``."""
    line = lines[i]
    stripped = line.strip().lower()
    if i + 1 < len(lines) and _NUMPY_RULE_RE.match(lines[i + 1]) and stripped in _ALL_SECTIONS:
        return stripped, "numpy", i + 2
    match = _GOOGLE_HEADER_RE.match(line)
    if match and match.group(1).strip().lower() in _ALL_SECTIONS:
        return match.group(1).strip().lower(), "google", i + 1
    if _REST_FIELD_RE.match(line):
        return "field", "rest", i
    return None


def _block(lines: list[str], start: int, header_indent: int, style: str) -> tuple[list[str], int]:
    """Lines of a Google/NumPy section body, and the index after it."""
    end = start
    while end < len(lines):
        line = lines[end]
        if line.strip():
            indent = _indent(line)
            # Google items are indented under the header; NumPy items align with it.
            if indent < header_indent or (style == "google" and indent == header_indent):
                break
            if indent == header_indent and _section_at(lines, end):
                break
        end += 1
    return lines[start:end], end


def _items(body: list[str], style: str) -> list[tuple[str, str, str]]:
    """Parse ``(names, type, description)`` entries of a parameters section body."""
    entries: list[list[str]] = []
    content = [b for b in body if b.strip()]
    if not content:
        return []
    base = min(_indent(b) for b in content)
    for line in body:
        if not line.strip():
            continue
        if _indent(line) == base:
            entries.append([line.strip()])
        elif entries:
            entries[-1].append(line.strip())
    out: list[tuple[str, str, str]] = []
    for head, *rest in entries:
        if style == "google":
            m = _GOOGLE_ITEM_RE.match(head)
            if m:
                out.append((m.group(1), m.group(2) or "", " ".join([m.group(3).strip(), *rest])))
            continue
        m = _NUMPY_ITEM_RE.match(head)
        if m:
            out.append((m.group(1), (m.group(2) or "").strip(), " ".join(rest)))
    return [(n, t, d.strip()) for n, t, d in out]


def parse_docstring(doc: str | None) -> Docstring:
    """Split a docstring into its summary and per-parameter descriptions.

    ``Attributes`` sections and ``:ivar:`` fields count as parameters, so the
    same parser documents dataclass and attrs fields.
    """
    if not doc:
        return Docstring(summary="")
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    summary_end = len(lines)
    i = 0
    while i < len(lines):
        found = _section_at(lines, i)
        if found is None:
            i += 1
            continue
        summary_end = min(summary_end, i)
        name, style, start = found
        if style == "rest":
            i = _rest_field(lines, i, params)
            continue
        header = lines[start - 1 if style == "google" else start - 2]
        body, i = _block(lines, start, _indent(header), style)
        if name in _PARAM_SECTIONS:
            for names, _type, text in _items(body, style):
                for one in names.split(","):
                    if text:
                        params.setdefault(one.strip().lstrip("*"), text)
    summary = "\n".join(lines[:summary_end]).strip()
    return Docstring(summary=summary, params=params)


def _rest_field(lines: list[str], i: int, params: dict[str, str]) -> int:
    """Read the reST field at line ``i`` (a parameter's goes into ``params``); the next line."""
    match = _REST_FIELD_RE.match(lines[i])
    assert match is not None
    kind, argument, text = match.group(1).lower(), match.group(2).split(), match.group(3)
    indent = _indent(lines[i])
    parts = [text.strip()]
    i += 1
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > indent:
        parts.append(lines[i].strip())
        i += 1
    description = " ".join(p for p in parts if p)
    if kind in _REST_PARAM_KINDS and argument and description:
        params.setdefault(argument[-1].lstrip("*"), description)
    return i
