"""The public surface: exactly the promised names, all importable and documented; py.typed ships."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mantyx_sync

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "mantyx_sync"

EXPECTED = {
    # facades and the run handle
    "Client",
    "Agent",
    "Session",
    "Run",
    "AnyRunEvent",
    # what a Client reaches: client.runs, .sessions, .feedback, .models
    "Runs",
    "Sessions",
    "Feedbacks",
    "Models",
    # spec values
    "AgentSpec",
    "LoopDetection",
    "OutputSchema",
    "ToolBudget",
    "Supervisor",
    "ReasoningTrigger",
    "Plan",
    # the spec keywords, for typing a wrapper that passes them on (**Unpack[SpecKeywords])
    "SpecKeywords",
    "OverrideKeywords",
    # conversation input
    "Message",
    "Attachment",
    # tool references and definitions
    "MantyxTool",
    "PluginTool",
    "A2ATool",
    "McpTool",
    "LocalTool",
    "ClientResolvedTool",
    "ServerResolvedTool",
    "ToolLike",
    "ToolConnection",
    "ToolOutput",
    "ToolActivity",
    "SchemaWarning",
    "define_local_tool",
    "local_tool",
    "define_local_mcp",
    "define_local_a2a",
    "define_local_agent_api",
    "LocalMcp",
    "LocalA2A",
    "LocalAgentApi",
    "McpConnection",
    "A2AConnection",
    "AgentApiConnection",
    # what comes back
    "RunEvent",
    "TextPiece",
    "RunResult",
    "RunSnapshot",
    "SessionInfo",
    "ModelCatalog",
    "Model",
    "Pricing",
    "RateLimit",
    "RateLimits",
    "ClientConfig",
    "UNSET",
    "UnsetType",
    # events and the payloads written every day (the others: mantyx_sync.events)
    "EventType",
    "AssistantDelta",
    "ThinkingDelta",
    "AssistantMessage",
    "ToolCallEvent",
    "ToolResultEvent",
    "LocalToolCall",
    "ResultPayload",
    "ErrorPayload",
    # history
    "RunSummary",
    "SessionSummary",
    "SessionEvent",
    "EventReplay",
    "Listing",
    "Feedback",
    # OAuth
    "OAuth",
    "RefreshingTokenSource",
    "ServerMetadata",
    "UserInfo",
    "TokenSet",
    "TokenSource",
    # the transport seam: Client(transport=...)
    "Transport",
    "HttpRequest",
    "HttpResponse",
    # errors
    "MantyxError",
    "ConfigurationError",
    "SpecError",
    "ArgumentTypeError",
    "APIConnectionError",
    "ConnectError",
    "RequestTimeoutError",
    "StreamError",
    "APIStatusError",
    "InvalidRequestError",
    "AuthError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "ServerError",
    "SignInError",
    "RunError",
    "RunCancelledError",
    "RunTimeoutError",
    "OutputParseError",
    "ToolError",
    "ToolResolutionError",
    "WireFormatError",
    "__version__",
}


def test_all_is_exactly_the_promised_names() -> None:
    assert len(mantyx_sync.__all__) == len(set(mantyx_sync.__all__)), "duplicates in __all__"
    assert set(mantyx_sync.__all__) == EXPECTED


def test_all_is_sorted() -> None:
    # ruff's RUF022 order: CONSTANTS, then Classes, then the rest, each alphabetical;
    # the stub's __all__ is the one written out.
    def group(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)

    assert list(mantyx_sync.__all__) == sorted(mantyx_sync.__all__, key=group)
    stub = ast.parse((PACKAGE / "__init__.pyi").read_text(encoding="utf-8"))
    (written,) = [
        ast.literal_eval(node.value)
        for node in stub.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
    ]
    assert written == list(mantyx_sync.__all__)


def test_every_name_is_importable() -> None:
    namespace: dict[str, Any] = {}
    exec("from mantyx_sync import *", namespace)
    assert set(namespace) >= EXPECTED
    for name in EXPECTED:
        assert getattr(mantyx_sync, name) is namespace[name]


def test_version() -> None:
    assert isinstance(mantyx_sync.__version__, str)
    assert mantyx_sync.__version__.count(".") >= 2


def test_errors_form_one_tree() -> None:
    errors = [
        getattr(mantyx_sync, n)
        for n in EXPECTED
        if isinstance(getattr(mantyx_sync, n), type)
        and issubclass(getattr(mantyx_sync, n), BaseException)
        and not issubclass(getattr(mantyx_sync, n), Warning)
    ]
    assert len(errors) == 24
    for cls in errors:
        assert issubclass(cls, mantyx_sync.MantyxError)
        assert cls.__name__.endswith("Error"), cls
    # The status errors share one base, the failures to get an answer another.
    status = {"InvalidRequestError", "AuthError", "PermissionDeniedError", "NotFoundError"}
    status |= {"ConflictError", "RateLimitError", "ServerError"}
    for name in status:
        assert issubclass(getattr(mantyx_sync, name), mantyx_sync.APIStatusError)
    for name in ("ConnectError", "RequestTimeoutError", "StreamError"):
        assert issubclass(getattr(mantyx_sync, name), mantyx_sync.APIConnectionError)
    for name in ("ConfigurationError", "SpecError", "OutputParseError", "WireFormatError"):
        assert issubclass(getattr(mantyx_sync, name), ValueError)
    # A wrong type is caught as the SpecError or ConfigurationError it was, and as a TypeError.
    for base in (mantyx_sync.SpecError, mantyx_sync.ConfigurationError, TypeError):
        assert issubclass(mantyx_sync.ArgumentTypeError, base)


def _own_public_members(cls: type) -> list[tuple[str, Any]]:
    members = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property) or inspect.isfunction(value):
            members.append((name, value))
    return members


# Exported values that are neither classes nor functions, so carry no docstring.
VALUES = {
    "AnyRunEvent": "the union of the typed events, one per type",
    "EventPayload": "the union of the typed payload classes",
    "EventType": "the Literal of the known event types",
    "ToolLike": "the union of what tools= takes",
    "UNSET": "a sentinel",
}


@pytest.mark.parametrize("name", sorted(EXPECTED - {"__version__"} - set(VALUES)))
def test_public_names_have_docstrings(name: str) -> None:
    obj = getattr(mantyx_sync, name)
    assert inspect.isclass(obj) or callable(obj)
    doc = obj.__doc__
    assert doc and doc.strip(), f"mantyx_sync.{name} has no docstring"
    if inspect.isclass(obj):
        missing = [m for m, value in _own_public_members(obj) if not (value.__doc__ or "").strip()]
        assert missing == [], f"{name} members without a docstring: {missing}"


# Modules that break STYLE §9.1 today; each is an SDK finding, not an exemption.


def _modules() -> list[Any]:
    names = ["mantyx_sync"]
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="mantyx_sync."):
        names.append(info.name)
    return [n for n in sorted(names)]


@pytest.mark.parametrize("module_name", _modules())
def test_every_module_declares_all(module_name: str) -> None:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # an optional extra that is not installed
        pytest.skip(f"{module_name}: {exc}")
    declared = getattr(module, "__all__", None)
    assert declared is not None, f"{module_name} has no __all__"
    for name in declared:
        assert hasattr(module, name), f"{module_name}.__all__ names missing {name!r}"


def test_py_typed_is_in_the_package() -> None:
    marker = PACKAGE / "py.typed"
    assert marker.is_file()
    assert Path(mantyx_sync.__file__).parent / "py.typed" == marker


def test_py_typed_ships_in_a_build(tmp_path: Path) -> None:
    # build_py applies setup.cfg's package_data exactly as a wheel build does;
    # it runs on a copy so the working tree gets no build/ or egg-info changes.
    source = tmp_path / "src"
    source.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.rst"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(PACKAGE, source / "mantyx_sync", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "lib"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import setuptools; setuptools.setup()",
            "-q",
            "build_py",
            "-d",
            str(out),
        ],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (out / "mantyx_sync" / "py.typed").is_file()
    assert (out / "mantyx_sync" / "testing" / "pytest_plugin.py").is_file()


TYPED_USAGE = '''
from __future__ import annotations

from pathlib import Path

import mantyx_sync
from mantyx_sync import A2ATool, Agent, Client, MantyxTool, McpTool, ModelCatalog, PluginTool
from mantyx_sync import LoopDetection, RunResult


@mantyx_sync.local_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mantyx_sync.local_tool(name="shout", long_running=True, timeout=5.0)
def upper(text: str) -> str:
    """Shout."""
    return text.upper()


echo = mantyx_sync.define_local_tool(
    name="echo", parameters={"type": "object"}, execute=lambda args: str(args)
)


def main() -> None:
    client = Client("mantyx_key", workspace="w", request_timeout=(2.0, 30.0), max_retries=2)
    catalog: ModelCatalog = client.models.list()
    print(catalog.default_model_id, add(1, 2))
    tools: list[mantyx_sync.ToolLike] = [
        add,
        upper,
        echo,
        MantyxTool("t"),
        PluginTool("web_search"),
        A2ATool("a", "https://x", headers={"A": "b"}, context_id="c"),
        McpTool("m", "https://y", headers={"A": "b"}),
    ]
    agent = Agent(client, system_prompt="p", tools=tools, loop_detection=False, tool_budgets={})
    result: RunResult = agent.run("hi")
    text: str = result.text
    print(text, result.tokens.total_tokens if result.tokens else 0)
    with agent.stream("hi") as run:
        for event in run:
            print(event.type, event.text)
    with agent.stream("hi") as run:
        for piece in run.text_stream(thinking=True):
            print(piece, end="", flush=True)
    agent.run(messages=[("user", "hi")], attachments=[Path("report.pdf")])
    agent.run(messages=[{"role": "user", "content": "hi"}])
    history: list[mantyx_sync.Message] = agent.session().history()
    agent.run(messages=[*history, mantyx_sync.Message("user", "and now?")])
    with agent.session() as chat:
        chat.run("x", reasoning_level="low")
    with agent.session(model_id="m", plan="required", loop_detection=LoopDetection()) as chat:
        chat.run("x", tools=[add], supervisor=True, metadata={"k": "v"})
    client.sessions.create(agent.spec, fallback_model_id="m2").end()
    try:
        client.runs.get("r")
    except mantyx_sync.APIStatusError as exc:
        status: int = exc.status
        print(status, exc.hint)
'''


def _mypy_strict(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy")
    script = tmp_path / "user_code.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(REPO)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            "user_code.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_typed_usage_passes_mypy_strict(tmp_path: Path) -> None:
    # py.typed promises that user code type-checks against our annotations.
    done = _mypy_strict(tmp_path, TYPED_USAGE)
    assert done.returncode == 0, done.stdout + done.stderr


# Each line marked "# wrong" must be an error to a type checker: every surface
# that takes spec keywords is typed by their one declaration.
SPEC_KEYWORD_MISTAKES = """
from mantyx_sync import Agent, Client


