"""The transport seam: ``Client(transport=...)`` with a scripted transport, no HTTP at all.

Everything above the seam works the same over any transport: the credential
(and the refresh after a 401), JSON, statuses as errors, rate-limit headers,
and each route's one retry rule. A transport's builtin ``OSError`` becomes a
:class:`~mantyx_sync.APIConnectionError`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs
import pytest
from core_support import BASE, KEY, ROOT

from mantyx_sync import (
    APIConnectionError,
    Client,
    ConfigurationError,
    ConnectError,
    HttpRequest,
    MantyxError,
    NotFoundError,
    RequestTimeoutError,
    ServerError,
    SpecError,
    Transport,
)
from mantyx_sync._http import retry as retry_module
from mantyx_sync._http import routes
from mantyx_sync._http.api import Api


@attrs.frozen
class Answer:
    status: int
    body: Any = None
    headers: Mapping[str, str] = attrs.field(factory=dict)

    def __iter__(self) -> Iterator[bytes]:
        return iter((b"" if self.body is None else json.dumps(self.body).encode(),))

    def close(self) -> None:
        pass


class Scripted:
    """A Transport answering from a script (answers or exceptions), recording each request."""

    def __init__(self, *script: Answer | BaseException) -> None:
        self.script = list(script)
        self.requests: list[HttpRequest] = []
        self.closed = False

    def send(self, request: HttpRequest) -> Answer:
        self.requests.append(request)
        step = self.script.pop(0) if self.script else Answer(200, {})
        if isinstance(step, BaseException):
            raise step
        return step

    stream = send

    def close(self) -> None:
        self.closed = True


@pytest.fixture(autouse=True)
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry waits recorded instead of slept."""
    recorded: list[float] = []
    for name in ("CREATE_POLICY", "SAFE_POLICY"):
        policy = getattr(retry_module, name)
        monkeypatch.setattr(retry_module, name, attrs.evolve(policy, sleep=recorded.append))
    return recorded


def _client(transport: Scripted, **options: Any) -> Client:
    return Client(KEY, workspace="acme", base_url=BASE, transport=transport, **options)


def test_a_scripted_transport_is_a_transport() -> None:
    assert isinstance(Scripted(), Transport)


def test_the_client_sends_through_the_transport_it_is_given() -> None:
    transport = Scripted(Answer(200, {"models": [], "defaultModelId": "m"}))
    client = _client(transport, request_timeout=(2.0, 7.0))
    assert client.models.list().default_model_id == "m"
    (sent,) = transport.requests
    assert (sent.method, sent.url, sent.timeout) == ("GET", f"{ROOT}/models", (2.0, 7.0))
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(sent) and "/models" in repr(sent)
    assert sent.headers["Accept"] == "application/json"
    client.close()
    assert transport.closed
    with pytest.raises(MantyxError, match="closed"):
        client.models.list()
    assert len(transport.requests) == 1


def test_statuses_and_rate_limits_are_read_above_the_seam() -> None:
    limit = {"X-RateLimit-Bucket": "reads", "X-RateLimit-Remaining": "4"}
    missing = {"error": "not_found", "message": "no such run", "hint": "acme"}
    transport = Scripted(Answer(404, missing, limit))
    client = _client(transport)
    with pytest.raises(NotFoundError) as info:
        client.runs.get("run_1")
    assert (info.value.message, info.value.hint) == ("no such run", "acme")
    assert client.rate_limits["reads"].remaining == 4


def test_a_refreshed_token_repeats_the_request_over_any_transport() -> None:
    class Source:
        def token(self) -> str:
            return "mantyx_at_old"

        def refresh(self, rejected: str) -> str:
            return "mantyx_at_new"

    transport = Scripted(Answer(401, {"error": "invalid_token"}), Answer(200, {"models": []}))
    client = Client(workspace="acme", base_url=BASE, token_source=Source(), transport=transport)
    client.models.list()
    assert [r.headers["Authorization"] for r in transport.requests] == [
        "Bearer mantyx_at_old",
        "Bearer mantyx_at_new",
    ]


