"""Pin every dependency floor setup.cfg declares, for ``tox -e min``.

Reads ``install_requires``, the ``testing`` extra (the emulator the tests run
against) and the ``otel`` extra, and writes one ``name==version`` line for each
``name>=version``: a pip constraints file that installs exactly the oldest
releases the package accepts. A requirement without a ``>=`` floor is refused,
so none can go untested. OpenTelemetry's SDK (which the tracing tests read
spans with) is released in step with its API: it is pinned to the API's floor.

    python .ci/floors.py OUT.txt
"""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

SETUP_CFG = Path(__file__).resolve().parent.parent / "setup.cfg"
_FLOOR = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*>=\s*([0-9][0-9A-Za-z.]*)$")


def requirements(setup_cfg: Path = SETUP_CFG) -> list[str]:
    """The core requirements and the ``testing`` extra, as written in setup.cfg."""
    cfg = configparser.ConfigParser()
    cfg.read(setup_cfg, encoding="utf-8")
    extras = cfg["options.extras_require"]
    required = (cfg["options"]["install_requires"], extras["testing"], extras.get("otel", ""))
    lines = "\n".join(required)
    return [line.strip() for line in lines.splitlines() if line.strip()]


def pins(setup_cfg: Path = SETUP_CFG) -> list[str]:
    """``name==floor`` for every requirement; ``ValueError`` names one without a floor."""
    out = []
    for requirement in requirements(setup_cfg):
        match = _FLOOR.match(requirement)
        if match is None:
            raise ValueError(
                f"{setup_cfg.name}: {requirement!r} needs one plain '>=' floor for tox -e min"
            )
        out.append(f"{match[1]}=={match[2]}")
        if match[1] == "opentelemetry-api":
            out.append(f"opentelemetry-sdk=={match[2]}")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    text = "\n".join(pins()) + "\n"
    Path(sys.argv[1]).write_text(text, encoding="utf-8")
    sys.stdout.write(text)
