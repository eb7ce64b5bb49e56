"""A tiny hand-written stdio MCP server for protocol corner cases the SDKs cannot produce.

Options (argv):
  --tools N            number of tools (named t0..tN-1, plus "probe", "die", "hang")
  --page-size K        paginate tools/list with nextCursor
  --version V          answer initialize with protocol version V
  --ignore-eof         keep running after stdin closes (and ignore SIGTERM)
  --exit-on-list       exit with code 3 when tools/list arrives
  --pidfile PATH       write our pid to PATH

Tools:
  t<i>    returns "t<i>:" + json(arguments)
  probe   sends the client a ping (id 0) and a sampling request (id "s-1") first,
          and returns the two answers as JSON text
  die     exits the process immediately (exit code 7) without answering
  hang    never answers (until cancelled: then it records the cancellation)
  cancelled  returns the request ids the client cancelled so far
  caps    returns the initialize params the client sent
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading


def main() -> None:
    argv = sys.argv[1:]

    def opt(flag: str, default: str | None = None) -> str | None:
        return argv[argv.index(flag) + 1] if flag in argv else default

    n_tools = int(opt("--tools", "3") or 3)
    page = int(opt("--page-size", "0") or 0)
    version = opt("--version", None)
    ignore_eof = "--ignore-eof" in argv
    if ignore_eof:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pidfile = opt("--pidfile", None)
    if pidfile:
        with open(pidfile, "w") as fh:
            fh.write(str(os.getpid()))
    tools = [
        {
            "name": f"t{i}",
            "description": f"tool {i}",
            "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}},
        }
        for i in range(n_tools)
    ]
    tools += [
        {"name": n, "inputSchema": {"type": "object"}}
        for n in ("probe", "die", "hang", "cancelled", "caps")
    ]
    out_lock = threading.Lock()
    waiting: dict[object, dict[str, object]] = {}
    pending_probe: dict[str, object] = {}
    cancelled: list[object] = []
    client_caps: dict[str, object] = {}

    def write(msg: dict[str, object]) -> None:
        with out_lock:
            sys.stdout.write(json.dumps(msg) + "\n")
            sys.stdout.flush()

    print("raw peer starting", file=sys.stderr, flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        method = msg.get("method")
        mid = msg.get("id")
        if method is None:
            if mid in waiting:
                waiting[mid] = msg
                if all(v for v in waiting.values()):
                    answers = {str(k): v for k, v in waiting.items()}
                    waiting.clear()
                    write(
                        {
                            "jsonrpc": "2.0",
                            "id": pending_probe["id"],
                            "result": {
                                "content": [
                                    {"type": "text", "text": json.dumps(answers, sort_keys=True)}
                                ]
                            },
                        }
                    )
            continue
        if method == "initialize":
            requested = msg["params"]["protocolVersion"]
            client_caps.update(msg["params"])
            write(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "result": {
                        "protocolVersion": version or requested,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw-peer", "version": "9.9", "extra": {"k": 1}},
                        "_clientCapabilities": msg["params"].get("capabilities"),
                    },
                }
            )
        elif method == "notifications/cancelled":
            cancelled.append(msg["params"]["requestId"])
        elif method == "tools/list":
            if "--exit-on-list" in argv:
                sys.exit(3)
            start = int(msg.get("params", {}).get("cursor") or 0)
            chunk = tools[start : start + page] if page else tools
            result: dict[str, object] = {"tools": chunk}
            if page and start + page < len(tools):
                result["nextCursor"] = str(start + page)
            write({"jsonrpc": "2.0", "id": mid, "result": result})
        elif method == "tools/call":
            name = msg["params"]["name"]
            if name == "die":
                os._exit(7)
            elif name == "hang":
                pass
            elif name == "caps":
                write(
                    {
                        "jsonrpc": "2.0",
                        "id": mid,
                        "result": {"content": [{"type": "text", "text": json.dumps(client_caps)}]},
                    }
                )
            elif name == "cancelled":
                write(
                    {
                        "jsonrpc": "2.0",
                        "id": mid,
                        "result": {"content": [{"type": "text", "text": json.dumps(cancelled)}]},
                    }
                )
            elif name == "probe":
                pending_probe["id"] = mid
                waiting[0] = {}
                waiting["s-1"] = {}
                write(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "data": "probing"},
                    }
                )
                write({"jsonrpc": "2.0", "id": 0, "method": "ping"})
                write(
                    {
                        "jsonrpc": "2.0",
                        "id": "s-1",
                        "method": "sampling/createMessage",
                        "params": {"messages": [], "maxTokens": 1},
                    }
                )
            else:
                write(
                    {
                        "jsonrpc": "2.0",
                        "id": mid,
                        "result": {
                            "content": [
                                {
                                    "type": "text",
                                    "text": f"{name}:" + json.dumps(msg["params"].get("arguments")),
                                }
                            ]
                        },
                    }
                )
        elif mid is not None:
            write({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "nope"}})
    if ignore_eof:
        threading.Event().wait()


if __name__ == "__main__":
    main()
