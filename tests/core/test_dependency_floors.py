"""setup.cfg declares every library the package imports, each with a tested floor.

``tox -e min`` installs exactly those floors (``.ci/floors.py`` reads them from
setup.cfg at run time) and runs the core tests, so a floor can only be declared
where it works.
"""

from __future__ import annotations

import ast
import configparser
import runpy
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FLOORS = runpy.run_path(str(REPO / ".ci" / "floors.py"))

# Imported only where an extra is installed: the emulator and the quick serving
# runner (werkzeug, the ``testing`` extra), and the pytest plugin (under pytest);
# typing_extensions only under TYPE_CHECKING (``Unpack`` for the spec keywords),
# which a type checker brings with it.
# opentelemetry: the otel extra, imported only when tracing is on.
OPTIONAL = {"werkzeug", "pytest", "typing_extensions", "opentelemetry"}
# Distribution name -> the module it provides, where the two differ.
MODULE_OF = {"sseclient-py": "sseclient"}


def _imported_libraries() -> set[str]:
    found = set()
    for path in (REPO / "mantyx_sync").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "mantyx_sync"}


def _setup_cfg() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg", encoding="utf-8")
    return cfg


def _names(lines: str) -> list[str]:
    return [line.split(">=")[0].split("[")[0].strip() for line in lines.split() if line.strip()]


def test_every_library_the_package_imports_is_a_core_dependency() -> None:
    # urllib3 was imported (and its behaviour relied on) without being declared.
    declared = {MODULE_OF.get(n, n) for n in _names(_setup_cfg()["options"]["install_requires"])}
    assert _imported_libraries() - OPTIONAL == declared


def test_werkzeug_has_one_floor_for_every_extra() -> None:
    extras = _setup_cfg()["options.extras_require"]
    floors = {
        line.strip()
        for name in extras
        for line in extras[name].splitlines()
        if line.strip().lower().startswith("werkzeug")
    }
    assert floors == {extras["testing"].strip()}


def test_tox_min_pins_every_floor_exactly() -> None:
    pins = FLOORS["pins"]()
    requirements = FLOORS["requirements"]()
    # OpenTelemetry's SDK, which only the tests use, follows its API's floor.
    twin = [p for p in pins if p.startswith("opentelemetry-sdk==")]
    assert twin == [pins[pins.index(twin[0]) - 1].replace("-api==", "-sdk==")]
    assert [p.replace("==", ">=") for p in pins if p not in twin] == requirements
    assert {p.split("==")[0] for p in pins} >= {
        "urllib3",
        "werkzeug",
        "cattrs",
        "tenacity",
        "opentelemetry-api",
    }


@pytest.mark.parametrize("requirement", ["requests", "requests<3", "requests>=2.31,<3"])
def test_a_requirement_without_one_plain_floor_is_refused(tmp_path: Path, requirement: str) -> None:
    cfg = tmp_path / "setup.cfg"
    cfg.write_text(
        "[options]\ninstall_requires =\n    attrs>=23.1\n"
        f"    {requirement}\n[options.extras_require]\ntesting =\n    werkzeug>=2.1\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="needs one plain '>=' floor"):
        FLOORS["pins"](cfg)
