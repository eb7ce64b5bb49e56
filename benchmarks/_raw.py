"""The baseline: the fewest protocol steps with ``http.client`` — no threads, no validation.

It creates the run, reads the SSE stream by splitting frames on blank lines
and ``json.loads``-ing each ``data:`` line, and answers each
``local_tool_call`` inline on the reading thread. No retries, no resume, no
schema checks: a floor to measure the SDKs' overhead against, not a client.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["RawClient"]

_TERMINAL = ("result", "error", "cancelled")


class RawClient:
    """One workspace on one host; single-threaded."""

    def __init__(self, base_url: str, api_key: str, workspace: str) -> None:
        parts = urlsplit(base_url)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._prefix = f"/api/v1/workspaces/{workspace}"
        self._auth = f"Bearer {api_key}"
        self._conn = http.client.HTTPConnection(self._host, self._port, timeout=60)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """POST JSON, return the parsed answer (``None`` when empty)."""
        data = json.dumps(body).encode()
        headers = {"Authorization": self._auth, "Content-Type": "application/json"}
        self._conn.request("POST", self._prefix + path, body=data, headers=headers)
        response = self._conn.getresponse()
        raw = response.read()
        if response.status >= 300:
            raise RuntimeError(f"POST {path} -> {response.status}: {raw[:200]!r}")
        return json.loads(raw) if raw else None

    def run(
        self,
        spec: dict[str, Any],
        handler: Callable[[str, dict[str, Any]], str],
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> int:
        """Run ``spec`` to its end, answering local calls with ``handler(name, args)``.

        :returns: the number of events read.
        """
        created = self.post("/agent-runs", spec)
        run_id = created["runId"]
        stream_url = created.get("streamUrl") or f"{self._prefix}/agent-runs/{run_id}/stream"
        conn = http.client.HTTPConnection(self._host, self._port, timeout=60)
        try:
            conn.request(
                "GET",
                stream_url,
                headers={"Authorization": self._auth, "Accept": "text/event-stream"},
            )
            response = conn.getresponse()
            if response.status != 200:
                raise RuntimeError(f"stream -> {response.status}")
            count = 0
            buffer = b""
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    raise RuntimeError("stream ended before the terminal event")
                buffer += chunk
                *frames, buffer = buffer.split(b"\n\n")
                for frame in frames:
                    for line in frame.split(b"\n"):
                        if not line.startswith(b"data:"):
                            continue
                        envelope = json.loads(line[5:])
                        count += 1
                        if on_event is not None:
                            on_event(envelope)
                        kind = envelope["type"]
                        if kind == "local_tool_call":
                            data = envelope["data"]
                            result = handler(data["name"], data.get("args") or {})
                            self.post(
                                f"/agent-runs/{run_id}/tool-results",
                                {"toolUseId": data["toolUseId"], "result": result},
                            )
                        elif kind in _TERMINAL:
                            return count
        finally:
            conn.close()

    def close(self) -> None:
        """Close the JSON connection."""
        self._conn.close()
