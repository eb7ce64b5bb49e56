"""mantyx_sync: the synchronous Python SDK for MANTYX agent runs.

Run agents from plain blocking Python — scripts, notebooks, Django/Flask
views, cron jobs, Celery workers — with local tools answered on a thread pool
while the caller's thread reads the event stream::

    import mantyx_sync

    @mantyx_sync.local_tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    agent = mantyx_sync.Agent(system_prompt="You are terse.", tools=[add])
    print(agent.run("What is 2 + 3?").text)

Set ``MANTYX_LOG=debug`` to log every request and event (secrets redacted).
"""

from __future__ import annotations

import importlib
import logging
import os
from typing import Any

from . import errors as _errors
from ._base.lazy import load_lazily
from ._base.redact import RedactingFormatter
from ._version import __version__ as __version__

# The error classes are tiny and stdlib-only: loaded eagerly, so `except
# mantyx_sync.MantyxError` never triggers an import (their names: errors.__all__).
from .errors import *  # noqa: F403

# Each public name, stated once: the module that defines it -> its names. They
# load on first use (PEP 562), so ``import mantyx_sync`` stays cheap and a run
# that needs no MCP server, A2A peer, evaluation or sign-in never imports them.
# __init__.pyi states the same names for type checkers
# (tests/core/test_public_names.py checks that they agree).
_LAZY: dict[str, str] = {
    ".types": "UNSET UnsetType",
    ".text": "TextPiece",
    ".local_tools": "LocalTool define_local_tool local_tool",
    ".tools": (
        "A2ATool ClientResolvedTool MantyxTool McpTool PluginTool ServerResolvedTool"
        " ToolActivity ToolConnection ToolLike ToolOutput"
    ),
    ".spec": "AgentSpec OverrideKeywords SpecKeywords",
    ".guards": "LoopDetection OutputSchema ToolBudget",
    ".controls": "Plan ReasoningTrigger Supervisor",
    ".attachments": "Attachment",
    ".messages": "Message",
    ".events": (
        "AnyRunEvent AssistantDelta AssistantMessage ErrorPayload EventType LocalToolCall"
        " ResultPayload RunEvent ThinkingDelta ToolCallEvent ToolResultEvent"
    ),
    ".results": "Model ModelCatalog Pricing RunResult RunSnapshot SessionInfo",
    ".paging": "Listing",
    ".history": "EventReplay RunSummary SessionEvent SessionSummary",
    ".feedback": "Feedback",
    ".auth": "TokenSet TokenSource",
    ".config": "ClientConfig",
    ".rate_limits": "RateLimit RateLimits",
    ".transport": "HttpRequest HttpResponse Transport",
    ".a2a": "A2AConnection LocalA2A define_local_a2a",
    ".agent_api": "AgentApiConnection LocalAgentApi define_local_agent_api",
    ".mcp": "LocalMcp McpConnection define_local_mcp",
    ".run": "Run",
    ".session": "Session",
    ".resources": "Feedbacks Models Runs Sessions",
    ".client": "Client",
    ".agent": "Agent",
    ".oauth": "OAuth RefreshingTokenSource ServerMetadata UserInfo",
}
# Names that moved to the public module they are defined in: they still work
# from here for one release, each use with a DeprecationWarning naming the new
# spelling (mantyx_sync.events.TokenUsage).
_MOVED: dict[str, str] = {
    ".events": (
        "CancelledPayload EventPayload LocalToolResultIn LoopDetected ModelFallback ModelInfo"
        " PlanStep PlanTransition Started StructuredOutputInfo SupervisorVerdict TaskPlan"
        " TaskPlanUpdate TokenUsage ToolBudgetExceeded ToolFile ToolFiles UnknownPayload"
    ),
    ".evals": (
        "EvalCase EvalCaseComparison EvalCaseResult EvalComparison EvalDataset EvalDatasetSummary"
        " EvalRun EvalRunDetail EvalRunSummary Evals"
    ),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names.split()}
_HOME_OF = {name: module for module, names in _MOVED.items() for name in names.split()}

# Sorted as ruff sorts a written __all__ (RUF022): CONSTANTS, Classes, the rest.
__all__ = tuple(
    sorted(
        {"__version__", *_errors.__all__, *_MODULE_OF},
        key=lambda name: (0 if name.isupper() else 1 if name[:1].isupper() else 2, name),
    )
)

# Public submodules reachable as attributes without importing them first.
_SUBMODULES = frozenset({"credentials", "evals", "events", "feedback", "history", "oauth"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    old = _errors.renamed(name)  # a deprecated name: warns, and is not cached so it always does
    if old is not None:
        return old
    home = _HOME_OF.get(name)
    if home is not None:
        _errors.moved(name, f"{__name__}{home}")
        return getattr(importlib.import_module(home, __name__), name)
    return load_lazily(name, _MODULE_OF, __name__, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


_log = logging.getLogger("mantyx_sync")
_log.addHandler(logging.NullHandler())


def _configure_from_env() -> None:
    # MANTYX_LOG=debug|info|warning switches logging on for a script without code changes.
    level = os.environ.get("MANTYX_LOG", "").strip().upper()
    if level in ("DEBUG", "INFO", "WARNING", "ERROR"):
        handler = logging.StreamHandler()
        handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        _log.addHandler(handler)
        _log.setLevel(level)


_configure_from_env()
