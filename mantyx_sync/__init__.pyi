"""What ``mantyx_sync`` exports, for type checkers: the names ``__init__.py``
loads on first use, each from the module that defines it. The deprecated
spellings are here too (``APIError``; ``TokenUsage``, now
``mantyx_sync.events.TokenUsage``): at run time each use warns."""

from ._version import (
    __version__ as __version__,
)
from .a2a import (
    A2AConnection as A2AConnection,
)
from .a2a import (
    LocalA2A as LocalA2A,
)
from .a2a import (
    define_local_a2a as define_local_a2a,
)
from .agent import (
    Agent as Agent,
)
from .agent_api import (
    AgentApiConnection as AgentApiConnection,
)
from .agent_api import (
    LocalAgentApi as LocalAgentApi,
)
from .agent_api import (
    define_local_agent_api as define_local_agent_api,
)
from .attachments import (
    Attachment as Attachment,
)
from .auth import (
    TokenSet as TokenSet,
)
from .auth import (
    TokenSource as TokenSource,
)
from .client import (
    Client as Client,
)
from .config import (
    ClientConfig as ClientConfig,
)
from .controls import (
    Plan as Plan,
)
from .controls import (
    ReasoningTrigger as ReasoningTrigger,
)
from .controls import (
    Supervisor as Supervisor,
)
from .errors import (
    APIConnectionError as APIConnectionError,
)
from .errors import (
    APIError as APIError,
)
from .errors import (
    APIStatusError as APIStatusError,
)
from .errors import (
    ArgumentTypeError as ArgumentTypeError,
)
from .errors import (
    AuthError as AuthError,
)
from .errors import (
    ConfigurationError as ConfigurationError,
)
from .errors import (
    ConflictError as ConflictError,
)
from .errors import (
    ConnectError as ConnectError,
)
from .errors import (
    InvalidRequestError as InvalidRequestError,
)
from .errors import (
    MantyxError as MantyxError,
)
from .errors import (
    NotFoundError as NotFoundError,
)
from .errors import (
    OutputParseError as OutputParseError,
)
from .errors import (
    PermissionDenied as PermissionDenied,
)
from .errors import (
    PermissionDeniedError as PermissionDeniedError,
)
from .errors import (
    RateLimitError as RateLimitError,
)
from .errors import (
    RequestTimeoutError as RequestTimeoutError,
)
from .errors import (
    RunCancelled as RunCancelled,
)
from .errors import (
    RunCancelledError as RunCancelledError,
)
from .errors import (
    RunError as RunError,
)
from .errors import (
    RunTimeoutError as RunTimeoutError,
)
from .errors import (
    SchemaWarning as SchemaWarning,
)
from .errors import (
    ServerError as ServerError,
)
from .errors import (
    SignInError as SignInError,
)
from .errors import (
    SpecError as SpecError,
)
from .errors import (
    StreamError as StreamError,
)
from .errors import (
    Timeout as Timeout,
)
from .errors import (
    TimeoutError_ as TimeoutError_,
)
from .errors import (
    ToolError as ToolError,
)
from .errors import (
    ToolResolutionError as ToolResolutionError,
)
from .errors import (
    TransportError as TransportError,
)
from .errors import (
    WireFormatError as WireFormatError,
)
from .evals import (
    EvalCase as EvalCase,
)
from .evals import (
    EvalCaseComparison as EvalCaseComparison,
)
from .evals import (
    EvalCaseResult as EvalCaseResult,
)
from .evals import (
    EvalComparison as EvalComparison,
)
from .evals import (
    EvalDataset as EvalDataset,
)
from .evals import (
    EvalDatasetSummary as EvalDatasetSummary,
)
from .evals import (
    EvalRun as EvalRun,
)
from .evals import (
    EvalRunDetail as EvalRunDetail,
)
from .evals import (
    EvalRunSummary as EvalRunSummary,
)
from .evals import (
    Evals as Evals,
)
from .events import (
    AnyRunEvent as AnyRunEvent,
)
from .events import (
    AssistantDelta as AssistantDelta,
)
from .events import (
    AssistantMessage as AssistantMessage,
)
from .events import (
    CancelledPayload as CancelledPayload,
)
from .events import (
    ErrorPayload as ErrorPayload,
)
from .events import (
    EventPayload as EventPayload,
)
from .events import (
    EventType as EventType,
)
from .events import (
    LocalToolCall as LocalToolCall,
)
from .events import (
    LocalToolResultIn as LocalToolResultIn,
)
from .events import (
    LoopDetected as LoopDetected,
)
from .events import (
    ModelFallback as ModelFallback,
)
from .events import (
    ModelInfo as ModelInfo,
)
from .events import (
    PlanStep as PlanStep,
)
from .events import (
    PlanTransition as PlanTransition,
)
from .events import (
    ResultPayload as ResultPayload,
)
from .events import (
    RunEvent as RunEvent,
)
from .events import (
    Started as Started,
)
from .events import (
    StructuredOutputInfo as StructuredOutputInfo,
)
from .events import (
    SupervisorVerdict as SupervisorVerdict,
)
from .events import (
    TaskPlan as TaskPlan,
)
from .events import (
    TaskPlanUpdate as TaskPlanUpdate,
)
from .events import (
    ThinkingDelta as ThinkingDelta,
)
from .events import (
    TokenUsage as TokenUsage,
)
from .events import (
    ToolBudgetExceeded as ToolBudgetExceeded,
)
from .events import (
    ToolCallEvent as ToolCallEvent,
)
from .events import (
    ToolFile as ToolFile,
)
from .events import (
    ToolFiles as ToolFiles,
)
from .events import (
    ToolResultEvent as ToolResultEvent,
)
from .events import (
    UnknownPayload as UnknownPayload,
)
from .feedback import (
    Feedback as Feedback,
)
from .guards import (
    LoopDetection as LoopDetection,
)
from .guards import (
    OutputSchema as OutputSchema,
)
from .guards import (
    ToolBudget as ToolBudget,
)
from .history import (
    EventReplay as EventReplay,
)
from .history import (
    RunSummary as RunSummary,
)
from .history import (
    SessionEvent as SessionEvent,
)
from .history import (
    SessionSummary as SessionSummary,
)
from .local_tools import (
    LocalTool as LocalTool,
)
from .local_tools import (
    define_local_tool as define_local_tool,
)
from .local_tools import (
    local_tool as local_tool,
)
from .mcp import (
    LocalMcp as LocalMcp,
)
from .mcp import (
    McpConnection as McpConnection,
)
from .mcp import (
    define_local_mcp as define_local_mcp,
)
from .messages import (
    Message as Message,
)
from .oauth import (
    OAuth as OAuth,
)
from .oauth import (
    RefreshingTokenSource as RefreshingTokenSource,
)
from .oauth import (
    ServerMetadata as ServerMetadata,
)
from .oauth import (
    UserInfo as UserInfo,
)
from .paging import (
    Listing as Listing,
)
from .rate_limits import (
    RateLimit as RateLimit,
)
from .rate_limits import (
    RateLimits as RateLimits,
)
from .resources import (
    Feedbacks as Feedbacks,
)
from .resources import (
    Models as Models,
)
from .resources import (
    Runs as Runs,
)
from .resources import (
    Sessions as Sessions,
)
from .results import (
    Model as Model,
)
from .results import (
    ModelCatalog as ModelCatalog,
)
from .results import (
    Pricing as Pricing,
)
from .results import (
    RunResult as RunResult,
)
from .results import (
    RunSnapshot as RunSnapshot,
)
from .results import (
    SessionInfo as SessionInfo,
)
from .run import (
    Run as Run,
)
from .session import (
    Session as Session,
)
from .spec import (
    AgentSpec as AgentSpec,
)
from .spec import (
    OverrideKeywords as OverrideKeywords,
)
from .spec import (
    SpecKeywords as SpecKeywords,
)
from .text import (
    TextPiece as TextPiece,
)
from .tools import (
    A2ATool as A2ATool,
)
from .tools import (
    ClientResolvedTool as ClientResolvedTool,
)
from .tools import (
    MantyxTool as MantyxTool,
)
from .tools import (
    McpTool as McpTool,
)
from .tools import (
    PluginTool as PluginTool,
)
from .tools import (
    ServerResolvedTool as ServerResolvedTool,
)
from .tools import (
    ToolActivity as ToolActivity,
)
from .tools import (
    ToolConnection as ToolConnection,
)
from .tools import (
    ToolLike as ToolLike,
)
from .tools import (
    ToolOutput as ToolOutput,
)
from .transport import (
    HttpRequest as HttpRequest,
)
from .transport import (
    HttpResponse as HttpResponse,
)
from .transport import (
    Transport as Transport,
)
from .types import (
    UNSET as UNSET,
)
from .types import (
    UnsetType as UnsetType,
)

__all__ = [
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
    "Client",
    "ClientConfig",
    "ClientResolvedTool",
    "ConfigurationError",
    "ConflictError",
    "ConnectError",
    "ErrorPayload",
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
    "LoopDetection",
    "MantyxError",
    "MantyxTool",
    "McpConnection",
    "McpTool",
    "Message",
    "Model",
    "ModelCatalog",
    "Models",
    "NotFoundError",
    "OAuth",
    "OutputParseError",
    "OutputSchema",
    "OverrideKeywords",
    "PermissionDeniedError",
    "Plan",
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
    "StreamError",
    "Supervisor",
    "TextPiece",
    "ThinkingDelta",
    "TokenSet",
    "TokenSource",
    "ToolActivity",
    "ToolBudget",
    "ToolCallEvent",
    "ToolConnection",
    "ToolError",
    "ToolLike",
    "ToolOutput",
    "ToolResolutionError",
    "ToolResultEvent",
    "Transport",
    "UnsetType",
    "UserInfo",
    "WireFormatError",
    "__version__",
    "define_local_a2a",
    "define_local_agent_api",
    "define_local_mcp",
    "define_local_tool",
    "local_tool",
]
