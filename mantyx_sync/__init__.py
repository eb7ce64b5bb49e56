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
from typing import TYPE_CHECKING, Any

from ._base.redact import RedactingFormatter
from ._version import __version__

# The error classes are tiny and stdlib-only: loaded eagerly, so `except
# mantyx_sync.MantyxError` never triggers an import.
from .errors import (
    APIError,
    ArgumentTypeError,
    AuthError,
    ConfigurationError,
    ConflictError,
    ConnectError,
    InvalidRequestError,
    MantyxError,
    NotFoundError,
    OutputParseError,
    PermissionDenied,
    RateLimitError,
    RunCancelled,
    RunError,
    ServerError,
    SignInError,
    SpecError,
    StreamError,
    TimeoutError_,
    ToolError,
    ToolResolutionError,
    TransportError,
)

if TYPE_CHECKING:
    from ._engine.executor import ToolActivity
    from ._http.auth import TokenSet, TokenSource
    from ._http.ratelimit import RateLimit
    from ._peers.a2a.toolset import LocalA2A, define_local_a2a
    from ._peers.agent_api.toolset import LocalAgentApi, define_local_agent_api
    from ._peers.mcp.toolset import LocalMcp, define_local_mcp
    from ._tools.local_tool import LocalTool, define_local_tool, local_tool
    from .agent import Agent
    from .client import Client
    from .events import RunEvent, StructuredOutputInfo, TaskPlan
    from .feedback import Feedback
    from .history import RunSummary, SessionEvent, SessionSummary
    from .messages import Attachment, Message
    from .oauth import OAuth
    from .results import ModelCatalog, RunResult, RunSnapshot, SessionInfo
    from .run import Run
    from .session import Session
    from .spec import (
        AgentSpec,
        LoopDetection,
        OutputSchema,
        Plan,
        ReasoningTrigger,
        Supervisor,
        ToolBudget,
    )
    from .tools import (
        A2ATool,
        ClientResolvedTool,
        MantyxTool,
        McpTool,
        PluginTool,
        ToolConnection,
        ToolOutput,
    )

__all__ = (
    "A2ATool",
    "APIError",
    "Agent",
    "AgentSpec",
    "ArgumentTypeError",
    "Attachment",
    "AuthError",
    "Client",
    "ClientResolvedTool",
    "ConfigurationError",
    "ConflictError",
    "ConnectError",
    "Feedback",
    "InvalidRequestError",
    "LocalA2A",
    "LocalAgentApi",
    "LocalMcp",
    "LocalTool",
    "LoopDetection",
    "MantyxError",
    "MantyxTool",
    "McpTool",
    "Message",
    "ModelCatalog",
    "NotFoundError",
    "OAuth",
    "OutputParseError",
    "OutputSchema",
    "PermissionDenied",
    "Plan",
    "PluginTool",
    "RateLimit",
    "RateLimitError",
    "ReasoningTrigger",
    "Run",
    "RunCancelled",
    "RunError",
    "RunEvent",
    "RunResult",
    "RunSnapshot",
    "RunSummary",
    "ServerError",
    "Session",
    "SessionEvent",
    "SessionInfo",
    "SessionSummary",
    "SignInError",
    "SpecError",
    "StreamError",
    "StructuredOutputInfo",
    "Supervisor",
    "TaskPlan",
    "TimeoutError_",
    "TokenSet",
    "TokenSource",
    "ToolActivity",
    "ToolBudget",
    "ToolConnection",
    "ToolError",
    "ToolOutput",
    "ToolResolutionError",
    "TransportError",
    "__version__",
    "define_local_a2a",
    "define_local_agent_api",
    "define_local_mcp",
    "define_local_tool",
    "local_tool",
)

# Public names load on first use (PEP 562), so ``import mantyx_sync`` stays cheap
# and a run that needs no MCP server or A2A peer never imports those clients.
_LAZY: dict[str, str] = {
    "ToolActivity": "._engine.executor",
    "RateLimit": "._http.ratelimit",
    "TokenSet": "._http.auth",
    "TokenSource": "._http.auth",
    "OAuth": ".oauth",
    "define_local_a2a": "._peers.a2a.toolset",
    "LocalA2A": "._peers.a2a.toolset",
    "define_local_agent_api": "._peers.agent_api.toolset",
    "LocalAgentApi": "._peers.agent_api.toolset",
    "define_local_mcp": "._peers.mcp.toolset",
    "LocalMcp": "._peers.mcp.toolset",
    "LocalTool": "._tools.local_tool",
    "define_local_tool": "._tools.local_tool",
    "local_tool": "._tools.local_tool",
    "Run": ".run",
    "Agent": ".agent",
    "Client": ".client",
    "RunEvent": ".events",
    "StructuredOutputInfo": ".events",
    "TaskPlan": ".events",
    "Attachment": ".messages",
    "Message": ".messages",
    "ModelCatalog": ".results",
    "RunResult": ".results",
    "RunSnapshot": ".results",
    "SessionInfo": ".results",
    "RunSummary": ".history",
    "Feedback": ".feedback",
    "SessionEvent": ".history",
    "SessionSummary": ".history",
    "Session": ".session",
    "AgentSpec": ".spec",
    "LoopDetection": ".spec",
    "OutputSchema": ".spec",
    "ToolBudget": ".spec",
    "Plan": ".spec",
    "ReasoningTrigger": ".spec",
    "Supervisor": ".spec",
    "A2ATool": ".tools",
    "ClientResolvedTool": ".tools",
    "MantyxTool": ".tools",
    "McpTool": ".tools",
    "PluginTool": ".tools",
    "ToolConnection": ".tools",
    "ToolOutput": ".tools",
}


# Public submodules reachable as attributes without importing them first.
_SUBMODULES = frozenset({"credentials", "evals", "feedback", "history", "oauth"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


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