def main(client: Client) -> None:
    Agent(client, modle_id="m")  # wrong
    Agent(client, loop_detection="off")  # wrong
    Agent(client, supervisor="yes", plan=3)  # wrong
    client.sessions.create(fallback_model_id=1)  # wrong
    agent = Agent(client, system_prompt="p")
    with agent.session(tool_budgets=["add"]) as chat:  # wrong
        chat.run("x", model_id="m")  # wrong
        chat.start("x", reasoning_levle="low")  # wrong
        chat.stream("x", metadata={"k": 1})  # wrong
"""


def test_a_wrong_spec_keyword_or_type_fails_mypy_strict(tmp_path: Path) -> None:
    done = _mypy_strict(tmp_path, SPEC_KEYWORD_MISTAKES)
    lines = SPEC_KEYWORD_MISTAKES.splitlines()
    wrong = {n for n, line in enumerate(lines, start=1) if line.endswith("# wrong")}
    flagged = {int(n) for n in re.findall(r"^user_code\.py:(\d+): error", done.stdout, re.M)}
    assert flagged == wrong, done.stdout


# event.type is a Literal of the known types: a misspelt comparison is an error.
EVENT_TYPE_MISTAKES = """
from mantyx_sync import Agent, RunEvent


def show(agent: Agent, event: RunEvent) -> None:
    if event.type == "assistant_delta" or event.type in ("task_plan", "case_completed"):
        print(event.text)
    if event.type == "asistant_delta":  # wrong
        print(event.text)
    with agent.stream("hi") as run:
        for streamed in run:
            if streamed.type != "local_tool_cal":  # wrong
                print(streamed.type)
