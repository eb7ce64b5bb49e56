"""Benchmarks of mantyx_sync against the local emulator (issue 6).

Run them all with ``python -m benchmarks`` from the repository root; see
``benchmarks/README.md`` for what each one measures and the latest results.
"""

import os
from pathlib import Path

CLIENT_TREE = "MANTYX_BENCH_CLIENT"
"""The environment variable ``--client DIR`` sets: a checkout whose mantyx_sync the
client processes import instead of this tree's (the emulator stays this tree's)."""


BESIDE_TREE = "MANTYX_BENCH_BESIDE"
"""The environment variable ``--beside DIR`` sets: a directory holding another
checkout's client renamed ``mantyx_beside`` (:func:`beside_copy`), run in the same
client process as this tree's for rows 1 and 3, round by round."""

BESIDE_PACKAGE = "mantyx_beside"


def beside_copy(checkout: Path, into: Path) -> Path:
    """Copy ``checkout``'s ``mantyx_sync`` to ``into/mantyx_beside``, every mention of
    its name rewritten, so one process can import both trees; returns ``into``."""
    source = checkout / "mantyx_sync"
    target = into / BESIDE_PACKAGE
    for path in source.rglob("*"):
        if "__pycache__" in path.parts or path.is_dir():
            continue
        copy = target / path.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix in (".py", ".pyi"):
            text = path.read_text(encoding="utf-8")
            copy.write_text(text.replace("mantyx_sync", BESIDE_PACKAGE), encoding="utf-8")
        else:
            copy.write_bytes(path.read_bytes())
    return into


def python_path(*, client: bool) -> str:
    """``PYTHONPATH`` for a process the benchmarks start: this tree last, so an
    explicit ``PYTHONPATH`` wins, and for a client the ``--client`` checkout first."""
    root = str(Path(__file__).resolve().parent.parent)
    first = os.environ.get(CLIENT_TREE) if client else None
    return os.pathsep.join(filter(None, [first, os.environ.get("PYTHONPATH"), root]))
