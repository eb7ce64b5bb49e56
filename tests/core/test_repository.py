"""What the repository tracks must work on a fresh clone on a new machine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_no_symbolic_link_is_tracked() -> None:
    # A tracked link into one machine's folders (a peer venv, node_modules) is
    # dangling on CI's fresh clone and breaks the peers' install there.
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listing = subprocess.run(
        [git, "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30
    ).stdout
    links = [line.split("\t", 1)[1] for line in listing.splitlines() if line.startswith("120000 ")]
    assert links == [], f"symbolic links are tracked (git rm --cached them): {links}"
