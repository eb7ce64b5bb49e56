"""Summaries of repeated measurements, and the results table."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import attrs

__all__ = ["Figure", "Row", "format_table", "paired_ratio", "ratio"]


@attrs.frozen
class Figure:
    """Repeated measurements of one quantity (median shown, min–max beside it)."""

    values: tuple[float, ...]
    unit: str = ""

    @property
    def median(self) -> float:
        """The median of the repetitions."""
        return statistics.median(self.values)

    def show(self) -> str:
        """``median [min–max] unit``."""
        if not self.values:
            return "n/a"
        lo, hi = min(self.values), max(self.values)
        unit = f" {self.unit}" if self.unit else ""
        if len(self.values) == 1:
            return f"{_num(self.median)}{unit}"
        return f"{_num(self.median)} [{_num(lo)}–{_num(hi)}]{unit}"


def _num(value: float) -> str:
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ratio(a: Figure | None, b: Figure | None) -> float | None:
    """``median(a) / median(b)``, or ``None`` when either side is missing."""
    if a is None or b is None or not a.values or not b.values or b.median == 0:
        return None
    return a.median / b.median


def paired_ratio(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The median over rounds of one round's ``a / b`` (``a[i]`` and ``b[i]``
    measured in round ``i``).

    A round measures every variant back to back. On a machine whose speed
    drifts between fast and slow spells, the variants of one round mostly saw
    the same spell, where the medians of all repetitions may each have been
    taken in a different one.
    """
    # A variant not measured (the official SDK not installed) has no rounds.
    pairs = [x / y for x, y in zip(a, b, strict=False) if y]
    return statistics.median(pairs) if pairs else None


@attrs.frozen
class Row:
    """One line of the results table."""

    benchmark: str
    figure: str
    ours: Figure | None
    baseline: Figure | None = None
    official: Figure | None = None
    ratios: str = ""
    target: str = ""
    verdict: str = ""
    floor: Figure | None = None


def format_table(rows: Sequence[Row], official_note: str | None) -> str:
    """A plain-text (Markdown-compatible) table of ``rows``."""
    header = (
        "benchmark",
        "figure",
        "mantyx_sync",
        "deps floor",
        "raw baseline",
        "official SDK",
        "ratios (same run)",
        "target",
        "met",
    )
    lines = [
        [
            r.benchmark,
            r.figure,
            _cell(r.ours),
            _cell(r.floor),
            _cell(r.baseline),
            _cell(r.official),
            r.ratios,
            r.target,
            r.verdict,
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]

    def fmt(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    out = [fmt(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [fmt(line) for line in lines]
    if official_note:
        out.append("")
        out.append(official_note)
    return "\n".join(out)


def _cell(figure: Figure | None) -> str:
    return "—" if figure is None else figure.show()
