"""The examples run green offline: each is a subprocess against the bundled emulator."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIMEOUT_S = 120

needs_mcp = pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None, reason="the MCP example server needs `pip install mcp`"
)


def _a2a_sdk_1x() -> bool:
    if importlib.util.find_spec("a2a") is None or importlib.util.find_spec("uvicorn") is None:
        return False
    try:
        return int(importlib.metadata.version("a2a-sdk").split(".")[0]) >= 1
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False


needs_a2a = pytest.mark.skipif(
    not _a2a_sdk_1x(),
    reason='the A2A example peer needs `pip install "a2a-sdk[http-server]>=1" uvicorn`',
)


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _run_example(name: str, cwd: Path) -> str:
    proc = _run([str(EXAMPLES / name)], cwd)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    assert "local MANTYX emulator" in proc.stdout
    return proc.stdout


def test_quickstart_runs(tmp_path: Path) -> None:
    out = _run_example("quickstart.py", tmp_path)
    # Each model turn on its own line, the tool lines between them.
    assert "Let me count the words and check the clock.\n" in out
    assert '\n  → word_count({"text": "the quick brown fox"})\n' in out
    assert "\n  ✓ word_count → 4  " in out and "\n  → current_time({})\n" in out
    assert "'the quick brown fox' has 4 words" in out
    assert "finished:" in out


def test_local_tools_runs(tmp_path: Path) -> None:
    out = _run_example("local_tools.py", tmp_path)
    assert "convert_temperature -> 70.7" in out
    assert "shout -> HELLO HELLO" in out
    assert '"total_usd": 28.5' in out
    assert "receipt -> receipt attached [receipt-A-1.txt]" in out


def test_sign_in_runs(tmp_path: Path) -> None:
    proc = _run([str(EXAMPLES / "sign_in.py")], tmp_path)
    assert proc.returncode == 0, f"sign_in.py failed:\n{proc.stdout}\n{proc.stderr}"
    out = proc.stdout
    assert "local MANTYX emulator" in out
    assert "TokenSet(access_token=***, refresh_token=***" in out
    assert "Workspace (found through userinfo): test-ws" in out
    assert "run 3: 0/3 run starts left" in out
    assert "run 4: 2/3 run starts left (waited" in out
    assert "refreshed 1 time(s)" in out and "Signed out" in out
    # No token in anything the example printed.
    assert "mantyx_at_" not in out + proc.stderr and "mantyx_rt_" not in out + proc.stderr


@needs_mcp
def test_mcp_local_runs(tmp_path: Path) -> None:
    out = _run_example("mcp_local.py", tmp_path)
    assert "\n  → notes_add_note(" in out and "\n  ✓ notes_add_note → Saved note" in out
    # The upstream "search-notes" is reached through its model-facing name.
    assert "- notes_search_notes: errands: buy milk; shopping: milk" in out
    assert "- notes_read_note: error: " in out and "no note titled 'holidays'" in out
    assert "the MCP server was stopped with it" in out


@needs_a2a
def test_a2a_local_runs(tmp_path: Path) -> None:
    out = _run_example("a2a_local.py", tmp_path)
    assert "A2A peer running at http://127.0.0.1:" in out
    # The second message continues the first one's A2A conversation.
    assert (
        "The echo agent answered: echo #1: Hello from mantyx_sync / echo #2: Do you remember me?"
        in out
    )
    assert out.rstrip().endswith("A2A peer stopped.")


@pytest.mark.parametrize("example", ["serve_flask.py", "serve_django.py"])
def test_serve_examples_answer_over_both_protocols(tmp_path: Path, example: str) -> None:
    proc = _run([str(EXAMPLES / example), "--check"], tmp_path)
    assert proc.returncode == 0, f"{example} failed:\n{proc.stdout}\n{proc.stderr}"
    out = proc.stdout
    assert "local MANTYX emulator" in out
    assert "The agent is served at /a2a/ and /agent-api/process." in out
    assert "A2A card: word_counter at http://127.0.0.1:" in out and "/a2a/\n" in out
    assert "A2A task TASK_STATE_COMPLETED: '3 words.'" in out
    assert "Agent API response completed after" in out
    assert "Agent API answer: '2 words.'" in out


@pytest.mark.parametrize(
    ("example", "module", "advice"),
    [
        ("mcp_local.py", "mcp", "pip install mcp"),
        ("a2a_local.py", "a2a", "pip install"),
        ("serve_flask.py", "flask", "pip install flask"),
        ("serve_django.py", "django", "pip install django"),
    ],
)
def test_examples_explain_a_missing_package(
    tmp_path: Path, example: str, module: str, advice: str
) -> None:
    # A None entry in sys.modules makes the package look uninstalled to the example;
    # examples/ goes first on sys.path, as `python examples/<name>.py` puts it.
    script = (
        "import runpy, sys\n"
        f"sys.modules[{module!r}] = None\n"
        f"sys.path.insert(0, {str(EXAMPLES)!r})\n"
        f"sys.argv = [{str(EXAMPLES / example)!r}]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    proc = _run(["-c", script], tmp_path)
    assert proc.returncode == 1
    assert advice in proc.stderr


def test_history_runs(tmp_path: Path) -> None:
    out = _run_example("history.py", tmp_path)
    assert "odd runs (the server counts 6):" in out
    assert out.count("'Question ") >= 6
    assert "#1 user: My name is Ada." in out and "#4 assistant:" in out


def test_attachments_runs(tmp_path: Path) -> None:
    out = _run_example("attachments.py", tmp_path)
    assert "- quarterly-notes.txt (text/plain, 230 bytes)" in out
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.4\n" + b"0" * 991)
    proc = _run([str(EXAMPLES / "attachments.py"), str(pdf)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "- report.pdf (application/pdf, 1000 bytes)" in proc.stdout
    bad = tmp_path / "archive.zip"
    bad.write_bytes(b"PK")
    proc = _run([str(EXAMPLES / "attachments.py"), str(bad)], tmp_path)
    assert proc.returncode == 2 and "cannot attach" in proc.stderr


def test_evals_runs(tmp_path: Path) -> None:
    out = _run_example("evals.py", tmp_path)
    assert "dataset ds_" in out and "'forecasts', 3 cases" in out
    assert out.count("    -> forecast(") == 3
    assert "succeeded: 3/3 cases passed" in out
    assert "Tomorrow in Oslo: snow, -3 C." in out


def test_plans_runs(tmp_path: Path) -> None:
    out = _run_example("plans.py", tmp_path)
    assert "turns: 0" in out
    assert "revision 1: Release note for 2.0\n    [~] Collect the changes" in out
    assert "revision 4: Release note for 2.0" in out and "    [x] Proofread" in out
    assert "Version 2.0 brings plans" in out
