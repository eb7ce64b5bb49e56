"""README.rst's Python example as a script, for the tests that run it (a
checkout's and an installed wheel's)."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.rst"


def readme_example() -> str:
    """The first ``.. code-block:: python`` of README.rst, unindented."""
    block = README.read_text(encoding="utf-8").split(".. code-block:: python\n", 1)[1]
    lines = []
    for line in block.splitlines()[1:]:
        if line and not line.startswith("    "):
            break
        lines.append(line[4:])
    return "\n".join(lines).strip() + "\n"
