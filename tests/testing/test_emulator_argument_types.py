"""Where the emulator keeps a value for later, a wrong type is a ``TypeError`` raised
where the user wrote it, naming the call, the argument, the expected type and the
type received, never the value (issue 15, fix 2; the rule of issue 21, item 5).

``TARGETS`` lists the public callables of :mod:`mantyx_sync.testing` that keep
their arguments for a request thread to use later (server options, script steps,
fault plans, queued events); each argument in turn gets a bare ``object()`` with
every other argument valid. ``USED_AT_ONCE`` lists those whose arguments are used
in the call itself, each with why: annotations and mypy do the job there. The
coverage tests walk ``__all__`` (and the public methods of those classes) so a
new callable cannot be left out. Like the rest of ``tests/testing``, these talk
to the emulator with raw HTTP, never the SDK.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from mantyx_sync import testing
from mantyx_sync.testing import (
    Cassette,
    Emit,
    EmulatedRun,
    Fail,
    FailResult,
    Faults,
    LocalMantyx,
    ModelContext,
    Overload,
    PlanUpdate,
    Supervise,
    ToolCall,
    ToolFiles,
    Turn,
    WSGITransport,
    cassette,
)

WRONG = object()
SECRET = "mantyx_sk_do_not_show_me"


class Ctx:
    """A started emulator with one finished run, for the methods of live objects."""

    def __init__(self, server: LocalMantyx) -> None:
        self.server = server
        response = requests.post(
            f"{server.base_url}/api/v1/workspaces/{server.workspace}/agent-runs",
            json={"systemPrompt": "s", "prompt": "hello"},
            headers={"Authorization": f"Bearer {server.api_key}"},
            timeout=5,
        )
        response.raise_for_status()
        self.run: EmulatedRun = server.wait_for_run(response.json()["runId"])


def _idle() -> LocalMantyx:
    """A server never started: a call the check let through would change nothing live."""
    return LocalMantyx()


# label -> (the callable, given a Ctx; valid keyword arguments)
TARGETS: dict[str, tuple[Callable[[Ctx], Callable[..., Any]], dict[str, Any]]] = {
    "LocalMantyx": (lambda c: LocalMantyx, {}),
    "LocalMantyx.set_model": (lambda c: _idle().set_model, {"model": None}),
    "LocalMantyx.queue_script": (lambda c: _idle().queue_script, {"steps": [Turn("x")]}),
    "LocalMantyx.inject": (lambda c: _idle().inject, {"faults": Faults()}),
    "LocalMantyx.fail_next": (
        lambda c: _idle().fail_next,
        {"method": "GET", "path_regex": "/x", "status": 500},
    ),
    "LocalMantyx.add_eval_dataset": (
        lambda c: _idle().add_eval_dataset,
        {"name": "d", "cases": [{"input": {"prompt": "p"}}]},
    ),
    "LocalMantyx.inject_eval_stream_fault": (
        lambda c: _idle().inject_eval_stream_fault,
        {"drop_after": 1},
    ),
    "WSGITransport": (lambda c: WSGITransport, {"app": _idle().app}),
    # cassettes (a file that does not exist: nothing is read)
    "Cassette": (lambda c: Cassette, {"path": "no/such/cassette.json"}),
    "cassette": (lambda c: cassette, {"path": "no/such/cassette.json"}),
    # LocalMantyx.oauth and LocalMantyx.clock: the test controls on them
    "OAuthServer.deny_next": (lambda c: _idle().oauth.deny_next, {}),
    "OAuthServer.issue_tokens": (lambda c: _idle().oauth.issue_tokens, {"scopes": ["runs:read"]}),
    # script steps and fault plans
    "Turn": (lambda c: Turn, {}),
    "ToolCall": (lambda c: ToolCall, {"name": "t"}),
    "Fail": (lambda c: Fail, {}),
    "FailResult": (lambda c: FailResult, {}),
    "Emit": (lambda c: Emit, {"type": "x"}),
    "PlanUpdate": (lambda c: PlanUpdate, {"steps": ["a"]}),
    "Supervise": (lambda c: Supervise, {}),
    "Overload": (lambda c: Overload, {}),
    "ToolFiles": (lambda c: ToolFiles, {"name": "t", "files": []}),
    "Faults": (lambda c: Faults, {}),
    # values the emulator makes, which users build to unit-test a model or a helper
    # methods of a live run (it has ended: nothing they could do would show)
    "EmulatedRun.emit_event": (lambda c: c.run.emit_event, {"kind": "x", "data": {}}),
    "EmulatedRun.overload": (lambda c: c.run.overload, {"error_class": "overloaded"}),
}

# Public callables whose arguments are used in the call itself, and why.
USED_AT_ONCE = {
    "LocalMantyx.advance_clock": "moves the clock in the call",
    "LocalMantyx.wait_for_run": "waits in the call",
    "LocalMantyx.wait_for_tool_call": "waits in the call",
    "LocalMantyx.client": "builds the client in the call",
    "OAuthServer.is_active": "looked up in the call",
    "EmulatorClock.advance": "moves the clock in the call",
    "ModelContext": "made by the emulator for each model call; a test's own model reads it",
    "RecordedRequest": "made by the emulator for each request it answers",
    "RecordedRequest.header": "looked up in the call",
    "EmulatedRun.post_tool_result": "answered in the call",
}

# Arguments that take any value on purpose.
SKIP = {
    ("LocalMantyx.fail_next", "json"),  # the answer's JSON body: any JSON value
}

# Public classes of mantyx_sync.testing whose constructor is not in the table, and why.
NOT_USER_BUILT = {
    "EmulatedRun": "made by the emulator for each created run",
    "EmulatedSession": "made by the emulator for each created session",
    "OAuthServer": "made by LocalMantyx, reached as LocalMantyx.oauth",
    "CassetteError": "raised by a cassette, never built by a test",
}

# Public methods with arguments that are not in the table, and why.
NOT_USER_METHODS = {
    "OAuthServer.scopes_of": "asked by the emulator's routes with the request's token",
    "OAuthServer.handle": "the emulator's OAuth routes, called with the parsed request",
    "WSGITransport.send": "called by mantyx_sync.Client with the request it built",
    "WSGITransport.stream": "called by mantyx_sync.Client with the request it built",
}


def _params_of(fn: Callable[..., Any]) -> Iterator[str]:
    """The arguments of ``fn`` a caller names (not ``self``, not ``*args``/``**kwargs``)."""
    for name, param in inspect.signature(fn).parameters.items():
        if name != "self" and param.kind not in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            yield name


def _static(label: str) -> Callable[..., Any]:
    owner, _, attr = label.partition(".")
    obj: Any = getattr(testing, owner)
    if not attr:
        return obj.__init__  # type: ignore[no-any-return]
    return getattr(obj, attr)  # type: ignore[no-any-return]


CASES = [
    pytest.param(label, name, id=f"{label}({name})")
    for label in TARGETS
    for name in _params_of(_static(label))
    if (label, name) not in SKIP
]


@pytest.fixture(scope="module")
def ctx() -> Iterator[Ctx]:
    with LocalMantyx(model=[Turn("hello")]) as server:
        yield Ctx(server)


@pytest.mark.parametrize(("label", "name"), CASES)
def test_a_wrong_type_fails_at_once(ctx: Ctx, label: str, name: str) -> None:
    factory, valid = TARGETS[label]
    kwargs = {**valid, name: WRONG}
    sent = len(ctx.server.requests)
    with pytest.raises(TypeError) as info:
        factory(ctx)(**kwargs)
    message = str(info.value)
    # the call as written, the argument, what it must be, what it got
    assert message.startswith(f"{label}(): {name} must be "), message
    assert message.endswith(", got object"), message
    assert len(ctx.server.requests) == sent


# Exports that are neither classes nor functions: nothing to call.
NOT_CALLABLE = {"Step": "a type alias, the union of the step classes"}


def _public_classes() -> dict[str, type]:
    found: dict[str, type] = {}
    for name in testing.__all__:
        obj = getattr(testing, name)
        if inspect.isclass(obj):
            found[name] = obj
    return found


def test_the_table_covers_every_public_callable() -> None:
    others = [
        name
        for name in testing.__all__
        if not inspect.isclass(getattr(testing, name))
        and name not in NOT_CALLABLE
        and name not in TARGETS
    ]
    assert others == [], f"add these functions to TARGETS: {others}"
    missing = [
        label
        for label, cls in _public_classes().items()
        if label not in TARGETS
        and label not in NOT_USER_BUILT
        and label not in USED_AT_ONCE
        and list(_params_of(vars(cls).get("__init__", object.__init__)))
    ]
    assert missing == [], f"add these to TARGETS or USED_AT_ONCE (or NOT_USER_BUILT): {missing}"


def test_the_table_covers_every_public_method_with_arguments() -> None:
    missing = []
    for label, cls in _public_classes().items():
        for attr, value in vars(cls).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            method = f"{label}.{attr}"
            if not inspect.isfunction(value) or not list(_params_of(value)):
                continue
            if not any(method in table for table in (TARGETS, USED_AT_ONCE, NOT_USER_METHODS)):
                missing.append(method)
    assert missing == [], f"add these to TARGETS or USED_AT_ONCE (or NOT_USER_METHODS): {missing}"


# The calls the issue names: each failed later (in a request handler thread, or
# silently), or raised a bare TypeError from deep inside.
ISSUE_EXAMPLES: dict[str, tuple[Callable[[], Any], str]] = {
    "LocalMantyx(tool_timeout=object())": (
        lambda: LocalMantyx(tool_timeout=WRONG),  # type: ignore[arg-type]
        "LocalMantyx(): tool_timeout must be float, got object",
    ),
    "ToolCall(1, {})": (
        lambda: ToolCall(1, {}),  # type: ignore[arg-type]
        "ToolCall(): name must be str, got int",
    ),
    "Turn(1)": (
        lambda: Turn(1),  # type: ignore[arg-type]
        "Turn(): text must be str | callable, got int",
    ),
    "set_model(object())": (
        lambda: _idle().set_model(WRONG),  # type: ignore[arg-type]
        "LocalMantyx.set_model(): model must be ",
    ),
    "inject(object())": (
        lambda: _idle().inject(WRONG),  # type: ignore[arg-type]
        "LocalMantyx.inject(): faults must be Faults, got object",
    ),
    'fail_next(..., "500")': (
        lambda: _idle().fail_next("POST", "/agent-runs", "500"),  # type: ignore[arg-type]
        "LocalMantyx.fail_next(): status must be int, got str",
    ),
    'Faults(drop_after="1")': (
        lambda: Faults(drop_after="1"),  # type: ignore[arg-type]
        "Faults(): drop_after must be int | None, got str",
    ),
    "Turn(tool_calls=object())": (
        lambda: Turn(tool_calls=WRONG),  # type: ignore[arg-type]
        "Turn(): tool_calls must be Iterable[ToolCall] | None, got object",
    ),
    "a str where a ToolCall belongs": (
        lambda: Turn(tool_calls=[ToolCall("a"), "b"]),  # type: ignore[list-item]
        "Turn(): tool_calls must be Iterable[ToolCall] | None, got list of ToolCall | str",
    ),
    "a str among the steps": (
        lambda: LocalMantyx(model=[Turn("x"), "y"]),  # type: ignore[list-item]
        "LocalMantyx(): model must be Sequence[Turn | ToolCall | ",
    ),
    "a bool where a count belongs": (
        lambda: Faults(drop_times=True),
        "Faults(): drop_times must be int, got bool",
    ),
    "a bool where a port belongs": (
        lambda: LocalMantyx(port=True),
        "LocalMantyx(): port must be int, got bool",
    ),
    "a str where the scopes' list belongs": (
        lambda: LocalMantyx(oauth_tokens={"mantyx_at_x": "runs:read"}),
        "LocalMantyx(): oauth_tokens must be Mapping[str, Iterable[str]] | None, got dict",
    ),
}


@pytest.mark.parametrize("call", list(ISSUE_EXAMPLES))
def test_the_issues_examples_fail_where_written(call: str) -> None:
    build, expected = ISSUE_EXAMPLES[call]
    with pytest.raises(TypeError) as info:
        build()
    assert str(info.value).startswith(expected), str(info.value)
    # raised by the check at the call, not by a conversion deep inside
    assert info.traceback[-1].name == "wrapper", info.traceback[-1].name


OUT_OF_RANGE: dict[str, tuple[Callable[[], Any], str]] = {
    "Faults(drop_after=-1)": (lambda: Faults(drop_after=-1), "drop_after must be >= 0"),
    "Faults(tool_result_error_status=42)": (
        lambda: Faults(tool_result_error_status=42),
        "tool_result_error_status must be an HTTP status",
    ),
    "fail_next(status=600)": (
        lambda: _idle().fail_next("GET", "/x", 600),
        "status must be an HTTP status",
    ),
    "fail_next(times=0)": (lambda: _idle().fail_next("GET", "/x", times=0), "times must be >= 1"),
    "LocalMantyx(port=70000)": (lambda: LocalMantyx(port=70000), "port must be 0 to 65535"),
    "LocalMantyx(tool_timeout=0)": (lambda: LocalMantyx(tool_timeout=0), "tool_timeout must be"),
    "LocalMantyx(create_status=0)": (
        lambda: LocalMantyx(create_status=0),
        "create_status must be an HTTP status",
    ),
    'LocalMantyx(result_shape="okay")': (
        lambda: LocalMantyx(result_shape="okay"),  # type: ignore[arg-type]
        "result_shape must be one of 'subtype' | 'ok'",
    ),
    "inject_eval_stream_fault(drop_after=-1)": (
        lambda: _idle().inject_eval_stream_fault(drop_after=-1),
        "drop_after must be >= 0",
    ),
}


@pytest.mark.parametrize("call", list(OUT_OF_RANGE))
def test_a_value_out_of_range_is_a_value_error(call: str) -> None:
    build, expected = OUT_OF_RANGE[call]
    with pytest.raises(ValueError, match=expected) as info:
        build()
    assert not isinstance(info.value, TypeError)


def test_the_value_is_never_in_the_message() -> None:
    for build in (
        lambda: LocalMantyx(api_key=SECRET.encode()),  # type: ignore[arg-type]
        lambda: LocalMantyx(oauth_tokens={SECRET: SECRET}),
        lambda: LocalMantyx(oauth_clients={"c": SECRET.encode()}),  # type: ignore[dict-item]
        lambda: Faults(drop_after=SECRET),  # type: ignore[arg-type]
        lambda: LocalMantyx(result_shape=SECRET),  # type: ignore[arg-type]
    ):
        with pytest.raises((TypeError, ValueError)) as info:
            build()
        assert SECRET not in str(info.value)
        assert "mantyx_sk" not in repr(info.value)


def test_what_tests_and_examples_pass_is_still_accepted() -> None:
    def model(ctx: ModelContext) -> Turn:
        return Turn(lambda c: c.prompt)

    # int where a float is expected; tuples and lists; a callable model;
    # mappings for JSON values; None defaults; Literals.
    LocalMantyx(tool_timeout=1, keepalive=2, model=model, rate_limits={"runs": 3})
    LocalMantyx(model=(Turn("x"), ToolCall("t", {"q": [1, {"a": None}]}), Fail()))
    LocalMantyx(model=[], result_shape="ok", rate_limit_reset="epoch")
    LocalMantyx(oauth_tokens={"mantyx_at_x": ("runs:read",)}, oauth_clients={"c": None})
    Turn("x", chunks=("a", "b"), tool_calls=(ToolCall("t"),), thinking=None)
    Turn(chunks=["x"], tool_calls=[ToolCall("t", id="tu_1", kind="local")])
    Faults(stall_seconds=1, retry_after=0, drop_after=0, duplicate_tool_calls=True)
    PlanUpdate([("a", "done"), "b", {"id": "3", "title": "c", "status": "pending"}])
    ToolFiles("t", ({"filename": "a.txt", "mimeType": "text/plain", "sizeBytes": 1},))
    Emit("custom", {"x": 1})
    server = _idle()
    server.fail_next("*", "/x", drop=True, times=2, json=[1, 2], headers={"Retry-After": "0"})
    server.fail_next("GET", "/models", 0, drop=True)  # a dropped request has no status
    server.queue_script(None)
    server.advance_clock(0)


def test_a_refused_call_changes_nothing(api: Any) -> None:
    server = api.server
    server.set_model([Turn("still here")])
    with pytest.raises(TypeError):
        server.set_model(WRONG)
    with pytest.raises(TypeError):
        server.inject(WRONG)
    events = api.events(api.create_run())
    assert events[-1]["type"] == "result"
    assert events[-1]["data"]["text"] == "still here"
