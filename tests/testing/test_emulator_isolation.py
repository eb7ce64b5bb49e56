"""The emulator must not import the SDK, so an SDK bug cannot hide an emulator bug.

It shares only the foundation (its argument checker and documented limits), which
imports nothing else of the package.
"""

from __future__ import annotations

import ast
import pathlib

import mantyx_sync.testing

# argcheck and the documented limits for the emulator; redact and the transport
# hook for cassettes, which record what the SDK sends through the hook, masked
# the way the SDK masks it; the errors (stdlib only), so a CassetteError is a
# MantyxError; and the lazy loading of the package's names.
ALLOWED = {
    "mantyx_sync._version",
    "mantyx_sync._base.argcheck",
    "mantyx_sync._base.lazy",
    "mantyx_sync._base.limits",
    "mantyx_sync._base.redact",
    "mantyx_sync._base.transport_hook",
    "mantyx_sync.errors",
}


def _is_sdk(name: str) -> bool:
    return (
        name.startswith("mantyx_sync")
        and not name.startswith("mantyx_sync.testing")
        and (name not in ALLOWED)
    )


def test_emulator_modules_import_nothing_from_the_sdk() -> None:
    package = pathlib.Path(mantyx_sync.testing.__file__).parent
    offenders = []
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 0 and _is_sdk(node.module or ""):
                    offenders.append(f"{path.name}: from {node.module}")
                module = f"mantyx_sync.{node.module}"
                # "from .._base import limits" imports the module mantyx_sync._base.limits
                submodules = [f"{module}.{alias.name}" for alias in node.names]
                if node.level == 2 and _is_sdk(module) and any(map(_is_sdk, submodules)):
                    offenders.append(f"{path.name}: from {module}")
                if node.level > 2:
                    offenders.append(f"{path.name}: relative import above mantyx_sync/")
            elif isinstance(node, ast.Import):
                offenders += [
                    f"{path.name}: import {a.name}" for a in node.names if _is_sdk(a.name)
                ]
    assert offenders == []


def test_public_names() -> None:
    assert set(mantyx_sync.testing.__all__) >= {
        "LocalMantyx",
        "Turn",
        "ToolCall",
        "Fail",
        "FailResult",
        "Emit",
        "Faults",
        "RecordedRequest",
    }
    for name in mantyx_sync.testing.__all__:
        assert getattr(mantyx_sync.testing, name).__doc__