@pytest.mark.parametrize(
    ("raised", "error"),
    [
        (TimeoutError("slow"), RequestTimeoutError),
        (ConnectionRefusedError(111, "refused"), ConnectError),
    ],
)
def test_a_transport_s_os_error_is_a_transport_error(
    raised: OSError, error: type[APIConnectionError], waits: list[float]
) -> None:
    transport = Scripted(raised, raised, raised)
    with pytest.raises(error, match=r"mantyx\.test.*gave up after 3 attempts"):
        _client(transport, max_retries=2).models.list()
    assert len(transport.requests) == 3 and len(waits) == 2


def test_transport_and_http_session_cannot_both_be_given() -> None:
    import requests

    with pytest.raises(ConfigurationError, match="http_session= or transport="):
        _client(Scripted(), http_session=requests.Session())
    with pytest.raises(ConfigurationError, match="transport"):
        Client(KEY, workspace="acme", transport=object())  # type: ignore[arg-type]


# Each route with its arguments, and whether its kind makes a 500 worth another attempt.
ROUTES: dict[str, tuple[Callable[[Api], Any], bool]] = {
    "models": (routes.models, True),
    "get_run": (lambda api: routes.get_run(api, "r"), True),
    "cancel_run": (lambda api: routes.cancel_run(api, "r"), True),
    "cancel_run best effort": (lambda api: routes.cancel_run(api, "r", best_effort=True), True),
    "post_feedback": (lambda api: routes.feedback_poster(api)("r", {"verdict": "UP"}), True),
    "get_session": (lambda api: routes.get_session(api, "s"), True),
    "end_session": (lambda api: routes.end_session(api, "s"), True),
    "session_events": (lambda api: routes.session_event_pages(api, "s")({}), True),
    "list_runs": (lambda api: routes.run_pages(api)({}), True),
    "list_sessions": (lambda api: routes.session_pages(api)({}), True),
    "list_feedback": (lambda api: routes.feedback_pages(api)({}), True),
    "eval_datasets": (routes.eval_datasets, True),
    "eval_dataset": (lambda api: routes.eval_dataset(api, "d"), True),
    "list_evals": (lambda api: routes.list_evals(api, {}), True),
    "get_eval": (lambda api: routes.get_eval(api, "e"), True),
    "compare_evals": (lambda api: routes.compare_evals(api, "a", "b"), True),
    "cancel_eval": (lambda api: routes.cancel_eval(api, "e"), True),
    "cancel_eval best effort": (lambda api: routes.cancel_eval(api, "e", best_effort=True), True),
    # creates: the server may have acted on a 500, so never again
    "create_run": (lambda api: routes.create_run(api, {}), False),
    "session message": (lambda api: routes.create_run(api, {}, session_id="s"), False),
    "create_session": (lambda api: routes.create_session(api, {}), False),
    "start_eval": (lambda api: routes.start_eval(api, {}), False),
    # the result poster retries tool results itself (until the run ends)
    "post_tool_result": (lambda api: routes.post_tool_result(api, "r", {}), False),
}


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_each_route_has_the_retry_rule_of_its_kind(name: str) -> None:
    call, retried = ROUTES[name]
    created = {"runId": "r", "sessionId": "s", "ok": True}
    transport = Scripted(Answer(500, {"error": "internal"}), Answer(200, created))
    api = Api(_client(transport).config, transport)
    if retried:
        call(api)
        assert len(transport.requests) == 2
    else:
        with pytest.raises(ServerError):
            call(api)
        assert len(transport.requests) == 1


def test_a_best_effort_cancel_logs_instead_of_raising(caplog: pytest.LogCaptureFixture) -> None:
    transport = Scripted(*[Answer(404, {"error": "not_found"})] * 2)
    api = Api(_client(transport).config, transport)
    routes.cancel_run(api, "run_gone", best_effort=True)  # no raise
    assert "run run_gone: could not cancel" in caplog.text
    assert routes.cancel_eval(api, "e", best_effort=True) is False


@pytest.mark.parametrize("bad", ["", "  ", 7, None])
def test_an_id_that_is_not_a_non_empty_string_is_refused_before_sending(bad: Any) -> None:
    transport = Scripted()
    with pytest.raises(SpecError, match="run_id: must be a non-empty id"):
        routes.get_run(Api(_client(transport).config, transport), bad)
    assert transport.requests == []
