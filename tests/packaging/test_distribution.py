"""The sdist and the wheel as a package index and a packager get them (issue 31).

Both are built once from a copy of the checkout with ``python -m build``; then
``twine check --strict`` reads them as the index would, their metadata is
checked (licence, addresses, classifiers, user extras only), the wheel alone is
installed in a fresh venv on the oldest and the newest supported Python, where
``mantyx-sync --help`` and the README's first example run with no ``MANTYX_*``
variable and no way out but to 127.0.0.1, and the sdist's own tests run from
the unpacked sdist.
"""

from __future__ import annotations

import email
import email.message
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from readme_support import readme_example

pytest.importorskip("build", reason="needs build: pip install --group test")

ROOT = Path(__file__).resolve().parents[2]
NAME = "mantyx_sync"
REPOSITORY = "https://github.com/mantyx/mantyx-sync"
SUPPORTED = ("3.10", "3.11", "3.12", "3.13")
USER_EXTRAS = {"testing", "otel", "cli", "serve", "celery"}
# What a checkout has that is built or installed by it, never a source.
NOT_SOURCES = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".tox",
    "node_modules",
    ".venv-*",
    "_build",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
)

pytestmark = pytest.mark.timeout(900)


def _run(*args: str | Path, timeout: float = 600, **kwargs: object) -> str:
    done = subprocess.run(
        [str(arg) for arg in args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(sdist, wheel)``, built as a release would be: the wheel from the sdist."""
    base = tmp_path_factory.mktemp("dists")
    source = base / "src"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES, symlinks=True)
    _run(sys.executable, "-m", "build", "--outdir", base / "dist", source)
    (sdist,) = (base / "dist").glob("*.tar.gz")
    (wheel,) = (base / "dist").glob("*.whl")
    return sdist, wheel


def _metadata(text: str) -> email.message.Message:
    return email.message_from_string(text)


def _wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (path,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return _metadata(archive.read(path).decode("utf-8"))


def _sdist_names(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as archive:
        # Paths inside the single top folder, name-version/.
        return [name.partition("/")[2] for name in archive.getnames()]


def test_twine_check_strict_passes(dists: tuple[Path, Path]) -> None:
    pytest.importorskip("twine", reason="needs twine: pip install --group test")
    out = _run(sys.executable, "-m", "twine", "check", "--strict", *dists, timeout=120)
    assert out.count("PASSED") == 2, out


def test_the_licence_is_declared_and_shipped_in_both(dists: tuple[Path, Path]) -> None:
    sdist, wheel = dists
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    meta = _wheel_metadata(wheel)
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    # PEP 639: the expression replaces the old License field and licence classifiers.
    assert meta["License"] is None
    assert not [c for c in meta.get_all("Classifier") or () if c.startswith("License ::")]
    with zipfile.ZipFile(wheel) as archive:
        shipped = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert len(shipped) == 1 and archive.read(shipped[0]).decode("utf-8") == licence
    assert "LICENSE" in _sdist_names(sdist)
    with tarfile.open(sdist) as archive:
        (pkg_info,) = [
            m
            for m in archive.getmembers()
            if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
        ]
        extracted = archive.extractfile(pkg_info)
        assert extracted is not None
        assert _metadata(extracted.read().decode("utf-8"))["License-Expression"] == "Apache-2.0"


def test_the_index_page_has_the_projects_addresses_classifiers_and_author(
    dists: tuple[Path, Path],
) -> None:
    meta = _wheel_metadata(dists[1])
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or ())
    assert set(urls) == {"Documentation", "Source", "Changelog", "Issues"}
    assert all(url.startswith(REPOSITORY) for url in urls.values()), urls
    assert meta["Author"]
    classifiers = meta.get_all("Classifier") or []
    versions = [c.rpartition(" :: ")[2] for c in classifiers if re.search(r"3\.\d+$", c)]
    assert tuple(versions) == SUPPORTED
    assert meta["Requires-Python"] == f">={SUPPORTED[0]}"
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    assert "Typing :: Typed" in classifiers
    assert any(c.startswith("Topic :: ") for c in classifiers)
    trove = pytest.importorskip("trove_classifiers", reason="needs pip install --group test")
    assert [c for c in classifiers if c not in trove.classifiers] == []


def test_the_only_extras_are_the_users(dists: tuple[Path, Path]) -> None:
    # Contributors' tools are dependency groups (pyproject.toml), never published.
    meta = _wheel_metadata(dists[1])
    assert set(meta.get_all("Provides-Extra") or ()) == USER_EXTRAS


def test_both_ship_the_type_information(dists: tuple[Path, Path]) -> None:
    # PEP 561: py.typed marks the package typed; __init__.pyi is what type
    # checkers read for the package's own names (its __init__.py loads them lazily).
    sdist, wheel = dists
    typing_files = {"mantyx_sync/py.typed", "mantyx_sync/__init__.pyi"}
    with zipfile.ZipFile(wheel) as archive:
        assert typing_files <= set(archive.namelist())
    assert typing_files <= set(_sdist_names(sdist))


def test_the_sdist_has_the_tests_docs_and_tox_ini_and_nothing_built(
    dists: tuple[Path, Path],
) -> None:
    names = set(_sdist_names(dists[0]))
    for needed in (
        "tox.ini",
        "README.rst",
        "CONTRIBUTING.rst",
        "tests/conftest.py",
        "tests/core/test_layering.py",
        "tests/peers/package.json",
        "docs/conf.py",
        "docs/guide/first-run.rst",
        "examples/quickstart.py",
        ".ci/floors.py",
    ):
        assert needed in names, f"the sdist lacks {needed}"
    built = [n for n in names if re.search(r"__pycache__|node_modules|\.venv|_build/|\.pyc$", n)]
    assert built == []


def test_a_packager_runs_the_tests_from_the_sdist(dists: tuple[Path, Path], tmp_path: Path) -> None:
    with tarfile.open(dists[0]) as archive:
        archive.extractall(tmp_path, filter="data")
    (tree,) = tmp_path.iterdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    env.update(PYTHONPATH=str(tree), MANTYX_TEST_NO_PEER_INSTALL="1")
    out = _run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/core/test_dependency_floors.py",
        "tests/tools",
        "tests/testing/test_emulator_model.py",
        cwd=tree,
        env=env,
        timeout=300,
    )
    assert re.search(r"^\d+ passed", out, re.M), out
    # The tests ran against the unpacked sources, not a checkout or an install.
    probe = _run(sys.executable, "-c", f"import {NAME}; print({NAME}.__file__)", cwd=tree, env=env)
    assert Path(probe.strip()).is_relative_to(tree)


# -- the wheel alone, on the oldest and the newest supported Python -----------


def _python(version: str) -> Path:
    """That Python: on PATH as pythonX.Y, else the newest pyenv install of it."""
    found = shutil.which(f"python{version}")
    # A pyenv shim is on PATH whether or not it can run that version.
    if (
        found
        and subprocess.run([found, "-c", ""], capture_output=True, check=False).returncode == 0
    ):
        return Path(found)
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = sorted(
        root.glob(f"{version}.*/bin/python{version}"),
        key=lambda p: [int(x) for x in re.findall(r"\d+", p.parts[-3])],
    )
    if not candidates:
        missing = f"Python {version} is not on PATH nor under {root}: pyenv install {version}"
        if os.environ.get("CI"):  # CI's machines carry both (.ci/run needs them too)
            pytest.fail(missing)
        pytest.skip(missing)
    return candidates[-1]


def _readme_install_extras() -> str:
    """The extras README's ``pip install mantyx-sync[...]`` names (``""`` for none)."""
    readme = (ROOT / "README.rst").read_text(encoding="utf-8")
    match = re.search(r"pip install [\"']?mantyx-sync(\[[\w,-]+\])?", readme)
    return match[1] or "" if match else ""


def _offline_env(venv: Path) -> dict[str, str]:
    """A user's shell: no MANTYX_* variable, nothing of the checkout, and every
    connection but to 127.0.0.1 sent to a proxy that is not there."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    nowhere = "http://127.0.0.1:9"
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin",
        HTTP_PROXY=nowhere,
        HTTPS_PROXY=nowhere,
        ALL_PROXY=nowhere,
        NO_PROXY="127.0.0.1,localhost",
    )
    return env


@pytest.fixture(scope="module", params=["3.10", "3.13"])
def installed(
    request: pytest.FixtureRequest,
    dists: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Path]:
    """A fresh venv on that Python with the wheel alone installed, as README says."""
    venv = tmp_path_factory.mktemp(f"venv{request.param}") / "venv"
    # Nothing of this run's own Python: a PYTHONPATH to a checkout would make pip
    # take the package for installed already.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    _run(_python(request.param), "-m", "venv", venv, env=env, timeout=120)
    python = venv / "bin" / "python"
    wheel = f"{dists[1]}{_readme_install_extras()}"
    _run(python, "-m", "pip", "install", "-q", wheel, env=env, cwd=venv)
    yield venv


def test_the_console_script_works_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    out = _run(
        installed / "bin" / "mantyx-sync",
        "--help",
        cwd=tmp_path,
        env=_offline_env(installed),
        timeout=60,
    )
    assert out.startswith("usage: mantyx-sync")
    where = _run(
        installed / "bin" / "python",
        "-c",
        f"import {NAME}; print({NAME}.__file__)",
        cwd=tmp_path,
        env=_offline_env(installed),
        timeout=60,
    )
    assert Path(where.strip()).is_relative_to(installed)


def test_the_readmes_first_example_runs_offline_from_the_wheel(
    installed: Path, tmp_path: Path
) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_example(), encoding="utf-8")
    done = subprocess.run(
        [str(installed / "bin" / "python"), str(script)],
        cwd=tmp_path,
        env=_offline_env(installed),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "the example printed nothing"
