"""Every name 0.2 renamed still works for one release: one ``DeprecationWarning``
per use, naming the replacement and pointing at the caller's line."""

from __future__ import annotations

import importlib
import pickle
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import mantyx_sync
import mantyx_sync.errors
import mantyx_sync.evals
import mantyx_sync.events

RENAMED_EXCEPTIONS = {
    "APIError": "APIStatusError",
    "TransportError": "APIConnectionError",
    "PermissionDenied": "PermissionDeniedError",
    "RunCancelled": "RunCancelledError",
}


@contextmanager
def one_warning(replacement: str) -> Iterator[None]:
    """Exactly one DeprecationWarning, naming ``replacement``, attributed to this file."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1, [str(w.message) for w in deprecations]
    assert replacement in str(deprecations[0].message)
    assert deprecations[0].filename == __file__


@pytest.mark.parametrize("owner", [mantyx_sync, mantyx_sync.errors], ids=["package", "errors"])
@pytest.mark.parametrize(("old", "new"), sorted(RENAMED_EXCEPTIONS.items()))
def test_an_old_exception_name_warns_once_and_is_the_same_class(
    owner: Any, old: str, new: str
) -> None:
    for _ in range(2):  # every use warns: the old name is never cached
        with one_warning(f"mantyx_sync.{new}"):
            cls = getattr(owner, old)
        assert cls is getattr(mantyx_sync, new)
    assert old not in mantyx_sync.__all__ and old not in mantyx_sync.errors.__all__


def test_from_import_of_an_old_name_warns_once() -> None:
    with one_warning("mantyx_sync.APIStatusError"):
        from mantyx_sync import APIError
    assert APIError is mantyx_sync.APIStatusError
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec("from mantyx_sync import *", {})


@pytest.mark.parametrize("old", ["Timeout", "TimeoutError_"])
def test_the_old_timeout_names_catch_both_timeouts(old: str) -> None:
    with one_warning("mantyx_sync.RequestTimeoutError"):
        catch = getattr(mantyx_sync, old)
    for raised in (
        mantyx_sync.RequestTimeoutError("slow"),
        mantyx_sync.RunTimeoutError("late", run_id="r1"),
    ):
        with pytest.raises(catch):
            raise raised


MOVED = sorted(
    (name, f"mantyx_sync{home}")
    for home, names in mantyx_sync._MOVED.items()
    for name in names.split()
)


def test_the_moved_names_are_the_payloads_and_evaluations_users_rarely_write() -> None:
    homes = dict(MOVED)
    assert homes["TokenUsage"] == homes["UnknownPayload"] == "mantyx_sync.events"
    assert homes["EvalRun"] == homes["Evals"] == "mantyx_sync.evals"
    # The names written every day stay at the root, with no warning.
    kept = {"RunEvent", "AnyRunEvent", "AssistantDelta", "ResultPayload", "ErrorPayload"}
    assert kept <= set(mantyx_sync.__all__) and kept.isdisjoint(homes)


@pytest.mark.parametrize(("name", "home"), MOVED)
def test_a_moved_name_warns_once_per_use_and_is_the_same_object(name: str, home: str) -> None:
    new = getattr(importlib.import_module(home), name)
    for _ in range(2):  # every use warns: the old spelling is never cached
        with one_warning(f"{home}.{name}"):
            old = getattr(mantyx_sync, name)
        assert old is new
    assert name not in mantyx_sync.__all__ and name in importlib.import_module(home).__all__


def test_from_import_of_a_moved_name_warns_once() -> None:
    with one_warning("mantyx_sync.events.TokenUsage"):
        from mantyx_sync import TokenUsage
    assert TokenUsage is mantyx_sync.events.TokenUsage
    with one_warning("mantyx_sync.evals.EvalRun"):
        from mantyx_sync import EvalRun
    assert EvalRun is mantyx_sync.evals.EvalRun


def test_both_timeouts_are_builtin_timeouts_and_only_a_request_is_a_connection_error() -> None:
    assert issubclass(mantyx_sync.RequestTimeoutError, TimeoutError)
    assert issubclass(mantyx_sync.RunTimeoutError, TimeoutError)
    assert issubclass(mantyx_sync.RequestTimeoutError, mantyx_sync.APIConnectionError)
    assert not issubclass(mantyx_sync.RunTimeoutError, mantyx_sync.APIConnectionError)
    copy = pickle.loads(pickle.dumps(mantyx_sync.RunTimeoutError("late", run_id="r1")))
    assert (type(copy), str(copy)) == (mantyx_sync.RunTimeoutError, "late")


def test_no_exception_name_shadows_a_setting_and_each_ends_in_error() -> None:
    exceptions = [
        name
        for name in mantyx_sync.__all__
        if isinstance(getattr(mantyx_sync, name), type)
        and issubclass(getattr(mantyx_sync, name), BaseException)
        and not issubclass(getattr(mantyx_sync, name), Warning)
    ]
    assert exceptions and all(name.endswith("Error") for name in exceptions), exceptions


def _old_call(call: Callable[[], Any], replacement: str) -> Any:
    with one_warning(replacement):
        return call()


def test_an_old_keyword_warns_once_and_still_works() -> None:
    client = _old_call(
        lambda: mantyx_sync.Client(api_key="k", workspace="w", timeout=7.0),
        "request_timeout=",
    )
    assert client.config.read_timeout == 7.0
    with pytest.raises(mantyx_sync.ArgumentTypeError, match="request_timeout"):
        mantyx_sync.Client(api_key="k", workspace="w", timeout=7.0, request_timeout=7.0)
    client.close()


FLAT_METHODS = {
    "get_run": "client.runs.get()",
    "cancel": "client.runs.cancel()",
    "start_run": "client.runs.start()",
    "attach_run": "client.runs.attach()",
    "list_runs": "client.runs.list()",
    "create_session": "client.sessions.create()",
    "get_session": "client.sessions.get()",
    "list_sessions": "client.sessions.list()",
    "end_session": "client.sessions.end()",
    "session_events": "client.sessions.events()",
    "resume_session": "client.sessions.resume()",
    "list_feedback": "client.feedback.list()",
}


def test_each_old_client_method_warns_once_and_calls_its_resource(emulator: Any) -> None:
    client = emulator.client(in_memory=True)
    spec = mantyx_sync.AgentSpec.build(system_prompt="s")
    run = _old_call(lambda: client.start_run(spec, "x"), FLAT_METHODS["start_run"])
    result = run.wait()
    assert _old_call(lambda: client.get_run(run.id), "client.runs.get()").id == run.id
    _old_call(lambda: client.cancel(run.id), "client.runs.cancel()")
    listed = _old_call(lambda: list(client.list_runs()), "client.runs.list()")
    assert run.id in [r.id for r in listed]
    _old_call(lambda: client.attach_run(run.id, settle=0.05), "client.runs.attach()").close()
    session = _old_call(lambda: client.create_session(spec), "client.sessions.create()")
    assert _old_call(lambda: client.get_session(session.id), "client.sessions.get()").id
    assert _old_call(lambda: list(client.list_sessions()), "client.sessions.list()")
    _old_call(lambda: list(client.session_events(session.id)), "client.sessions.events()")
    _old_call(lambda: client.resume_session(session.id), "client.sessions.resume()")
    _old_call(lambda: client.end_session(session.id), "client.sessions.end()")
    given = _old_call(lambda: client.feedback(result.run_id, "up"), "client.feedback.create(")
    assert given.created is True
    assert _old_call(lambda: list(client.list_feedback()), "client.feedback.list()")
    catalog = _old_call(lambda: client.models(), "client.models.list()")
    assert catalog == client.models.list()
    assert client.get_run.__doc__ and "client.runs.get()" in client.get_run.__doc__
    agent = mantyx_sync.Agent(client, system_prompt="s")
    assert _old_call(lambda: agent.run("x", timeout=30), "run_timeout=").text
    assert _old_call(lambda: agent.start("x", timeout=30), "run_timeout=").wait().text
    with agent.session() as chat:
        assert _old_call(lambda: chat.run("x", timeout=30), "run_timeout=").text
    assert _old_call(lambda: agent.start("x").wait(timeout=30), "run_timeout=").text
    client.close()
