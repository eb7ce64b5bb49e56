"""Where a wrong argument type must still fail at once, as a ``TypeError`` (issue 21, item 5).

The rule: argument types are checked at run time only where a wrong type
would otherwise fail late or far from the line that wrote it — a value kept
and sent later (client options, a spec, tools, messages, run controls), a
handler registered now and called later (``on_tool``, ``on_event``,
``execute``, ``authenticate``). There it raises :class:`ArgumentTypeError` (a
``SpecError``, a ``ConfigurationError`` and a ``TypeError``) naming the
argument, before anything is sent. Everywhere else the argument is used at
once, in the call, and annotations and mypy do the job.

``TARGETS`` lists the first kind, built from the signatures themselves so a new
argument is covered as soon as it exists: each argument in turn gets a value of
no expected type (a bare ``object()``), with every other argument valid, and
the emulator must see no request. ``USED_AT_ONCE`` lists the second kind, each
with why; the coverage tests make every public callable be in one of them.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync import credentials, errors, evals, notebook, oauth, serve, spec
from mantyx_sync._base import argcheck
from mantyx_sync.events import _PAYLOADS
from mantyx_sync.testing import LocalMantyx, Turn

WRONG = object()
AGENT = object()  # stands for the live Ctx.agent in a table's valid arguments


def _tool_fn(x: int) -> int:
    """Double x."""
    return 2 * x


class Ctx:
    """Live objects the methods under test hang off, on one emulator."""

    def __init__(self, server: LocalMantyx) -> None:
        self.server = server
        self.client = server.client()
        self.agent = mantyx_sync.Agent(self.client, system_prompt="s")
        self.session = self.agent.session()
        self.run = self.agent.start("x")
        self.oauth = mantyx_sync.OAuth("client_1", base_url=server.base_url)


# Where a wrong type would fail late: label -> (callable given a Ctx, valid arguments).
TARGETS: dict[str, tuple[Callable[[Ctx], Callable[..., Any]], dict[str, Any]]] = {
    "Client": (lambda c: mantyx_sync.Client, {"api_key": "mantyx_k", "workspace": "w"}),
    "Sessions.create": (lambda c: c.client.sessions.create, {"system_prompt": "s"}),
    "Runs.start": (
        lambda c: c.client.runs.start,
        {"spec": mantyx_sync.AgentSpec.build(system_prompt="s"), "prompt": "x"},
    ),
    "Sessions.resume": (lambda c: c.client.sessions.resume, {"session_id": "s"}),
    "Runs.attach": (lambda c: c.client.runs.attach, {"run_id": "r"}),
    "Agent": (lambda c: mantyx_sync.Agent, {"client": None, "system_prompt": "s"}),
    "Agent.run": (lambda c: c.agent.run, {"prompt": "x"}),
    "Session.run": (lambda c: c.session.run, {"prompt": "x"}),
    "Run.wait": (lambda c: c.run.wait, {}),
    "AgentSpec.build": (lambda c: mantyx_sync.AgentSpec.build, {"system_prompt": "s"}),
    "OutputSchema": (lambda c: mantyx_sync.OutputSchema, {"schema": {"type": "object"}}),
    # Plain values, checked where a spec takes them in (before anything is sent).
    "LoopDetection": (lambda c: _in_spec("loop_detection", mantyx_sync.LoopDetection), {}),
    "ToolBudget": (
        lambda c: _in_spec("tool_budgets", mantyx_sync.ToolBudget, {"t": None}),
        {"max_calls": 1},
    ),
    "MantyxTool": (lambda c: mantyx_sync.MantyxTool, {"id": "t"}),
    "PluginTool": (lambda c: mantyx_sync.PluginTool, {"name": "web_search"}),
    "A2ATool": (lambda c: mantyx_sync.A2ATool, {"name": "a", "agent_card_url": "http://x"}),
    "McpTool": (lambda c: mantyx_sync.McpTool, {"name": "m", "url": "http://x"}),
    "LocalTool": (lambda c: mantyx_sync.LocalTool, {"name": "t", "execute": _tool_fn}),
    "define_local_tool": (
        lambda c: mantyx_sync.define_local_tool,
        {"name": "t", "execute": _tool_fn},
    ),
    "local_tool": (lambda c: mantyx_sync.local_tool, {"fn": _tool_fn}),
    "define_local_mcp": (lambda c: mantyx_sync.define_local_mcp, {"name": "m", "command": "x"}),
    "LocalMcp": (lambda c: mantyx_sync.LocalMcp, {"name": "m", "command": "x"}),
    "define_local_a2a": (lambda c: mantyx_sync.define_local_a2a, {"name": "a", "url": "http://x"}),
    "LocalA2A": (lambda c: mantyx_sync.LocalA2A, {"name": "a", "url": "http://x"}),
    "define_local_agent_api": (
        lambda c: mantyx_sync.define_local_agent_api,
        {"name": "a", "url": "http://x"},
    ),
    "LocalAgentApi": (lambda c: mantyx_sync.LocalAgentApi, {"name": "a", "url": "http://x"}),
    "Message": (lambda c: mantyx_sync.Message, {"role": "user", "content": "x"}),
    "Attachment": (
        lambda c: mantyx_sync.Attachment,
        {"filename": "a.txt", "mime_type": "text/plain", "data": b"x"},
    ),
    "Attachment.from_path": (lambda c: mantyx_sync.Attachment.from_path, {"path": __file__}),
    "Attachment.from_bytes": (
        lambda c: mantyx_sync.Attachment.from_bytes,
        {"data": b"x", "filename": "a.txt"},
    ),
    "Attachment.from_url": (
        lambda c: mantyx_sync.Attachment.from_url,
        {"url": "https://files.test/a.png"},
    ),
    # run controls (issue 10) and a handler's return value
    "Plan": (lambda c: mantyx_sync.Plan, {}),
    "Supervisor": (lambda c: mantyx_sync.Supervisor, {}),
    "ReasoningTrigger": (lambda c: mantyx_sync.ReasoningTrigger, {}),
    "ToolOutput": (lambda c: mantyx_sync.ToolOutput, {"result": "r"}),
    # the OAuth helper (issue 11): nothing reaches the server before the check
    "OAuth": (lambda c: mantyx_sync.OAuth, {"client_id": "c", "base_url": "http://127.0.0.1:9"}),
    "OAuth.refresh_token_source": (lambda c: c.oauth.refresh_token_source, {"tokens": "r"}),
    # served apps (authenticate is called per request) and evaluations (tools, on_tool)
    "serve.a2a_app": (lambda c: serve.a2a_app, {"agent": AGENT}),
    "serve.agent_api_app": (lambda c: serve.agent_api_app, {"agent": AGENT}),
    "Evals.start": (
        lambda c: c.client.evals.start,
        {"dataset": "ds_1", "agent": "agent_1"},
    ),
    # The handle's own check runs before the method touches the handle.
    "EvalRun.wait": (lambda c: functools.partial(evals.EvalRun.wait, None), {}),
    # tokens kept and sent with every request
    "TokenSet": (lambda c: mantyx_sync.TokenSet, {"access_token": "mantyx_at_x"}),
}

# Public callables whose arguments are used at once, in the call: a wrong type
# fails there, at the line that wrote it, and annotations and mypy do the rest.
USED_AT_ONCE: dict[str, str] = {
    "Run.close": "cancel= decides in the call whether to cancel",
    **dict.fromkeys(
        (
            "Runs.get",
            "Runs.cancel",
            "Sessions.get",
            "Sessions.end",
            "Evals.dataset",
            "Evals.get",
            "Evals.compare",
            "Evals.cancel",
        ),
        "the id becomes the path of the call's own request",
    ),
    **dict.fromkeys(
        (
            "Runs.list",
            "Sessions.list",
            "Sessions.events",
            "Feedbacks.create",
            "Feedbacks.list",
            "RunResult.feedback",
            "Evals.list",
            "OAuth.refresh",
            "OAuth.revoke",
            "OAuth.userinfo",
        ),
        "checked by its own rules and sent in the call's own request",
    ),
    **dict.fromkeys(
        (
            "Agent.start",
            "Agent.stream",
            "Agent.run_plan",
            "Session.start",
            "Session.stream",
            "Session.run_plan",
        ),
        "the turn input is checked (SpecError naming it) and sent at once",
    ),
    "Session.events": "a query of the call's own request",
    "OAuth.sign_in": "the sign-in runs in the call (on_url is called before it waits)",
    "credentials.save": "written in the call",
    "credentials.load": "read in the call",
    "credentials.delete": "written in the call",
    "notebook.show": "rendered in the call",
    "RunResult.parse": "parsed in the call",
    "Run.text_stream": "a flag read when the iteration starts",
    "ModelCatalog.get": "looked up in the call",
    "RateLimit.reset_in": "computed in the call",
    "TokenSet.expires_in": "computed in the call",
    "TokenSet.from_dict": "read in the call (ConfigurationError naming the field)",
    "AgentSpec": "AgentSpec.build is the checked entry point; this takes its output",
    "AgentSpec.to_body": "the SDK's own call, with the refs it resolved",
    "LocalTool.invoke": "the executor's own call, with validated arguments",
    "A2AApp.card": "built in the call",
}

# Owners of table labels that are not names in mantyx_sync itself.
OWNERS: dict[str, Any] = {
    "credentials": credentials,
    "serve": serve,
    "notebook": notebook,
    "Evals": evals.Evals,
    "EvalRun": evals.EvalRun,
    "A2AApp": serve.A2AApp,
}

# Public modules beside the root whose functions and classes the table covers too.
MODULES = {
    "credentials": credentials,
    "serve": serve,
    "notebook": notebook,
    "evals": evals,
    "oauth": oauth,
}

# Public classes that are not in the table, and why.
NOT_USER_INPUT = {
    # values parsed from the server's answers, not built from user arguments
    "ModelCatalog",
    "RateLimit",
    "RunEvent",
    "RunResult",
    "RunSnapshot",
    "SessionInfo",
    "ToolActivity",
    "RunSummary",
    "SessionSummary",
    "SessionEvent",
    "Feedback",
    "TokenSet",
    # protocols (nothing to construct) and handles made by the client
    "ClientResolvedTool",
    "ServerResolvedTool",
    "ToolConnection",
    "TokenSource",
    "Transport",
    "HttpResponse",
    "HttpRequest",  # built by the client for a transport, from checked arguments
    "Run",
    "Session",
    # values parsed from the server's events
    "TaskPlan",
    "TextPiece",  # by Run.text_stream(), from the run's events
    "StructuredOutputInfo",
    # made by the package for the user, from arguments checked there
    "serve.A2AApp",  # by serve.a2a_app()
    "serve.AgentApiApp",  # by serve.agent_api_app()
    "Evals",  # by Client.evals
    "Runs",  # Client.runs
    "Sessions",  # Client.sessions
    "Feedbacks",  # Client.feedback
    "Models",  # Client.models
    "EvalRun",  # by Evals.start()
    "RefreshingTokenSource",  # by OAuth.refresh_token_source()
    "ClientConfig",  # Client.config, from the Client's checked arguments
    "RateLimits",  # Client.rate_limits
    "EventReplay",  # by Session.events()
    "Listing",  # by Runs.list and the other listings
    "McpConnection",  # by LocalMcp.connect(), as a run starts
    "A2AConnection",  # by LocalA2A.connect()
    "AgentApiConnection",  # by LocalAgentApi.connect()
    "UnsetType",  # the type of UNSET, its one value
    "SpecKeywords",  # TypedDicts for annotating **keywords; checked where they are passed
    "OverrideKeywords",
    # OAuth and model values parsed from the server's answers
    "ServerMetadata",
    "UserInfo",
    "Model",
    "Pricing",
    # event payload values beside the payloads themselves (added below)
    "UnknownPayload",
    "TokenUsage",
    "ModelInfo",
    "PlanStep",
    "PlanTransition",
    "ToolFile",
    # evaluation values parsed from the server's answers, and every event payload
    *evals.__all__,
    *(cls.__name__ for cls in _PAYLOADS.values()),
}

# Public methods with arguments that are not in the table, and why.
NOT_USER_METHODS = {
    # Client's deprecated 0.1 methods: each calls the resource method the table covers
    *(
        f"Client.{old}"
        for old in [
            "get_run",
            "cancel",
            "start_run",
            "attach_run",
            "list_runs",
            "create_session",
            "get_session",
            "list_sessions",
            "end_session",
            "session_events",
            "resume_session",
            "list_feedback",
        ]
    ),
    # build values from the server's answers (they raise their own errors on a bad body)
    "from_wire",
    "from_frame",
    "from_document",
    "from_token_response",
    "fallback",  # ServerMetadata.fallback(base_url): OAuth's own, from OAuth(base_url=...)
    # protocol methods the user implements and the SDK calls
    "TokenSource.refresh",
    "RefreshingTokenSource.refresh",
    "ToolConnection.call",
    "ToolConnection.input_schema",
    "Transport.send",
    "Transport.stream",
    # ... implemented by the SDK's own connections, which the executor calls
    "McpConnection.call",
    "McpConnection.input_schema",
    "McpConnection.upstream_name",
    "A2AConnection.call",
    "A2AConnection.input_schema",
    "AgentApiConnection.call",
    "AgentApiConnection.input_schema",
    # the Client's own: its arguments resolved, its responses' rate-limit headers
    "ClientConfig.from_env",
    "RateLimits.record",
    "RateLimits.slot",
    # the spec's own checks: any value by design, refused with a SpecError naming its path
    "LoopDetection.coerce",
    "OutputSchema.coerce",
    # any value by design: returns what is wrong with it
    "LocalTool.validate_args",
    # the SDK's own serialisation of a checked value; `streamed` is the transport's switch
    "Attachment.to_wire",
}


def _in_spec(field: str, cls: Any, wrap: dict[str, None] | None = None) -> Callable[..., Any]:
    """Build ``cls(**kwargs)`` and hand it to a spec, where it is checked."""

    def build(**kwargs: Any) -> Any:
        value = cls(**kwargs)
        given = {key: value for key in wrap} if wrap else value
        return mantyx_sync.AgentSpec.build(system_prompt="s", **{field: given})

    return build


# Arguments that take any value on purpose (typed Any and checked by their own
# coercion, which the test still requires to raise SpecError naming them).
SKIP: set[tuple[str, str]] = {
    ("ToolOutput", "result"),  # any value: sent as text or JSON
    ("Evals.start", "dataset"),  # an id, a dataset value or a mapping: its own check
    ("Evals.start", "agent"),  # an id, an AgentSpec or an Agent: its own check
    ("Evals.start", "tool_mocks"),  # passed through to the server
}


def _signature(target: Any) -> inspect.Signature:
    # A class's own signature would follow LocalTool.__wrapped__ (a property).
    return inspect.signature(target.__init__ if inspect.isclass(target) else target)


def _params(label: str) -> Iterator[str]:
    target = _static(label)
    for name, param in _signature(target).parameters.items():
        if param.kind is param.VAR_KEYWORD and str(param.annotation).startswith("Unpack["):
            # **spec: Unpack[SpecKeywords]: each declared keyword is an argument.
            yield from getattr(spec, str(param.annotation)[len("Unpack[") : -1]).__annotations__
        if name in ("self", "cls") or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        yield name


def _static(label: str) -> Callable[..., Any]:
    owner, _, attr = label.partition(".")
    obj: Any = OWNERS[owner] if owner in OWNERS else getattr(mantyx_sync, owner)
    if attr:
        obj = getattr(obj, attr)
    return obj  # type: ignore[no-any-return]


CASES = [
    pytest.param(label, name, id=f"{label}({name})")
    for label in TARGETS
    for name in _params(label)
    if (label, name) not in SKIP
]


@pytest.fixture(scope="module")
def ctx() -> Iterator[Ctx]:
    with LocalMantyx(model=[Turn("hello")]) as server:
        context = Ctx(server)
        yield context
        context.run.close()
        context.session.end()
        context.client.close()


@pytest.mark.parametrize(("label", "name"), CASES)
def test_a_wrong_type_fails_at_once_as_a_type_error(ctx: Ctx, label: str, name: str) -> None:
    factory, valid = TARGETS[label]
    target = factory(ctx)
    kwargs = dict(valid)
    if label == "Agent":
        kwargs["client"] = ctx.client
    stand_ins = {id(AGENT): ctx.agent}
    kwargs = {key: stand_ins.get(id(value), value) for key, value in kwargs.items()}
    kwargs[name] = WRONG
    positional_only = [
        n for n, p in _signature(target).parameters.items() if p.kind is p.POSITIONAL_ONLY
    ]
    args = [kwargs.pop(n) for n in positional_only if n in kwargs]
    sent = len(ctx.server.requests)
    with pytest.raises(errors.ArgumentTypeError) as info:
        target(*args, **kwargs)
    assert isinstance(info.value, TypeError)
    # Named as written in Python, or as the wire field it becomes (output_schema
    # -> outputSchema) where a spec coercion reports it.
    head, *rest = name.split("_")
    wire = head + "".join(part.title() for part in rest)
    assert name in str(info.value) or wire in str(info.value), str(info.value)
    # ... and says what was expected.
    assert "must" in str(info.value) or "expected" in str(info.value), str(info.value)
    assert len(ctx.server.requests) == sent, "the wrong argument was sent before being refused"


def _public_callables() -> dict[str, Any]:
    """Label -> object: every public function and class, at the root and in the public
    modules beside it (a class exported by both is labelled by its root name, as is
    one that moved from the root to its module: ``EvalRun``)."""
    found: dict[str, Any] = {}
    exports = [("", mantyx_sync, mantyx_sync.__all__)]
    for home, names in mantyx_sync._MOVED.items():
        exports.append(("", importlib.import_module(f"mantyx_sync{home}"), names.split()))
    roots = {id(getattr(module, name)) for _, module, names in exports for name in names}
    exports += [(f"{name}.", module, module.__all__) for name, module in MODULES.items()]
    for prefix, module, names in exports:
        for export in names:
            obj = getattr(module, export)
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            if prefix and (inspect.ismodule(obj) or id(obj) in roots):
                continue
            if inspect.isfunction(obj) or inspect.isclass(obj):
                found[f"{prefix}{export}"] = obj
    return found


def test_the_table_covers_every_public_callable() -> None:
    public = set(_public_callables())
    labels = set(TARGETS) | set(USED_AT_ONCE)
    covered = labels | {label.partition(".")[0] for label in labels} | NOT_USER_INPUT
    covered.add("serve.bearer_token")  # *tokens: test_bearer_token_names_a_token_that_is_not_a_str
    covered.add("credentials.config_dir")  # takes no argument
    assert public <= covered, sorted(public - covered)


def test_the_table_covers_every_public_method_with_arguments() -> None:
    # Methods of every public class, values the server made included: a user
    # calls result.parse(...) and catalog.get(...) on them.
    missing = []
    for label, obj in _public_callables().items():
        if not inspect.isclass(obj):
            continue
        name = label.rpartition(".")[2]
        for attr, value in vars(obj).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if not inspect.isfunction(value):
                continue
            params = [
                p
                for n, p in inspect.signature(value).parameters.items()
                if n not in ("self", "cls") and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
            ]
            method = f"{name}.{attr}"
            known = method in TARGETS or method in USED_AT_ONCE or {method, attr} & NOT_USER_METHODS
            if params and not known:
                missing.append(method)
    assert missing == [], f"add these to TARGETS or USED_AT_ONCE (or NOT_USER_METHODS): {missing}"


def test_no_label_is_in_both_tables() -> None:
    assert set(TARGETS) & set(USED_AT_ONCE) == set()


@pytest.mark.parametrize("tokens", [(WRONG,), ("good-token", 3), (b"raw-bytes",)])
def test_bearer_token_names_a_token_that_is_not_a_str(tokens: tuple[Any, ...]) -> None:
    with pytest.raises(errors.SpecError) as info:
        serve.bearer_token(*tokens)
    assert isinstance(info.value, ValueError)  # what it raised before, still true
    assert isinstance(info.value, errors.ArgumentTypeError)  # and a TypeError
    assert info.value.path == f"tokens[{len(tokens) - 1}]"
    assert "token must be str" in str(info.value)
    assert "good-token" not in str(info.value) and "raw-bytes" not in str(info.value)


def test_the_sdk_and_the_emulator_share_one_checker() -> None:
    # One mechanism, not two: the emulator's checks run the SDK's foundation checker.
    for checked_call in (LocalMantyx.__init__, Turn.__init__, mantyx_sync.Agent.__init__):
        assert checked_call.__code__.co_filename == argcheck.__file__, checked_call


def test_what_every_agent_builds_is_not_checked_twice() -> None:
    # Agent(...), sessions and overrides build an AgentSpec each time, and its own
    # coercions already refuse a wrong type: no argument check on top (it cost
    # Agent(...) ten times its own work).
    spec = mantyx_sync.AgentSpec
    for call in (spec.__init__, spec.build.__func__):
        assert call.__code__.co_filename != argcheck.__file__, call


def test_a_prompt_passed_as_the_agents_first_argument_points_at_system_prompt() -> None:
    with pytest.raises(errors.ArgumentTypeError) as caught:
        mantyx_sync.Agent("You are terse.")  # type: ignore[arg-type]
    assert str(caught.value) == (
        "Agent(): client must be Client | None, got str; a system prompt goes in system_prompt="
    )
    assert caught.value.path == "client"
