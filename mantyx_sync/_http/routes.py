"""Every route of the MANTYX API the client calls, each written once with its retry rule.

Reads, and writes the server applies once however often they arrive (a
cancel, ending a session, a run's one feedback, a tool result per
``toolUseId``), are retried as *safe*; creates (a run, a session, a session
message, an evaluation) as *create* (:mod:`.retry`).

An id the user passes becomes one path segment: a blank one would address the
collection instead (``GET /agent-runs/`` is the run list) and is refused.
"""

from __future__ import annotations

import functools
import logging
import time
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import MantyxError, SpecError
from ..rate_limits import RUNS_BUCKET
from .api import Api, Reply
from .retry import RetryPolicy, create_policy, safe_policy

if TYPE_CHECKING:  # listings and feedback load with their first use
    from ..feedback import Poster
    from ..paging import Getter

__all__ = [
    "cancel_eval",
    "cancel_run",
    "compare_evals",
    "create_run",
    "create_session",
    "end_session",
    "eval_dataset",
    "eval_datasets",
    "feedback_pages",
    "feedback_poster",
    "get_eval",
    "get_run",
    "get_session",
    "list_evals",
    "models",
    "post_tool_result",
    "run_pages",
    "run_stream",
    "session_event_pages",
    "session_pages",
    "start_eval",
]

log = logging.getLogger(__name__)


def path_id(value: object, name: str) -> str:
    if not isinstance(value, str) or not value or value.isspace():
        raise SpecError("must be a non-empty id, as the server returned it", path=name)
    return urllib.parse.quote(value, safe="")


def _run(run_id: str, *rest: str) -> str:
    return "/".join(("/agent-runs", path_id(run_id, "run_id"), *rest))


def _session(session_id: str, *rest: str) -> str:
    return "/".join(("/agent-sessions", path_id(session_id, "session_id"), *rest))


def _eval(eval_id: str, *rest: str) -> str:
    return "/".join(("/eval-runs", path_id(eval_id, "eval_id"), *rest))


def _read(api: Api, path: str, params: Mapping[str, Any] | None = None) -> Any:
    return api.request("GET", path, params=params, policy=safe_policy(api.config)).body


def _write(api: Api, method: str, path: str, body: Any = None) -> Reply:
    return api.request(method, path, json_body=body, policy=safe_policy(api.config))


