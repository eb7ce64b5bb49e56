"""A wrong type for any argument of any public function or constructor is a typed
error naming the argument, raised where the user wrote it (issue 15, fix 2).

The table is built from the signatures themselves, so a new argument is
covered as soon as it exists: each argument in turn gets a value of no
expected type (a bare ``object()``), with every other argument valid. Calls
that talk to the server run against the emulator, which must see no request.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync import credentials, errors, evals, notebook, oauth, serve
from mantyx_sync._engine.evals import Evals
from mantyx_sync.testing import LocalMantyx, Turn

WRONG = object()
AGENT = object()  # stands for the live Ctx.agent in a table's valid arguments
RESULT = object()  # stands for a finished RunResult
NOWHERE = "/nonexistent/mantyx-argument-types"  # a write there would fail loudly


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
        self.result = self.agent.run("x")
        self.catalog = self.client.models()
        self.oauth = mantyx_sync.OAuth("client_1", base_url=server.base_url)


# target label -> (callable given a Ctx, the valid arguments, error classes)
TARGETS: dict[str, tuple[Callable[[Ctx], Callable[..., Any]], dict[str, Any]]] = {
    "Client": (lambda c: mantyx_sync.Client, {"api_key": "mantyx_k", "workspace": "w"}),
    "Client.get_run": (lambda c: c.client.get_run, {"run_id": "r"}),
    "Client.cancel": (lambda c: c.client.cancel, {"run_id": "r"}),
    "Client.create_session": (lambda c: c.client.create_session, {"system_prompt": "s"}),
    "Client.start_run": (
        lambda c: c.client.start_run,
        {"spec": mantyx_sync.AgentSpec.build(system_prompt="s"), "prompt": "x"},
    ),
    "Client.resume_session": (lambda c: c.client.resume_session, {"session_id": "s"}),
    "Client.attach_run": (lambda c: c.client.attach_run, {"run_id": "r"}),
    "Client.get_session": (lambda c: c.client.get_session, {"session_id": "s"}),
    "Client.end_session": (lambda c: c.client.end_session, {"session_id": "s"}),
    "Client.list_runs": (lambda c: c.client.list_runs, {}),
    "Client.list_sessions": (lambda c: c.client.list_sessions, {}),
    "Client.session_events": (lambda c: c.client.session_events, {"session_id": "s"}),
    "Client.feedback": (lambda c: c.client.feedback, {"run_id": "r", "verdict": "up"}),
    "Client.list_feedback": (lambda c: c.client.list_feedback, {}),
    "Agent": (lambda c: mantyx_sync.Agent, {"client": None, "system_prompt": "s"}),
    "Agent.start": (lambda c: c.agent.start, {"prompt": "x"}),
    "Agent.run": (lambda c: c.agent.run, {"prompt": "x"}),
    "Agent.stream": (lambda c: c.agent.stream, {"prompt": "x"}),
    "Session.start": (lambda c: c.session.start, {"prompt": "x"}),
    "Session.run": (lambda c: c.session.run, {"prompt": "x"}),
    "Session.stream": (lambda c: c.session.stream, {"prompt": "x"}),
    "Run.wait": (lambda c: c.run.wait, {}),
    "Run.close": (lambda c: c.run.close, {}),
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
    "Agent.run_plan": (lambda c: c.agent.run_plan, {"prompt": "x"}),
    "Session.run_plan": (lambda c: c.session.run_plan, {"prompt": "x"}),
    "Session.events": (lambda c: c.session.events, {}),
    # run controls (issue 10) and a handler's return value
    "Plan": (lambda c: mantyx_sync.Plan, {}),
    "Supervisor": (lambda c: mantyx_sync.Supervisor, {}),
    "ReasoningTrigger": (lambda c: mantyx_sync.ReasoningTrigger, {}),
    "ToolOutput": (lambda c: mantyx_sync.ToolOutput, {"result": "r"}),
    # the OAuth helper (issue 11): nothing reaches the server before the check
    "OAuth": (lambda c: mantyx_sync.OAuth, {"client_id": "c", "base_url": "http://127.0.0.1:9"}),
    "OAuth.sign_in": (
        lambda c: c.oauth.sign_in,
        {"scopes": ["runs:read"], "open_browser": False, "timeout": 0.01, "on_url": repr},
    ),
    "OAuth.refresh": (lambda c: c.oauth.refresh, {"refresh_token": "r"}),
    "OAuth.refresh_token_source": (lambda c: c.oauth.refresh_token_source, {"tokens": "r"}),
    "OAuth.revoke": (lambda c: c.oauth.revoke, {"token": "t"}),
    "OAuth.userinfo": (lambda c: c.oauth.userinfo, {"token": "t"}),
    # modules beside the root: stored credentials, served apps, notebooks, evaluations
    "credentials.save": (
        lambda c: credentials.save,
        {"tokens": mantyx_sync.TokenSet(access_token="mantyx_at_x"), "directory": NOWHERE},
    ),
    "credentials.load": (lambda c: credentials.load, {"directory": NOWHERE}),
    "credentials.delete": (lambda c: credentials.delete, {"directory": NOWHERE}),
    "serve.a2a_app": (lambda c: serve.a2a_app, {"agent": AGENT}),
    "serve.agent_api_app": (lambda c: serve.agent_api_app, {"agent": AGENT}),
    "notebook.show": (lambda c: notebook.show, {"run": RESULT}),
    "Evals.datasets": (lambda c: c.client.evals.datasets, {}),
    "Evals.dataset": (lambda c: c.client.evals.dataset, {"dataset_id": "ds_1"}),
    "Evals.list": (lambda c: c.client.evals.list, {}),
    "Evals.get": (lambda c: c.client.evals.get, {"eval_id": "e"}),
    "Evals.compare": (lambda c: c.client.evals.compare, {"a": "e1", "b": "e2"}),
    "Evals.cancel": (lambda c: c.client.evals.cancel, {"eval_id": "e"}),
    "Evals.start": (
        lambda c: c.client.evals.start,
        {"dataset": "ds_1", "agent": "agent_1"},
    ),
    # The handle's own check runs before the method touches the handle.
    "EvalRun.wait": (lambda c: functools.partial(evals.EvalRun.wait, None), {}),
    # methods of values the user holds
    "RunResult.feedback": (lambda c: c.result.feedback, {"verdict": "up"}),
    "RunResult.parse": (lambda c: c.result.parse, {}),
    "ModelCatalog.get": (lambda c: c.catalog.get, {"model_id": "m"}),
    "RateLimit.reset_in": (lambda c: mantyx_sync.RateLimit(bucket="runs").reset_in, {}),
    "AgentSpec": (lambda c: mantyx_sync.AgentSpec, {}),
    "AgentSpec.to_body": (
        lambda c: mantyx_sync.AgentSpec.build(system_prompt="s").to_body,
        {"tool_refs": []},
    ),
    "LocalTool.invoke": (lambda c: mantyx_sync.local_tool(_tool_fn).invoke, {"args": {"x": 1}}),
    "TokenSet": (lambda c: mantyx_sync.TokenSet, {"access_token": "mantyx_at_x"}),
    "TokenSet.from_dict": (
        lambda c: mantyx_sync.TokenSet.from_dict,
        {"data": {"access_token": "mantyx_at_x"}},
    ),
    "TokenSet.expires_in": (
        lambda c: mantyx_sync.TokenSet(access_token="mantyx_at_x").expires_in,
        {},
    ),
    "A2AApp.card": (lambda c: serve.a2a_app(c.agent).card, {"rpc_url": "http://x/a2a"}),
}

# Owners of table labels that are not names in mantyx_sync itself.
OWNERS: dict[str, Any] = {
    "credentials": credentials,
    "serve": serve,
    "notebook": notebook,
    "Evals": Evals,
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
    "ToolConnection",
    "TokenSource",
    "Run",
    "Session",
    # values parsed from the server's events
    "TaskPlan",
    "StructuredOutputInfo",
    # made by the package for the user, from arguments checked there
    "serve.A2AApp",  # by serve.a2a_app()
    "serve.AgentApiApp",  # by serve.agent_api_app()
    "evals.Evals",  # by Client.evals
    "evals.EvalRun",  # by Evals.start()
    "oauth.RefreshingTokenSource",  # by OAuth.refresh_token_source()
    # evaluation and OAuth values parsed from the server's answers
    "evals.EvalCase",
    "evals.EvalCaseComparison",
    "evals.EvalCaseResult",
    "evals.EvalComparison",
    "evals.EvalDataset",
    "evals.EvalDatasetSummary",
    "evals.EvalRunDetail",
    "evals.EvalRunSummary",
    "oauth.ServerMetadata",
    "oauth.UserInfo",
}

# Public methods with arguments that are not in the table, and why.
NOT_USER_METHODS = {
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
def test_a_wrong_type_names_the_argument(ctx: Ctx, label: str, name: str) -> None:
    factory, valid = TARGETS[label]
    target = factory(ctx)
    kwargs = dict(valid)
    if label == "Agent":
        kwargs["client"] = ctx.client
    stand_ins = {id(AGENT): ctx.agent, id(RESULT): ctx.result}
    kwargs = {key: stand_ins.get(id(value), value) for key, value in kwargs.items()}
    kwargs[name] = WRONG
    positional_only = [
        n for n, p in _signature(target).parameters.items() if p.kind is p.POSITIONAL_ONLY
    ]
    args = [kwargs.pop(n) for n in positional_only if n in kwargs]
    sent = len(ctx.server.requests)
    with pytest.raises((errors.SpecError, errors.ConfigurationError)) as info:
        target(*args, **kwargs)
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
    modules beside it (a class exported by both is labelled by its root name)."""
    found: dict[str, Any] = {}
    roots = {id(getattr(mantyx_sync, name)) for name in mantyx_sync.__all__}
    exports = [("", mantyx_sync, mantyx_sync.__all__)]
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
    covered = set(TARGETS) | {label.partition(".")[0] for label in TARGETS} | NOT_USER_INPUT
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
            if params and method not in TARGETS and not {method, attr} & NOT_USER_METHODS:
                missing.append(method)
    assert missing == [], f"add these to TARGETS (or to NOT_USER_METHODS with why): {missing}"


@pytest.mark.parametrize("tokens", [(WRONG,), ("good-token", 3), (b"raw-bytes",)])
def test_bearer_token_names_a_token_that_is_not_a_str(tokens: tuple[Any, ...]) -> None:
    with pytest.raises(errors.SpecError) as info:
        serve.bearer_token(*tokens)
    assert isinstance(info.value, ValueError)  # what it raised before, still true
    assert info.value.path == f"tokens[{len(tokens) - 1}]"
    assert "token must be str" in str(info.value)
    assert "good-token" not in str(info.value) and "raw-bytes" not in str(info.value)