"""


def test_a_misspelt_event_type_fails_mypy_strict(tmp_path: Path) -> None:
    done = _mypy_strict(tmp_path, EVENT_TYPE_MISTAKES)
    lines = EVENT_TYPE_MISTAKES.splitlines()
    wrong = {n for n, line in enumerate(lines, start=1) if line.endswith("# wrong")}
    flagged = {int(n) for n in re.findall(r"^user_code\.py:(\d+): error", done.stdout, re.M)}
    assert flagged == wrong, done.stdout
    assert "Non-overlapping" in done.stdout


def test_mcp_tool_filter_type_checks(tmp_path: Path) -> None:
    code = (
        "from mantyx_sync import McpTool\n"
        'McpTool("m", "https://y", tool_filter=["search_repos"])\n'
        'McpTool("m", "https://y", tool_filter=("search_repos",))\n'
    )
    done = _mypy_strict(tmp_path, code)
    assert done.returncode == 0, done.stdout + done.stderr


def test_package_is_mypy_clean(tmp_path: Path) -> None:
    # The project's own strict mypy configuration (pyproject.toml) over mantyx_sync/.
    pytest.importorskip("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _user_docs() -> str:
    """What a user reads: README.rst and the guide in docs/."""
    pages = [REPO / "README.rst", *sorted((REPO / "docs").rglob("*.rst"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def _readme_imports() -> list[tuple[str, str]]:
    """``(module, name)`` for each ``from mantyx_sync... import ...`` in the user docs."""
    text = _user_docs()
    found = []
    for line in text.splitlines():
        match = re.match(r"\s*(?:>>> )?from (mantyx_sync[\w.]*) import ([\w, ]+)$", line)
        if match:
            for name in match.group(2).split(","):
                found.append((match.group(1), name.strip().split(" as ")[0]))
    return found


def test_every_import_the_readme_shows_still_works() -> None:
    # Issue 9: moving code into private folders moved nothing a user imports.
    imports = _readme_imports()
    assert ("mantyx_sync.testing", "ToolCall") in imports  # the scan sees the guide
    for module, name in imports:
        owner = importlib.import_module(module)
        assert hasattr(owner, name) or importlib.util.find_spec(f"{module}.{name}"), (module, name)


def test_every_dotted_name_the_readme_shows_still_resolves() -> None:
    text = _user_docs()
    names = set(re.findall(r"\bmantyx_sync(?:\.[A-Za-z_]\w*)+", text))
    assert "mantyx_sync.notebook.show" in names
    for dotted in sorted(names):
        obj: Any = mantyx_sync
        for depth, part in enumerate(dotted.split(".")[1:], start=2):
            if hasattr(obj, part):
                obj = getattr(obj, part)
            else:
                obj = importlib.import_module(".".join(dotted.split(".")[:depth]))
    for module in re.findall(r"python -m (mantyx_sync[\w.]*)", text):
        assert importlib.util.find_spec(module), module
