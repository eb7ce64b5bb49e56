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

from ._base.lazy import load_lazily
from ._base.redact import RedactingFormatter
from ._version import __version__

# The error classes are tiny and stdlib-only: loaded eagerly, so `except
# mantyx_sync.MantyxError` never triggers an import.
from .errors import (
    APIConnectionError,
    APIStatusError,
    ArgumentTypeError,
    AuthError,
    ConfigurationError,
    ConflictError,
    ConnectError,
    InvalidRequestError,
    MantyxError,
    NotFoundError,
    OutputParseError,
    PermissionDeniedError,
    RateLimitError,
    RequestTimeoutError,
    RunCancelledError,
    RunError,
    RunTimeoutError,
    SchemaWarning,
    ServerError,
    SignInError,
    SpecError,
    StreamError,
    ToolError,
    ToolResolutionError,
    WireFormatError,
)
from .errors import (
    renamed as _renamed,
)

if TYPE_CHECKING:
    from .a2a import A2AConnection, LocalA2A, define_local_a2a
    from .agent import Agent
    from .agent_api import AgentApiConnection, LocalAgentApi, define_local_agent_api
    from .auth import TokenSet, TokenSource
    from .client import Client
    from .config import ClientConfig

    # The exceptions' 0.1 names, for type checkers; at run time __getattr__ warns.
    from .errors import APIError as APIError
    from .errors import PermissionDenied as PermissionDenied
    from .errors import RunCancelled as RunCancelled
    from .errors import Timeout as Timeout
    from .errors import TimeoutError_ as TimeoutError_
    from .errors import TransportError as TransportError
    from .evals import (
        EvalCase,
        EvalCaseComparison,
        EvalCaseResult,
        EvalComparison,
        EvalDataset,
        EvalDatasetSummary,
        EvalRun,
        EvalRunDetail,
        EvalRunSummary,
        Evals,
    )
    from .events import (
        AnyRunEvent,
        AssistantDelta,
        AssistantMessage,
        CancelledPayload,
        ErrorPayload,
        EventPayload,
        EventType,
        LocalToolCall,
        LocalToolResultIn,
        LoopDetected,
        ModelFallback,
        ModelInfo,
        PlanStep,
        PlanTransition,
        ResultPayload,
        RunEvent,
        Started,
        StructuredOutputInfo,
        SupervisorVerdict,
        TaskPlan,
        TaskPlanUpdate,
        ThinkingDelta,
        TokenUsage,
        ToolBudgetExceeded,
        ToolCallEvent,
        ToolFile,
        ToolFiles,
        ToolResultEvent,
        UnknownPayload,
    )
    from .feedback import Feedback
    from .history import EventReplay, Listing, RunSummary, SessionEvent, SessionSummary
    from .local_tools import LocalTool, define_local_tool, local_tool
    from .mcp import LocalMcp, McpConnection, define_local_mcp
    from .messages import Attachment, Message
    from .oauth import OAuth, RefreshingTokenSource, ServerMetadata, UserInfo
    from .rate_limits import RateLimit, RateLimits
    from .resources import Feedbacks, Models, Runs, Sessions
    from .results import Model, ModelCatalog, Pricing, RunResult, RunSnapshot, SessionInfo
    from .run import Run
    from .session import Session
    from .spec import (
        AgentSpec,
        LoopDetection,
        OutputSchema,
        OverrideKeywords,
        Plan,
        ReasoningTrigger,
        SpecKeywords,
        Supervisor,
        ToolBudget,
    )
    from .text import TextPiece
    from .tools import (
        A2ATool,
        ClientResolvedTool,
        MantyxTool,
        McpTool,
        PluginTool,
        ServerResolvedTool,
        ToolActivity,
        ToolConnection,
        ToolLike,
        ToolOutput,
    )
    from .transport import HttpRequest, HttpResponse, Transport
    from .types import UNSET, UnsetType