def _create(
    api: Api,
    path: str,
    body: Any,
    what: str,
    key: str,
    policy: RetryPolicy | None = None,
    deadline: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[str, dict[str, Any]]:
    policy = policy or create_policy(api.config)
    reply = api.request(
        "POST", path, json_body=body, policy=policy, deadline=deadline, headers=headers
    )
    answer = reply.body if isinstance(reply.body, dict) else {}
    new_id = answer.get(key) or answer.get("id")
    if not isinstance(new_id, str) or not new_id:
        raise MantyxError(f"the server accepted the {what} but sent no {key} (HTTP {reply.status})")
    return new_id, answer


def _stream_of(answer: Mapping[str, Any], default: str) -> str:
    stream = answer.get("streamUrl")
    return stream if isinstance(stream, str) and stream else default


def _cancel(api: Api, path: str, what: str, best_effort: bool) -> Reply | None:
    """Cancels are idempotent, retried as safe. ``best_effort`` (closing, Ctrl-C):
    within ``cancel_timeout`` seconds, and a failure is logged, not raised."""
    if not best_effort:
        return _write(api, "POST", path)
    seconds = api.config.cancel_timeout
    policy = attrs.evolve(safe_policy(api.config), deadline=seconds)
    ends = time.monotonic() + seconds  # however slowly the answer comes
    try:
        reply = api.request("POST", path, policy=policy, timeout=seconds, deadline=ends)
    except MantyxError as exc:
        log.warning("%s: could not cancel: %s", what, exc)
        return None
    log.info("%s: cancelled", what)
    return reply


def models(api: Api) -> Any:
    """``GET /models``."""
    return _read(api, "/models")


def create_run(
    api: Api,
    body: Any,
    *,
    session_id: str | None = None,
    deadline: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """``POST /agent-runs``, or ``.../messages`` of a session: ``(run id, stream path)``.

    A known-empty ``runs`` bucket is waited out (within the retry deadline)
    rather than spending a request on a certain 429. ``deadline``
    (``time.monotonic()``): every attempt and wait ends by it (a run's timeout).
    ``headers``: sent as well (the run's trace context).
    """
    path = "/agent-runs" if session_id is None else _session(session_id, "messages")
    policy = create_policy(api.config)
    wait = policy.deadline
    if deadline is not None:
        left = max(0.0, deadline - time.monotonic())
        wait = left if wait is None else min(wait, left)
        policy = attrs.evolve(policy, deadline=wait)
    with api.rate_limits.slot(RUNS_BUCKET, max_wait=wait):
        run_id, answer = _create(api, path, body, "run", "runId", policy, deadline, headers)
    return run_id, _stream_of(answer, run_stream(run_id))


def run_stream(run_id: str) -> str:
    """The path of ``GET /agent-runs/{id}/stream`` (opened by the run's stream)."""
    return _run(run_id, "stream")


def get_run(api: Api, run_id: str) -> Any:
    """``GET /agent-runs/{id}``."""
    return _read(api, _run(run_id))


def cancel_run(api: Api, run_id: str, *, best_effort: bool = False) -> None:
    """``POST /agent-runs/{id}/cancel``."""
    _cancel(api, _run(run_id, "cancel"), f"run {run_id}", best_effort)


def post_tool_result(api: Api, run_id: str, body: Any) -> None:
    """``POST /agent-runs/{id}/tool-results``: one attempt; the result poster
    retries it as safe under its own deadline, and stops when the run ends."""
    api.request("POST", _run(run_id, "tool-results"), json_body=body)


def _post_feedback(api: Api, run_id: str, body: Any) -> tuple[int, Any]:
    reply = _write(api, "POST", _run(run_id, "feedback"), body)
    return reply.status, reply.body


def feedback_poster(api: Api) -> Poster:
    """``POST /agent-runs/{id}/feedback`` as ``post(run_id, body)`` (one feedback
    per run: a repeat replaces it)."""
    return functools.partial(_post_feedback, api)


def create_session(api: Api, body: Any) -> str:
    """``POST /agent-sessions``: the new session's id."""
    return _create(api, "/agent-sessions", body, "session", "sessionId")[0]


def get_session(api: Api, session_id: str) -> Any:
    """``GET /agent-sessions/{id}``."""
    return _read(api, _session(session_id))


def end_session(api: Api, session_id: str) -> None:
    """``DELETE /agent-sessions/{id}``."""
    _write(api, "DELETE", _session(session_id))


def _pages(api: Api, path: str) -> Getter:
    return functools.partial(_read, api, path)


def run_pages(api: Api) -> Getter:
    """``GET /agent-runs``, a page per call."""
    return _pages(api, "/agent-runs")


def session_pages(api: Api) -> Getter:
    """``GET /agent-sessions``, a page per call."""
    return _pages(api, "/agent-sessions")


def session_event_pages(api: Api, session_id: str) -> Getter:
    """``GET /agent-sessions/{id}/events``, a page per call."""
    return _pages(api, _session(session_id, "events"))


def feedback_pages(api: Api) -> Getter:
    """``GET /reply-feedback``, a page per call."""
    return _pages(api, "/reply-feedback")


def eval_datasets(api: Api) -> Any:
    """``GET /eval-datasets``."""
    return _read(api, "/eval-datasets")


def eval_dataset(api: Api, dataset_id: str) -> Any:
    """``GET /eval-datasets/{id}``."""
    return _read(api, "/eval-datasets/" + path_id(dataset_id, "dataset_id"))


def list_evals(api: Api, params: Mapping[str, Any]) -> Any:
    """``GET /eval-runs`` (one page: ``limit``/``offset``)."""
    return _read(api, "/eval-runs", params)


def start_eval(api: Api, body: Any) -> tuple[str, str]:
    """``POST /eval-runs``: ``(evaluation id, stream path)``."""
    eval_id, answer = _create(api, "/eval-runs", body, "evaluation", "runId")
    return eval_id, _stream_of(answer, _eval(eval_id, "stream"))


def get_eval(api: Api, eval_id: str) -> Any:
    """``GET /eval-runs/{id}``."""
    return _read(api, _eval(eval_id))


def compare_evals(api: Api, a: str, b: str) -> Any:
    """``GET /eval-runs/compare``."""
    return _read(api, "/eval-runs/compare", {"a": a, "b": b})


def cancel_eval(api: Api, eval_id: str, *, best_effort: bool = False) -> bool:
    """``POST /eval-runs/{id}/cancel``: whether the server cancelled it (``{ok}``)."""
    reply = _cancel(api, _eval(eval_id, "cancel"), f"evaluation {eval_id}", best_effort)
    return reply is not None and isinstance(reply.body, dict) and bool(reply.body.get("ok"))
