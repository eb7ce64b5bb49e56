"""The package's docstrings, messages and comments cite nothing a user does not have.

A user reads ``help()``, an exception or the source; none of them comes with
the design notes or protocol drafts the package was written from. So a line
that says "(NEWER item 8)", "wire-protocol §4.7", "see NOTES.md" or "issue #14"
points nowhere: it must state the fact itself. Public standards stay citable
(``RFC 6749 §5.2``): anyone can read them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mantyx_sync"

CITATION = re.compile(
    r"NEWER"
    r"|wire-protocol|agent-runs-protocol|agent-runs ?§|local-tools"
    r"|\b(?:NOTES|EVALS|STYLE|CONTRIBUTING)(?:\.md|\.rst)?\b"
    r"|(?<!RFC \d{4} )§"
    r"|\bissues? ?#\d+|\bissues? \d+"
)


def _citations(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if CITATION.search(line)]


@pytest.mark.parametrize(
    "line",
    [
        "(NEWER item 8)",
        "see NEWER.md §19",
        '"""``error``: the run failed (wire-protocol §4.7)."""',
        "# agent-runs §7",
        "the protocol NOTES say",
        "(EVALS.md)",
        'as local-tools "Parameter schemas" asks',
        "# STYLE.md §11",
        "(see CONTRIBUTING.rst)",
        "# fixed in issue #14",
        "issue 12 asked for it",
        "(§3.2)",
    ],
)
def test_the_pattern_finds_each_kind_of_citation(line: str) -> None:
    assert _citations(line) == [line]


@pytest.mark.parametrize(
    "line",
    [
        "Read an RFC 6749 §5.1 token response.",
        'run_path(id, "cancel") is /agent-runs/{run_id}/cancel',
        "A revision is applied only when it is newer than the last.",
        "Scheme and host of the server that issued the token.",
    ],
)
def test_the_pattern_leaves_plain_words_alone(line: str) -> None:
    assert _citations(line) == []


def test_no_module_cites_a_document_the_user_does_not_have() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}: {line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in _citations(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "say the fact itself instead:\n" + "\n".join(found)
