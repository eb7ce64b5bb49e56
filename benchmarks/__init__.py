"""Benchmarks of mantyx_sync against the local emulator (issue 6).

Run them all with ``python -m benchmarks`` from the repository root; see
``benchmarks/README.md`` for what each one measures and the latest results.
"""

import os
from pathlib import Path

CLIENT_TREE = "MANTYX_BENCH_CLIENT"
"""The environment variable ``--client DIR`` sets: a checkout whose mantyx_sync the
client processes import instead of this tree's (the emulator stays this tree's)."""


def python_path(*, client: bool) -> str:
    """``PYTHONPATH`` for a process the benchmarks start: this tree last, so an
    explicit ``PYTHONPATH`` wins, and for a client the ``--client`` checkout first."""
    root = str(Path(__file__).resolve().parent.parent)
    first = os.environ.get(CLIENT_TREE) if client else None
    return os.pathsep.join(filter(None, [first, os.environ.get("PYTHONPATH"), root]))
