"""A hand-written stdio MCP server that misbehaves in ways found in review.

Options (argv):
  --stop-reading       on tools/call, stop reading stdin for good (a wedged server);
                       the process then only exits when signalled
  --bad-ids            before each tools/call answer, send responses whose ids are
                       an object, a list and ``true`` (all must be ignored)
  --pidfile PATH       write our pid to PATH

One tool, ``a``, which answers ``"ok"``.
"""

from __future__ import annotations

import json
import os
import sys
import threading


def _write(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    argv = sys.argv[1:]
    if "--pidfile" in argv:
        with open(argv[argv.index("--pidfile") + 1], "w") as fh:
            fh.write(str(os.getpid()))
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "quirks", "version": "1"},
            }
            _write({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif method == "tools/list":
            tools = [{"name": "a", "inputSchema": {"type": "object"}}]
            _write({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})
        elif method == "tools/call":
            if "--stop-reading" in argv:
                threading.Event().wait()  # never reads stdin again
            if "--bad-ids" in argv:
                for bad in ({"bad": 1}, [1, 2], True):
                    _write({"jsonrpc": "2.0", "id": bad, "error": {"code": -1, "message": "x"}})
            content = [{"type": "text", "text": "ok"}]
            _write({"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}})


if __name__ == "__main__":
    main()
