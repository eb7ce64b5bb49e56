"""The test command tells its cost: the README and CONTRIBUTING.rst say what a
first run takes, and the suite announces each peer environment it builds, even
under ``pytest -q``."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STAND_IN_VENV = """#!/bin/sh
# A stand-in for the real script: a venv with a python, and nothing else.
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/{name}/bin" && touch "$here/{name}/bin/python"
"""

STAND_IN_NPM = """#!/bin/sh
# A stand-in for npm: `npm install --prefix DIR ...` makes DIR/node_modules/.bin.
mkdir -p "$3/node_modules/.bin"
"""


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _suite_copy(tmp_path: Path) -> Path:
    """The suite's own conftest.py over a tiny test, with stand-ins for the peer builds."""
    tests = tmp_path / "tests"
    (tests / "peers").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "conftest.py", tests / "conftest.py")
    (tests / "test_one.py").write_text("def test_one():\n    pass\n")
    for name in (".venv-a2a03", ".venv-agentscope"):
        script = f"make_{name.removeprefix('.venv-')}_venv.sh"
        _executable(tests / "peers" / script, STAND_IN_VENV.format(name=name))
    (tmp_path / "bin").mkdir()
    _executable(tmp_path / "bin" / "npm", STAND_IN_NPM)
    return tests


def _pytest_q(tmp_path: Path, tests: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MANTYX_TEST_NO_PEER_INSTALL"}
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_pytest_q_prints_a_line_per_peer_environment_it_builds(tmp_path: Path) -> None:
    tests = _suite_copy(tmp_path)
    first = _pytest_q(tmp_path, tests)
    assert first.returncode == 0, first.stdout + first.stderr
    announced = re.findall(r"^mantyx_sync tests: installing .* into (\S+) ", first.stdout, re.M)
    assert announced == [
        "tests/peers/node_modules",
        "tests/peers/.venv-a2a03",
        "tests/peers/.venv-agentscope",
    ], first.stdout
    assert len(re.findall(r"^mantyx_sync tests: .*: done in \d+ s$", first.stdout, re.M)) == 3
    # Built once: a second run builds nothing and says nothing about peers.
    second = _pytest_q(tmp_path, tests)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "mantyx_sync tests:" not in second.stdout, second.stdout


def test_a_failed_build_says_so_and_the_run_goes_on(tmp_path: Path) -> None:
    tests = _suite_copy(tmp_path)
    _executable(tests / "peers" / "make_agentscope_venv.sh", "#!/bin/sh\nexit 3\n")
    done = _pytest_q(tmp_path, tests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(
        r"^mantyx_sync tests: .*agentscope.*: failed \(exit 3\) in \d+ s$", done.stdout, re.M
    ), done.stdout


def test_the_readme_states_what_a_first_run_costs() -> None:
    # The README (the package index's page) says it in a line; CONTRIBUTING.rst in full.
    readme = (ROOT / "README.rst").read_text(encoding="utf-8")
    line = " ".join(
        readme[: readme.index(".. ci-test-command")].split("**Run the test suite**")[1].split()
    )
    assert re.search(r"about \d+ minutes and \d+(\.\d+)? GB of disk the first time", line)
    assert "CONTRIBUTING.rst" in line
    contributing = (ROOT / "CONTRIBUTING.rst").read_text(encoding="utf-8")
    section = contributing.split("\nSetting up a checkout\n---", 1)[1].split("\n---", 1)[0]
    cost = " ".join(section.split())
    assert re.search(r"about \d+ minutes", cost), "the time of a first run"
    assert re.search(r"about \d+(\.\d+)? GB of disk", cost), "the disk a first run takes"
    assert "chromium" in cost and "apt-get" in cost and "root" in cost
    assert "MANTYX_TEST_NO_PEER_INSTALL=1" in cost
    # Each peer environment the suite builds, named and sized as the suite announces it.
    conftest = (ROOT / "tests" / "conftest.py").read_text(encoding="utf-8")
    built = re.findall(r'^\s+"(.+) \((about \d+ MB)\)",$', conftest, re.M)
    assert len(built) == 3, built
    for what, size in built:
        assert f"{what} ({size}" in cost, f"CONTRIBUTING does not say the suite builds {what}"


def _groups() -> dict[str, list[object]]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    groups: dict[str, list[object]] = tomllib.loads(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    )["dependency-groups"]
    return groups


def _extras() -> set[str]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    return set(cfg["options.extras_require"])


def test_the_test_command_installs_the_dev_group_with_a_pip_that_can() -> None:
    readme = (ROOT / "README.rst").read_text(encoding="utf-8")
    after = readme.split(".. ci-test-command", 1)[1]
    command = re.findall(r"^ +(\S.*)$", after, re.M)[0]  # as .ci/run reads it
    steps = [step.strip() for step in command.split("&&")]
    # pip learnt --group in 25.1; a new venv may bring an older one.
    upgrade = steps.index('python -m pip install -q -U "pip>=25.1"')
    install = steps.index('python -m pip install -q -e ".[testing]" --group dev')
    assert upgrade < install < steps.index("python -m pytest -q")
    dev = _groups()["dev"]
    assert {"include-group": "test"} in dev
    assert any(str(item).startswith("ruff") for item in dev)


def test_every_group_and_extra_the_project_installs_exists() -> None:
    groups, extras = _groups(), _extras()
    for name in ("README.rst", "tox.ini", ".ci/run", "CONTRIBUTING.rst", "docs/guide/install.rst"):
        text = (ROOT / name).read_text(encoding="utf-8")
        named = re.findall(r"--group ([a-z][\w-]*)|dependency_groups = ([a-z][\w-]*)", text)
        for group in {a or b for a, b in named}:
            assert group in groups, f"{name} installs the dependency group {group!r}: none"
        for extra in re.findall(r"\.\[([a-z][\w-]*)\]", text):
            assert extra in extras, f"{name} installs the extra {extra!r}: none"
    for items in groups.values():
        for item in items:
            if isinstance(item, dict):
                assert item["include-group"] in groups
