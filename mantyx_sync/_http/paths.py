"""The URL paths of one run, session or evaluation, from its id.

An id the user passes (``client.cancel(run_id)``) becomes one path segment.
An empty one would silently address the collection instead (``GET
/agent-runs/`` is the run list), and one holding ``/``, ``?`` or ``#`` would
address another resource, so a blank id is refused before anything is sent
and every other character is percent-encoded.
"""

from __future__ import annotations

import urllib.parse

from ..errors import SpecError

__all__ = ["eval_path", "path_id", "run_path", "session_path"]


def path_id(value: str, name: str) -> str:
    """``value`` as one URL path segment; :class:`SpecError` naming ``name`` when blank."""
    if not value or value.isspace():
        raise SpecError("must be a non-empty id, as the server returned it", path=name)
    return urllib.parse.quote(value, safe="")


def _path(collection: str, value: str, name: str, rest: tuple[str, ...]) -> str:
    return "/".join((collection, path_id(value, name), *rest))


def run_path(run_id: str, *rest: str) -> str:
    """``/agent-runs/{run_id}`` followed by ``rest`` (``run_path(id, "cancel")``)."""
    return _path("/agent-runs", run_id, "run_id", rest)


def session_path(session_id: str, *rest: str) -> str:
    """``/agent-sessions/{session_id}`` followed by ``rest``."""
    return _path("/agent-sessions", session_id, "session_id", rest)


def eval_path(eval_id: str, *rest: str) -> str:
    """``/eval-runs/{eval_id}`` followed by ``rest``."""
    return _path("/eval-runs", eval_id, "eval_id", rest)
