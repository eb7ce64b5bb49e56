"""Each guide page's visible code, copied in order into one file, is a working
script: run in a fresh interpreter with only ``MANTYX_*`` pointing at an
emulator, it raises nothing and prints what the page shows. ``docs/_scripts.py``
holds the rule; the doctest build runs it too (``docs/conf.py``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mantyx_sync.testing import LocalMantyx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))

import _emulator  # noqa: E402 - from docs/, on the path above
import _scripts  # noqa: E402

PAGES = sorted((ROOT / "docs" / "guide").glob("*.rst"))


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_the_page_runs_as_one_script(page: Path, mantyx_server: LocalMantyx) -> None:
    failures = _scripts.check(page, _emulator.variables(mantyx_server))
    assert failures == [], "\n".join(failure.message for failure in failures)


@pytest.fixture
def page(tmp_path: Path) -> Callable[[str], Path]:
    """Write a page (outside docs/, so no build sees it)."""

    def write(text: str) -> Path:
        path = tmp_path / "page.rst"
        path.write_text(text, encoding="utf-8")
        return path

    return write


def test_hidden_setup_fails_naming_the_page_and_line(
    page: Callable[[str], Path], mantyx_server: LocalMantyx
) -> None:
    text = "T\n=\n\n.. testcode::\n    :hide:\n\n    x = 1\n\n.. testcode::\n\n    print(x)\n"
    (failure,) = _scripts.check(page(text), _emulator.variables(mantyx_server))
    assert failure.message.endswith(".rst:4: hidden setup a reader cannot see")
    (failure,) = _scripts.check(
        page("T\n=\n\n.. testsetup::\n\n    x = 1\n"), _emulator.variables(mantyx_server)
    )
    assert ".rst:4: hidden setup" in failure.message


def test_a_failing_block_names_its_page_line(
    page: Callable[[str], Path], mantyx_server: LocalMantyx
) -> None:
    text = "T\n=\n\n.. testcode::\n\n    x = 1\n\nText.\n\n.. testcode::\n\n    print(emulator)\n"
    (failure,) = _scripts.check(page(text), _emulator.variables(mantyx_server))
    assert '.rst", line 12' in failure.message
    assert "NameError: name 'emulator' is not defined" in failure.message


def test_output_other_than_shown_fails(
    page: Callable[[str], Path], mantyx_server: LocalMantyx
) -> None:
    text = (
        "T\n=\n\n.. testcode::\n\n    print('a')\n\n.. testoutput::\n\n    a\n\n"
        ".. testcode::\n\n    print('b', 3)\n\n.. testoutput::\n\n    b ...\n    c\n"
    )
    (failure,) = _scripts.check(page(text), _emulator.variables(mantyx_server))
    assert ".rst:13: prints\nb 3\nbut the page shows\nb ...\nc\n" in failure.message


def test_only_mantyx_variables_reach_the_script(
    page, mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AGENT_TOKEN", "set by the tester, not the page")
    text = (
        "T\n=\n\n.. testcode::\n\n    import os\n\n"
        "    print(sorted(k for k in os.environ if k.startswith(('MANTYX_', 'AGENT'))))\n\n"
        ".. testoutput::\n\n"
        "    ['MANTYX_API_KEY', 'MANTYX_BASE_URL', 'MANTYX_CONFIG_DIR', 'MANTYX_WORKSPACE']\n"
    )
    assert _scripts.check(page(text), _emulator.variables(mantyx_server)) == []


def test_a_doctest_paragraph_is_refused(
    page: Callable[[str], Path], mantyx_server: LocalMantyx
) -> None:
    (failure,) = _scripts.check(
        page("T\n=\n\n    >>> 1 + 1\n    2\n"), _emulator.variables(mantyx_server)
    )
    assert "line 4: a '>>>' example; write a testcode block" in failure.message


def test_the_doc_build_sets_up_nothing_but_the_emulator() -> None:
    import conf

    namespace: dict[str, object] = {}
    exec(conf.doctest_global_setup, namespace)
    assert sorted(set(namespace) - {"__builtins__"}) == ["__name__"]
