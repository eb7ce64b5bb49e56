"""Pyright finds the public API typed (issue 31: typing for users).

``pyright --verifytypes`` scores the share of the package's public symbols whose
type a checker reads from an annotation rather than guesses; every checker then
agrees on them. The score must stay at 98 % or more.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
LEAST_SCORE = 0.98


def _verifytypes() -> dict[str, Any]:
    """Pyright's report on this checkout's package, or a skip saying why there is none."""
    if importlib.util.find_spec("pyright") is None:
        pytest.skip("pyright is not installed (it is in pyproject.toml's test group)")
    command = [sys.executable, "-m", "pyright", "--pythonpath", sys.executable]
    command += ["--verifytypes", "mantyx_sync", "--ignoreexternal", "--outputjson"]
    done = subprocess.run(
        command,
        cwd=REPO,
        # this checkout ahead of any installed copy of the package
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        # The pip package fetches pyright itself (from npm) on its first run.
        said = (done.stderr or done.stdout).strip().splitlines()[-3:]
        pytest.skip(f"pyright cannot run here (exit {done.returncode}): {' / '.join(said)}")
    return report


@pytest.mark.timeout(300)
def test_pyright_reads_the_public_api_from_annotations() -> None:
    completeness = _verifytypes()["typeCompleteness"]
    assert Path(completeness["packageRootDirectory"]) == REPO / "mantyx_sync"
    guessed = [
        f"{symbol['name']}: {diagnostic['message']}"
        for symbol in completeness["symbols"]
        if symbol["isExported"] and (symbol["isTypeAmbiguous"] or not symbol["isTypeKnown"])
        for diagnostic in symbol["diagnostics"]
    ]
    score = completeness["completenessScore"]
    assert score >= LEAST_SCORE, f"type completeness {score:.1%}; annotate these:\n" + "\n".join(
        guessed
    )
