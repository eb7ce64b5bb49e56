"""What a plain script and ``mantyx-sync --help`` load: deferred modules stay off their path.

Not timed (speed lives in benchmarks/): these check ``sys.modules`` of a fresh
interpreter, so a change that puts a deferred module back on the import path
of a plain run fails here instead of silently costing every script its import
time and memory (benchmarks/README.md, rows 4b, 5 and 7).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

# Needed only once a request has to be retried.
RETRY_ONLY = ("tenacity", "asyncio", "tornado")
# Loaded by the first body of a shape the plain path leaves to cattrs, tool schema
# or output-schema check (typing_extensions: only with cattrs, or when the caller's
# types use it).
ON_FIRST_USE = ("cattrs", "fastjsonschema", "typing_extensions")
# Loaded by a notebook's rendering of a result (html's entity table is ~0.4 MiB).
DISPLAY_ONLY = ("html",)
# Features a plain script does not use: imported by the methods that do.
RARELY_USED = (
    "mantyx_sync.evals",
    "mantyx_sync._engine.eval_cases",
    "mantyx_sync.history",
    "mantyx_sync.feedback",  # loaded by the first feedback sent
    "mantyx_sync.paging",  # listings: history, feedback, evaluations
    "mantyx_sync.oauth",
    "mantyx_sync.credentials",
    "mantyx_sync._peers",
    "mantyx_sync.serve",
    "mantyx_sync.cli",
    "mantyx_sync.notebook",
    "mantyx_sync._display",  # a run rendered for a notebook
    "mantyx_sync._tools.signature",  # schemas derived from a function's signature
    "mantyx_sync._tools.schema",  # ... or from a model class, with its docstrings
    "mantyx_sync._tools.docstring",
)

# The engine: requests (with ssl, http.client, email) and the HTTP stack are
# imported by the first Client(), runs and sessions by the first call that
# makes one, and the results' classes with them.
ENGINE = (
    "requests",
    "urllib3",
    "ssl",
    "http.client",
    "email",
    "mantyx_sync._http",
    "mantyx_sync._engine.resolution",
    "mantyx_sync.run",
    "mantyx_sync.session",
    "mantyx_sync.results",
)


def _loaded_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``code``."""
    script = code + "\nimport json as _j, sys as _s\nprint(_j.dumps(sorted(_s.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _offenders(loaded: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_importing_what_a_plain_script_uses_loads_no_deferred_module() -> None:
    loaded = _loaded_after("from mantyx_sync import Agent, Client, local_tool")
    assert "mantyx_sync.client" in loaded  # the import did load the client
    deferred = RETRY_ONLY + ON_FIRST_USE + DISPLAY_ONLY + RARELY_USED + ENGINE
    assert _offenders(loaded, deferred) == []


def test_the_first_client_checks_the_argument_types_its_deferred_modules_name() -> None:
    # Client()'s annotations name requests.Session and Transport, which its module
    # imports only with that first call: a wrong type still fails at once.
    code = textwrap.dedent(
        """
        from mantyx_sync import ArgumentTypeError, Client
        for name in ("http_session", "transport"):
            try:
                Client("mantyx_k", workspace="w", **{name: object()})
            except ArgumentTypeError as exc:
                assert f"{name} must be" in str(exc), str(exc)
            else:
                raise AssertionError(name + " was not checked")
        """
    )
    assert "requests" in _loaded_after(code)


def _plain_run(server: LocalMantyx) -> set[str]:
    """What a script running one turn with one local tool (given as JSON Schema) loads."""
    server.set_model([Turn(tool_calls=[ToolCall("noop", {})]), Turn("done")])
    code = textwrap.dedent(
        f"""
        from mantyx_sync import Agent, Client, define_local_tool

        noop = define_local_tool(
            name="noop",
            description="Do nothing.",
            parameters={{"type": "object", "properties": {{}}, "additionalProperties": False}},
            execute=lambda args: "ok",
        )
        with Client({server.api_key!r}, workspace={server.workspace!r},
                    base_url={server.base_url!r}) as client:
            result = Agent(client, system_prompt="s", tools=[noop]).run("go")
        assert result.text == "done", result.text
        """
    )
    return _loaded_after(code)


def test_a_plain_run_loads_no_retry_machinery_and_no_rare_feature(
    mantyx_server: LocalMantyx,
) -> None:
    loaded = _plain_run(mantyx_server)
    assert _offenders(loaded, RETRY_ONLY + DISPLAY_ONLY + RARELY_USED) == []


def test_a_plain_run_never_loads_cattrs(mantyx_server: LocalMantyx) -> None:
    # Its spec body, its tool call and its result are the documented shapes,
    # which each wire class's plain path builds (_models/plan.py).
    loaded = _plain_run(mantyx_server)
    assert "mantyx_sync._models.plan" in loaded
    assert _offenders(loaded, ("cattrs",)) == []


# `mantyx-sync --help` needs argparse and the parser, nothing of the SDK's run
# machinery: each command imports what it uses when it runs.
NOT_FOR_HELP = (
    "requests",
    "urllib3",
    "attrs",
    "werkzeug",
    "mantyx_sync.client",
    "mantyx_sync.run",
    "mantyx_sync.spec",
    "mantyx_sync.events",
    "mantyx_sync._http",
    "mantyx_sync._engine",
    "mantyx_sync._tools",
    "mantyx_sync._peers",
    "mantyx_sync.testing",
    "mantyx_sync.cli._commands",
    "mantyx_sync.cli._chat",
)


def test_cli_help_loads_the_parser_and_no_sdk_machinery() -> None:
    # What the `mantyx-sync` console script does (setup.cfg: mantyx_sync.cli:console_main).
    code = textwrap.dedent(
        """
        import sys
        sys.argv = ["mantyx-sync", "--help"]
        from mantyx_sync.cli import console_main
        try:
            console_main()
        except SystemExit as exit:
            assert exit.code == 0, exit.code
        """
    )
    loaded = _loaded_after(code)
    assert "mantyx_sync.cli._parser" in loaded  # the help did come from the parser
    assert _offenders(loaded, NOT_FOR_HELP) == []


PLUGIN = "mantyx_sync.testing.pytest_plugin"
PLAIN_TEST = """
import sys

def test_nothing_of_the_emulator_is_loaded():
    heavy = ("requests", "urllib3", "werkzeug", "mantyx_sync.testing.")
    plugin = "mantyx_sync.testing.pytest_plugin"
    assert sorted(m for m in sys.modules if m.startswith(heavy) and m != plugin) == []
"""
USING_TEST = """
import pytest

def test_the_server_fixture_still_works(mantyx_server):
    assert mantyx_server.client().models().default_model_id

@pytest.mark.mantyx_cassette("kept", record_mode="all")
def test_the_marker_still_works(mantyx_cassette):
    assert mantyx_cassette.path.name == "kept.json"
"""


def test_the_pytest_plugin_loads_nothing_until_a_test_uses_it(tmp_path: Path) -> None:
    # The plugin is loaded by every pytest run where the package is installed
    # (setup.cfg's pytest11 entry point): as that, and with nothing else loaded.
    (tmp_path / "test_a_plain.py").write_text(PLAIN_TEST, encoding="utf-8")
    (tmp_path / "test_b_using.py").write_text(USING_TEST, encoding="utf-8")
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", PLUGIN, "-p", "no:cacheprovider", "."],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONPATH": os.pathsep.join([root, *sys.path]),
        },
    )
    assert "3 passed" in done.stdout, done.stdout + done.stderr
