"""The documentation in docs/ and the README that points into it.

The site itself is built, and every example in it run, by ``tox -e docs`` and
``.ci/run`` (``sphinx-build -W -b doctest``); these tests keep what that build
cannot see from drifting: a Python example that would never run, the event
table against the SDK's own list of event types, the API reference against the
public names, and the README's links.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import typing
from pathlib import Path

from readme_support import readme_example

import mantyx_sync
from mantyx_sync import events

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GUIDE = DOCS / "guide"
README = ROOT / "README.rst"
# Where the README links the repository's files (the package metadata's addresses).
BLOB = "https://github.com/mantyx/mantyx-sync/blob/main/"

# Directives whose Python is run by sphinx.ext.doctest (hidden or shown).
RUN = {"testcode", "testoutput", "testsetup", "testcleanup", "doctest"}
# Code a build cannot run and need not: what a person types in a shell.
SHELL = {"bash", "console", "shell", "sh", "text", "none"}
CODE = {"code-block", "code", "sourcecode", "literalinclude", "highlight"}
DIRECTIVE = re.compile(r"^\s*\.\. ([\w:-]+)::\s*(\S*)")


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.rst") if "_build" not in p.parts)


def _unexecuted_python(text: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each block of Python the doctest build would not run."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        directive = DIRECTIVE.match(line)
        if directive:
            name, argument = directive.groups()
            if name in CODE and argument.lower() not in SHELL:
                found.append((number, line.strip()))
        elif line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
            # A literal block: Sphinx shows it as Python, and nothing runs it.
            found.append((number, line.strip()))
    return found


def test_the_checker_sees_what_never_runs() -> None:
    page = (
        "Text::\n\n    agent.run('x')\n\n"
        ".. code-block:: python\n\n    agent.run('x')\n\n"
        ".. code-block:: bash\n\n    pip install x\n\n"
        ".. testcode::\n\n    agent.run('x')\n"
    )
    assert [n for n, _ in _unexecuted_python(page)] == [1, 5]


def test_every_python_example_in_the_guide_is_executed() -> None:
    pages = _pages()
    guide = [p for p in pages if p.parent == GUIDE]
    assert len(guide) >= 13, "the guide's pages are missing"
    offenders = [
        f"{page.relative_to(ROOT)}:{number}: {what}"
        for page in pages
        for number, what in _unexecuted_python(page.read_text(encoding="utf-8"))
    ]
    assert offenders == [], (
        "Python in the docs must be a testcode/doctest block, which the doctest "
        "build runs against the emulator:\n" + "\n".join(offenders)
    )
    shown = sum(p.read_text(encoding="utf-8").count(".. testcode::") for p in guide)
    assert shown >= 40


def test_every_guide_page_is_in_the_site_and_linked_from_the_readme() -> None:
    index = (DOCS / "index.rst").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    for page in sorted(GUIDE.glob("*.rst")):
        assert f"   guide/{page.stem}\n" in index, f"{page.name} is not in the toctree"
        assert f"<{BLOB}docs/guide/{page.name}>`_" in readme, f"README does not link {page.name}"
    # The README is the package index's page too: every link is absolute, and each
    # into the repository names a file that exists.
    links = re.findall(r"<([^>]+)>`_", readme)
    assert [link for link in links if not link.startswith("https://")] == []
    for target in [link.removeprefix(BLOB) for link in links if link.startswith(BLOB)]:
        assert (ROOT / target).is_file(), f"README links {target}, which does not exist"


def _event_table() -> dict[str, str]:
    """``event.type`` -> payload class name, as the streaming page's table says."""
    text = (GUIDE / "streaming.rst").read_text(encoding="utf-8")
    rows = re.findall(
        r"^    \* - (``(\w+)``|any other)\n      - :class:`~mantyx_sync\.(?:events\.)?(\w+)`$",
        text,
        re.M,
    )
    return {event_type or "*": cls for _, event_type, cls in rows}


def test_the_event_table_lists_every_event_type_with_its_payload_class() -> None:
    table = _event_table()
    # Every type the SDK knows (EventType: a run's and an evaluation's), each with the
    # class of the one type -> class table the SDK reads payloads with, or none.
    known = {kind: "UnknownPayload" for kind in typing.get_args(events.EventType)}
    known.update({kind: cls.__name__ for kind, cls in events._PAYLOADS.items()})
    assert {k: v for k, v in table.items() if k != "*"} == known
    assert table["*"] == "UnknownPayload"
    for event_type, name in table.items():
        # Each class named is the one the SDK hands out, from mantyx_sync.events.
        handed_out = events._PAYLOADS.get(event_type, events.UnknownPayload)
        assert getattr(events, name) is handed_out


def _documented(api: str) -> dict[str, set[str]]:
    """Module -> the names ``api.rst`` documents in it (after each ``currentmodule``)."""
    found: dict[str, set[str]] = {}
    module = "mantyx_sync"
    for line in api.splitlines():
        if line.startswith(".. currentmodule:: "):
            module = line.split(":: ", 1)[1].strip()
        elif match := re.match(r"^\.\. auto(?:class|function|exception|data):: (\w+)$", line):
            found.setdefault(module, set()).add(match.group(1))
    return found


def test_the_api_reference_documents_every_public_name() -> None:
    api = (DOCS / "api.rst").read_text(encoding="utf-8")
    documented = _documented(api)
    public = set(mantyx_sync.__all__) - {"__version__"}
    assert sorted(public ^ documented.pop("mantyx_sync")) == []
    # The payloads and evaluation classes under their own module, none twice.
    for module in ("mantyx_sync.events", "mantyx_sync.evals"):
        own = set(importlib.import_module(module).__all__) - public
        assert documented.pop(module) == own, module
    assert documented == {}
    for module in ("credentials", "serve", "notebook", "testing"):
        assert f".. automodule:: mantyx_sync.{module}\n" in api


def test_the_readme_example_runs_alone_offline_and_calls_its_tool(tmp_path: Path) -> None:
    assert (
        ".. code-block:: python"
        not in README.read_text(encoding="utf-8").split(".. code-block:: python", 1)[1]
    ), "README keeps one Python example; the rest lives in the guide, where it runs"
    # Pasted alone into a file and run in a fresh interpreter, no MANTYX_* set.
    script = tmp_path / "example.py"
    script.write_text(readme_example(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "You said: How many words in 'the quick brown fox'?\nword_count → 1\n"
    # The README says what it prints, and how the same agent reaches an account.
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "(here ``word_count → 1``)" in readme
    assert "set ``MANTYX_API_KEY`` and ``MANTYX_WORKSPACE`` and build it without" in readme
