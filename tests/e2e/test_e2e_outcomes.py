"""One rule for how a run ended: the run, its display, the CLI and the served app agree.

Each case ends a run with one terminal event (documented shapes and odd ones)
and reads the outcome four ways: ``Agent.run`` (its result or error), the
notebook display of the events, ``mantyx-sync run`` (exit status and error
line) and ``serve.agent_api_app`` (the response's status and error).
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from werkzeug.test import Client as WsgiClient

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync._display.render import view_of
from mantyx_sync.cli import main as cli_main
from mantyx_sync.testing import Emit, LocalMantyx

CASES = [
    ("result", {"subtype": "success", "text": "ok"}, "succeeded", None),
    ("result", {"ok": True, "text": "ok"}, "succeeded", None),
    ("result", {"subtype": "success", "ok": False, "text": "ok"}, "succeeded", None),
    (
        "result",
        {"subtype": "success", "text": "ok", "tokens": {"inputTokens": "12"}},
        "succeeded",
        None,
    ),
    ("result", {"subtype": "error_max_turns"}, "failed", "the run ended with error_max_turns"),
    ("result", {"ok": False, "text": "partial"}, "failed", "the run ended with no success flag"),
    ("result", {"ok": "yes"}, "failed", "the run ended with no success flag"),
    ("result", {"subtype": "error_x", "message": "boom"}, "failed", "boom"),
    (
        "result",
        {"subtype": "error_local_tool_timeout", "error": {"m": 1}},
        "failed",
        "the run ended with error_local_tool_timeout",
    ),
    ("error", {"error": "model exploded", "retryable": "yes"}, "failed", "model exploded"),
    ("error", {"message": "said as message"}, "failed", "said as message"),
    ("error", {"error": {"detail": "x"}}, "failed", "the run failed"),
    ("cancelled", {"reason": "by the user"}, "cancelled", "cancelled (by the user)"),
    ("cancelled", {"reason": {"by": "user"}}, "cancelled", "cancelled"),
]
SERVED_STATUS = {"succeeded": "completed", "failed": "failed", "cancelled": "canceled"}


def _by_run(agent: mantyx_sync.Agent) -> tuple[str, str | None, Any]:
    try:
        result = agent.run("x")
    except mantyx_sync.RunCancelledError as exc:
        return "cancelled", exc.message, exc.result
    except mantyx_sync.RunError as exc:
        return "failed", exc.message, exc.result
    return "succeeded", None, result


def _by_cli(server: LocalMantyx, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setenv("MANTYX_BASE_URL", server.base_url)
    monkeypatch.setenv("MANTYX_WORKSPACE", server.workspace)
    monkeypatch.setenv("MANTYX_API_KEY", server.api_key)
    out, err = io.StringIO(), io.StringIO()
    return cli_main(["run", "x"], out=out, err=err), err.getvalue()


def _by_serve(agent: mantyx_sync.Agent) -> dict[str, Any]:
    client = WsgiClient(serve.agent_api_app(agent))
    body = {"input": [{"role": "user", "content": "x"}], "stream": False}
    reply = client.post("/process", json=body)
    assert reply.status_code == 200, reply.get_data(as_text=True)
    final: dict[str, Any] = reply.get_json()
    return final


@pytest.mark.parametrize(("terminal", "data", "status", "message"), CASES)
def test_run_display_cli_and_serve_agree_on_how_a_run_ended(
    mantyx_server: LocalMantyx,
    monkeypatch: pytest.MonkeyPatch,
    terminal: str,
    data: dict[str, Any],
    status: str,
    message: str | None,
) -> None:
    mantyx_server.set_model([Emit(terminal, data)])
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Answer.")

    assert _by_run(agent)[:2] == (status, message)

    result = _by_run(agent)[2]
    view = view_of(result.run_id, result.events)
    assert (view.status, view.error) == (status, message if status == "failed" else None)
    if message is not None and status == "failed":
        assert message in result._repr_markdown_()

    code, err = _by_cli(mantyx_server, monkeypatch)
    assert code == (0 if status == "succeeded" else 1), err
    if message is not None:
        assert err.strip().endswith(f": {message}"), err

    final = _by_serve(agent)
    assert final["status"] == SERVED_STATUS[status]
    if status == "failed":
        assert final["error"]["message"].endswith(f": {message}")