__all__ = (
    "UNSET",
    "A2AConnection",
    "A2ATool",
    "APIConnectionError",
    "APIStatusError",
    "Agent",
    "AgentApiConnection",
    "AgentSpec",
    "AnyRunEvent",
    "ArgumentTypeError",
    "AssistantDelta",
    "AssistantMessage",
    "Attachment",
    "AuthError",
    "CancelledPayload",
    "Client",
    "ClientConfig",
    "ClientResolvedTool",
    "ConfigurationError",
    "ConflictError",
    "ConnectError",
    "ErrorPayload",
    "EvalCase",
    "EvalCaseComparison",
    "EvalCaseResult",
    "EvalComparison",
    "EvalDataset",
    "EvalDatasetSummary",
    "EvalRun",
    "EvalRunDetail",
    "EvalRunSummary",
    "Evals",
    "EventPayload",
    "EventReplay",
    "EventType",
    "Feedback",
    "Feedbacks",
    "HttpRequest",
    "HttpResponse",
    "InvalidRequestError",
    "Listing",
    "LocalA2A",
    "LocalAgentApi",
    "LocalMcp",
    "LocalTool",
    "LocalToolCall",
    "LocalToolResultIn",
    "LoopDetected",
    "LoopDetection",
    "MantyxError",
    "MantyxTool",
    "McpConnection",
    "McpTool",
    "Message",
    "Model",
    "ModelCatalog",
    "ModelFallback",
    "ModelInfo",
    "Models",
    "NotFoundError",
    "OAuth",
    "OutputParseError",
    "OutputSchema",
    "OverrideKeywords",
    "PermissionDeniedError",
    "Plan",
    "PlanStep",
    "PlanTransition",
    "PluginTool",
    "Pricing",
    "RateLimit",
    "RateLimitError",
    "RateLimits",
    "ReasoningTrigger",
    "RefreshingTokenSource",
    "RequestTimeoutError",
    "ResultPayload",
    "Run",
    "RunCancelledError",
    "RunError",
    "RunEvent",
    "RunResult",
    "RunSnapshot",
    "RunSummary",
    "RunTimeoutError",
    "Runs",
    "SchemaWarning",
    "ServerError",
    "ServerMetadata",
    "ServerResolvedTool",
    "Session",
    "SessionEvent",
    "SessionInfo",
    "SessionSummary",
    "Sessions",
    "SignInError",
    "SpecError",
    "SpecKeywords",
    "Started",
    "StreamError",
    "StructuredOutputInfo",
    "Supervisor",
    "SupervisorVerdict",
    "TaskPlan",
    "TaskPlanUpdate",
    "TextPiece",
    "ThinkingDelta",
    "TokenSet",
    "TokenSource",
    "TokenUsage",
    "ToolActivity",
    "ToolBudget",
    "ToolBudgetExceeded",
    "ToolCallEvent",
    "ToolConnection",
    "ToolError",
    "ToolFile",
    "ToolFiles",
    "ToolLike",
    "ToolOutput",
    "ToolResolutionError",
    "ToolResultEvent",
    "Transport",
    "UnknownPayload",
    "UnsetType",
    "UserInfo",
    "WireFormatError",
    "__version__",
    "define_local_a2a",
    "define_local_agent_api",
    "define_local_mcp",
    "define_local_tool",
    "local_tool",
)

# Public names load on first use (PEP 562), so ``import mantyx_sync`` stays cheap
# and a run that needs no MCP server, A2A peer, evaluation or sign-in never
# imports them. Module -> the names it provides; the imports under
# TYPE_CHECKING above state the same (tests/core/test_public_names.py).
_LAZY: dict[str, str] = {
    ".types": "UNSET UnsetType",
    ".text": "TextPiece",
    ".local_tools": "LocalTool define_local_tool local_tool",
    ".tools": (
        "A2ATool ClientResolvedTool MantyxTool McpTool PluginTool ServerResolvedTool"
        " ToolActivity ToolConnection ToolLike ToolOutput"
    ),
    ".spec": (
        "AgentSpec LoopDetection OutputSchema OverrideKeywords Plan ReasoningTrigger"
        " SpecKeywords Supervisor ToolBudget"
    ),
    ".messages": "Attachment Message",
    ".events": (
        "AnyRunEvent AssistantDelta AssistantMessage CancelledPayload ErrorPayload EventPayload"
        " EventType LocalToolCall LocalToolResultIn LoopDetected ModelFallback ModelInfo PlanStep"
        " PlanTransition ResultPayload RunEvent Started StructuredOutputInfo SupervisorVerdict"
        " TaskPlan TaskPlanUpdate ThinkingDelta TokenUsage ToolBudgetExceeded ToolCallEvent"
        " ToolFile ToolFiles ToolResultEvent UnknownPayload"
    ),
    ".results": "Model ModelCatalog Pricing RunResult RunSnapshot SessionInfo",
    ".history": "EventReplay Listing RunSummary SessionEvent SessionSummary",
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
    ".evals": (
        "EvalCase EvalCaseComparison EvalCaseResult EvalComparison EvalDataset EvalDatasetSummary"
        " EvalRun EvalRunDetail EvalRunSummary Evals"
    ),
    ".oauth": "OAuth RefreshingTokenSource ServerMetadata UserInfo",
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names.split()}

# Public submodules reachable as attributes without importing them first.
_SUBMODULES = frozenset({"credentials", "evals", "events", "feedback", "history", "oauth"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    old = _renamed(name)  # a deprecated name: warns, and is not cached so it always does
    if old is not None:
        return old
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
