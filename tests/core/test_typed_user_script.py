"""A typed user script passes ``mypy --strict`` with every revealed type precise,
and runs against the emulator (issue 30: a type checker follows the API end to end).

The script is tests/core/typed_user_script.py; each ``reveal_type(x)  # R: T``
line there states what mypy must reveal. The mistakes below must each be an
error: the annotations refuse what the API refuses.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mantyx_sync.testing import LocalMantyx

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCRIPT = HERE / "typed_user_script.py"
EXPECTED = re.compile(r"^\s*reveal_type\(.*\)\s+# R: (?P<type>.+)$")
REVEALED = re.compile(r'^[^:]+:(?P<line>\d+): note: Revealed type is "(?P<type>.+)"$')

MISTAKES = """
from mantyx_sync import Agent, MantyxTool, local_tool


@local_tool
def add(a: int, b: int) -> int:
    return a + b


@local_tool(name="twice")
def twice(text: str) -> str:
    return text * 2


def main(agent: Agent) -> None:
    add("1", 2)  # wrong
    twice(3)  # wrong
    twice("a", times=2)  # wrong
    Agent(system_prompt="p", tools=[add, MantyxTool("t"), {"kind": "mantyx"}])  # wrong
    Agent(system_prompt="p", tools=["add"])  # wrong
    agent.run("x", output_type=3)  # wrong
    for event in agent.stream("x"):
        if event.type == "assistant_delta":
            event.payload.tool_use_id  # wrong
        if event.type == "asistant_delta":  # wrong
            pass
"""


def _mypy(tmp_path: Path, script: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--strict-equality",
            "--cache-dir",
            str(tmp_path / "cache"),
            script.name,
        ],
        cwd=script.parent,
        env={**os.environ, "MYPYPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_every_revealed_type_is_the_one_stated(tmp_path: Path) -> None:
    lines = SCRIPT.read_text(encoding="utf-8").splitlines()
    expected = {
        number: found["type"]
        for number, line in enumerate(lines, start=1)
        if (found := EXPECTED.search(line))
    }
    assert len(expected) >= 15  # the walk sees the script's reveal_type lines
    done = _mypy(tmp_path, SCRIPT)
    revealed = {
        int(found["line"]): found["type"]
        for line in done.stdout.splitlines()
        if (found := REVEALED.match(line))
    }
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert errors == [], done.stdout
    assert revealed == expected
    assert not any("Any" in kind for kind in revealed.values())


def test_each_mistake_is_a_type_error(tmp_path: Path) -> None:
    script = tmp_path / "mistakes.py"
    script.write_text(MISTAKES, encoding="utf-8")
    done = _mypy(tmp_path, script)
    wrong = {n for n, line in enumerate(MISTAKES.splitlines(), start=1) if "# wrong" in line}
    flagged = {int(line.split(":")[1]) for line in done.stdout.splitlines() if ": error:" in line}
    assert flagged == wrong, done.stdout


def test_the_script_runs_against_the_emulator(
    emulator: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("typed_user_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    module.main(emulator)
