"""Every public class says where it lives, and lives there (issue 30 item 8).

A class's ``__module__`` is what ``repr``, tracebacks, ``help()``, pickling and
``inspect.getsource`` read. Each public class is *defined* in a public module
(no leading-underscore part in its dotted path), so all of them agree: the
module it names is one a user can import it from, and its source is found there.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pydoc
import subprocess
import sys
import textwrap

import pytest

import mantyx_sync

# The namespaces whose public classes a user meets by name.
NAMESPACES = (
    "mantyx_sync",
    "mantyx_sync.events",
    "mantyx_sync.evals",
    "mantyx_sync.oauth",
    "mantyx_sync.testing",
)


def _public_classes() -> dict[str, type]:
    """``"mantyx_sync.events.AssistantDelta"`` -> the class, under each public spelling."""
    found: dict[str, type] = {}
    for space in NAMESPACES:
        module = importlib.import_module(space)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value):
                found[f"{space}.{name}"] = value
    return found


PUBLIC = _public_classes()


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def test_the_walk_sees_every_namespace() -> None:
    spaces = {where.rpartition(".")[0] for where in PUBLIC}
    assert set(NAMESPACES) <= spaces
    assert len(set(PUBLIC.values())) > 100


def test_no_public_class_reports_a_private_module() -> None:
    private = sorted(
        f"{where}: {cls.__module__}.{cls.__qualname__}"
        for where, cls in PUBLIC.items()
        if _private(cls.__module__)
    )
    assert private == []


@pytest.mark.parametrize("where", sorted(PUBLIC))
def test_a_public_class_is_found_where_it_says_it_lives(where: str) -> None:
    cls = PUBLIC[where]
    home = importlib.import_module(cls.__module__)
    assert getattr(home, cls.__qualname__) is cls
    # Its source is its own class statement (decorators above it allowed): what
    # IPython's ``Agent??``, debuggers, pytest and Sphinx show.
    source = inspect.getsource(cls)
    (statement,) = ast.parse(textwrap.dedent(source)).body
    assert isinstance(statement, ast.ClassDef), (where, source[:200])
    assert statement.name == cls.__name__, (where, source[:200])


def test_repr_names_the_public_module() -> None:
    import mantyx_sync.events

    assert repr(mantyx_sync.events.AssistantDelta) == "<class 'mantyx_sync.events.AssistantDelta'>"
    assert repr(mantyx_sync.evals.EvalCase) == "<class 'mantyx_sync.evals.EvalCase'>"
    assert repr(mantyx_sync.MantyxError) == "<class 'mantyx_sync.errors.MantyxError'>"


def test_help_names_a_public_module() -> None:
    shown = pydoc.render_doc(mantyx_sync.Agent, renderer=pydoc.plaintext)
    module = shown.split(" in module ", 1)[1].split()[0]
    assert module == mantyx_sync.Agent.__module__ and not _private(module), module


def test_a_traceback_names_the_public_module() -> None:
    code = textwrap.dedent(
        """
        import mantyx_sync
        raise mantyx_sync.RunError("the run failed", run_id="run_1")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith("mantyx_sync.errors.RunError: ")
