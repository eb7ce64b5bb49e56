"""The floor of the design card's libraries: requests + sseclient-py + ``json.loads``.

What any client built on them must pay, and nothing else (the SDK parses with
sseclient-py as well, handing it whole frames its own linear framer found):
one ``requests.Session``; the stream read
with ``raw.read1`` chunks (as :class:`mantyx_sync._http.transport.EventSource`
does), parsed by
sseclient-py, each frame's data decoded with ``json.loads``; each
``local_tool_call`` answered inline on the reading thread with a bare
``Session.post``. No threads, no validation, no retries, no resume, no event
objects: a floor to measure mantyx_sync's own per-event and per-call work
against.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import requests
import sseclient

__all__ = ["FloorClient"]

_TERMINAL = ("result", "error", "cancelled")


class FloorClient:
    """One workspace on one host; single-threaded."""

    def __init__(self, base_url: str, api_key: str, workspace: str) -> None:
        self._root = f"{base_url}/api/v1/workspaces/{workspace}"
        self._base = base_url
        self._session = requests.Session()
        self._session.headers["Authorization"] = f"Bearer {api_key}"

    def run(
        self,
        spec: dict[str, Any],
        handler: Callable[[str, dict[str, Any]], str],
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> int:
        """Run ``spec`` to its end, answering local calls with ``handler(name, args)``.

        :returns: the number of events read.
        """
        session = self._session
        created = session.post(f"{self._root}/agent-runs", json=spec, timeout=60)
        created.raise_for_status()
        run_id = created.json()["runId"]
        stream_url = created.json().get("streamUrl") or f"/agent-runs/{run_id}/stream"
        if not stream_url.startswith("/api/"):
            stream_url = self._root + stream_url
        else:
            stream_url = self._base + stream_url
        results_url = f"{self._root}/agent-runs/{run_id}/tool-results"
        response = session.get(
            stream_url, headers={"Accept": "text/event-stream"}, stream=True, timeout=60
        )
        try:
            response.raise_for_status()
            frames = sseclient.SSEClient(_chunks(response)).events()
            for count, frame in enumerate(frames, 1):
                envelope = json.loads(frame.data)
                if on_event is not None:
                    on_event(envelope)
                kind = envelope["type"]
                if kind == "local_tool_call":
                    data = envelope["data"]
                    answer = session.post(
                        results_url,
                        json={
                            "toolUseId": data["toolUseId"],
                            "result": handler(data["name"], data.get("args") or {}),
                        },
                        timeout=60,
                    )
                    answer.raise_for_status()
                elif kind in _TERMINAL:
                    return count
            raise RuntimeError("stream ended before the terminal event")
        finally:
            response.close()

    def close(self) -> None:
        """Close the session."""
        self._session.close()


def _chunks(response: requests.Response) -> Iterator[bytes]:
    raw = response.raw
    while True:
        chunk = raw.read1(65536)
        if not chunk:
            return
        yield chunk
