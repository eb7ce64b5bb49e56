"""The result poster: every answer to a tool-result POST becomes a named outcome."""

from __future__ import annotations

import json
import logging
import threading

import pytest
import requests
import responses
from core_support import ROOT

from mantyx_sync._http.api import Api
from mantyx_sync._http.poster import Delivery, PostGate, ResultPoster
from mantyx_sync._http.retry import Backoff, RetryPolicy, Safety

URL = f"{ROOT}/agent-runs/run_1/tool-results"


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def poster(transport: Api, waits: list[float]) -> ResultPoster:
    policy = RetryPolicy(
        safety=Safety.SAFE, attempts=5, deadline=30, backoff=Backoff(), sleep=waits.append
    )
    return ResultPoster(transport, "run_1", policy=policy)


@responses.activate
def test_result_body_shape(poster: ResultPoster) -> None:
    responses.post(URL, status=200, json={"ok": True})
    assert poster.post("tu_1", result="42") is Delivery.DELIVERED
    assert json.loads(responses.calls[0].request.body) == {"toolUseId": "tu_1", "result": "42"}


@responses.activate
def test_error_body_shape_and_204(poster: ResultPoster) -> None:
    responses.post(URL, status=204)
    assert poster.post("tu_1", error="ENOENT") is Delivery.DELIVERED
    assert json.loads(responses.calls[0].request.body) == {"toolUseId": "tu_1", "error": "ENOENT"}


@responses.activate
def test_503_then_success(poster: ResultPoster, waits: list[float]) -> None:
    responses.post(URL, status=503, json={"error": "unavailable"})
    responses.post(URL, status=503, json={"error": "unavailable"})
    responses.post(URL, status=200, json={"ok": True})
    assert poster.post("tu_1", result="x") is Delivery.DELIVERED
    assert len(responses.calls) == 3
    assert len(waits) == 2


@responses.activate
def test_429_honours_retry_after(poster: ResultPoster, waits: list[float]) -> None:
    responses.post(URL, status=429, json={"error": "rate_limited"}, headers={"Retry-After": "2"})
    responses.post(URL, status=200, json={"ok": True})
    assert poster.post("tu_1", result="x") is Delivery.DELIVERED
    assert waits == [2.0]


@responses.activate
def test_409_is_normal(poster: ResultPoster, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mantyx_sync")
    responses.post(URL, status=409, json={"error": "run_terminal"})
    assert poster.post("tu_1", result="late") is Delivery.RUN_TERMINAL
    assert len(responses.calls) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@responses.activate
def test_404_after_lost_response_means_delivered(
    poster: ResultPoster, caplog: pytest.LogCaptureFixture
) -> None:
    # The first attempt reached the server but the answer was lost.
    responses.post(URL, body=requests.exceptions.ChunkedEncodingError("connection dropped"))
    responses.post(URL, status=404, json={"error": "unknown_tool_use"})
    assert poster.post("tu_1", result="x") is Delivery.DELIVERED
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@responses.activate
def test_404_first_attempt_warns(poster: ResultPoster, caplog: pytest.LogCaptureFixture) -> None:
    responses.post(URL, status=404, json={"error": "unknown_tool_use"})
    assert poster.post("tu_1", result="x") is Delivery.ANSWERED_ELSEWHERE
    assert any(r.levelno == logging.WARNING for r in caplog.records)


@responses.activate
def test_400_is_logged_as_error(poster: ResultPoster, caplog: pytest.LogCaptureFixture) -> None:
    responses.post(
        URL, status=400, json={"error": "invalid_request", "message": "result: must be string"}
    )
    assert poster.post("tu_1", result="x") is Delivery.REJECTED
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert errors and "must be string" in errors[0].getMessage()


@responses.activate
def test_gives_up_after_budget(poster: ResultPoster, caplog: pytest.LogCaptureFixture) -> None:
    for _ in range(5):
        responses.post(URL, status=502, json={"error": "bad_gateway"})
    assert poster.post("tu_1", result="x") is Delivery.FAILED
    assert len(responses.calls) == 5
    assert any("could not deliver" in r.getMessage() for r in caplog.records)


@responses.activate
def test_connection_errors_retry(poster: ResultPoster) -> None:
    responses.post(URL, body=requests.exceptions.ConnectionError("refused"))
    responses.post(URL, status=200, json={"ok": True})
    assert poster.post("tu_1", result="x") is Delivery.DELIVERED


@responses.activate
def test_retries_stop_when_the_run_ends(transport: Api, caplog: pytest.LogCaptureFixture) -> None:
    gate = PostGate()
    # The run ends while the poster waits to retry: no further attempt, no warning.
    policy = RetryPolicy(safety=Safety.SAFE, attempts=5, sleep=lambda s: gate.close())
    poster = ResultPoster(transport, "run_1", policy=policy, gate=gate)
    responses.post(URL, status=503, json={"error": "unavailable"})
    responses.post(URL, status=200, json={"ok": True})
    assert poster.post("tu_1", result="x") is Delivery.RUN_TERMINAL
    assert len(responses.calls) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@responses.activate
def test_nothing_is_sent_once_the_run_ended(transport: Api) -> None:
    # Issue 29: the first attempt was not checked; with the run ended it still posted.
    gate = PostGate()
    gate.close()
    poster = ResultPoster(transport, "run_1", gate=gate)
    responses.post(URL, status=200, json={"ok": True})
    assert poster.post("tu_1", result="late") is Delivery.RUN_TERMINAL
    assert len(responses.calls) == 0


@responses.activate
def test_close_returns_after_the_attempt_on_the_wire(transport: Api) -> None:
    gate = PostGate()
    poster = ResultPoster(transport, "run_1", gate=gate)
    on_the_wire = threading.Event()
    order: list[str] = []

    def answer(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        on_the_wire.set()
        assert gate.closed.wait(10)  # close() has begun while this request is out
        order.append("posted")
        return 200, {}, "{}"

    responses.add_callback(responses.POST, URL, callback=answer)
    closer = threading.Thread(target=lambda: (gate.close(), order.append("closed")))
    sender = threading.Thread(target=lambda: order.append(poster.post("tu_1", result="x").value))
    sender.start()
    assert on_the_wire.wait(10)
    closer.start()
    closer.join(10)
    sender.join(10)
    assert order[0] == "posted" and sorted(order[1:]) == ["closed", "delivered"]
    # Closing again waits for nothing; later answers are not sent.
    gate.close()
    assert poster.post("tu_2", result="y") is Delivery.RUN_TERMINAL
    assert len(responses.calls) == 1
