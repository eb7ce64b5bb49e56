"""The emulator in its own process, for the benchmarks that must measure the client alone.

``python -m benchmarks._serve '<json>'`` starts :class:`LocalMantyx` on
127.0.0.1 with a scripted model (``{"tool_turns": N}``: N turns of one
``noop`` local call, then ``done``; ``"chunks": M`` streams that answer as M
deltas), prints one JSON line (``base_url``,
``api_key``, ``workspace``) and serves until its stdin is closed. Used by the
scale row, so that the emulator's CPU is never counted as the client's and
the two never share a GIL, and by the cold-start row.
"""

from __future__ import annotations

import json
import sys

from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Serve until stdin closes."""
    spec = json.loads(argv[0]) if argv else {}
    turns = int(spec.get("tool_turns", 1))
    chunks = tuple(f"w{i} " for i in range(int(spec.get("chunks", 0))))
    answer = Turn("".join(chunks), chunks=chunks) if chunks else Turn("done")
    server = LocalMantyx()
    server.set_model([Turn(tool_calls=[ToolCall("noop", {})]) for _ in range(turns)] + [answer])
    server.start()
    try:
        print(
            json.dumps(
                {
                    "base_url": server.base_url,
                    "api_key": server.api_key,
                    "workspace": server.workspace,
                }
            ),
            flush=True,
        )
        sys.stdin.read()  # the parent closes our stdin to stop us
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
