"""The 1.0 API shape as a user types it: tests/core/typed_script_shape.py passes
``mypy --strict`` with precise revealed types, and runs against the emulator."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typed_script_shape

from mantyx_sync.testing import LocalMantyx, Turn

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(typed_script_shape.__file__)


def test_the_script_type_checks_with_precise_types(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    shutil.copy(SCRIPT, tmp_path / "user_script.py")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(tmp_path / "c"),
            "user_script.py",
        ],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    notes = re.findall(r'Revealed type is "([^"]+)"', done.stdout)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert errors == [], done.stdout
    assert notes == typed_script_shape.REVEALED, done.stdout
    assert not any("Any" in note for note in notes)


def test_the_script_runs_against_the_emulator(emulator: LocalMantyx) -> None:
    emulator.set_model([Turn("hello")])
    said = typed_script_shape.main(emulator.client(in_memory=True))
    assert said[0] == "hello" and "result" in said and said[-1] == "hello"
