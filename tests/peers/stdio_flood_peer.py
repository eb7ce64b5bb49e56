"""A stdio MCP server that writes without newlines, or dies saying why on stderr.

Options (argv):
  --stdout-line N   before anything else, write N bytes of one line with no end on
                    stdout (in 1 MiB blocks), then serve normally
  --stderr N        before anything else, write N bytes with no newline on stderr,
                    then serve normally
  --die TEXT        write TEXT (and a newline) on stderr and exit with code 3
  --progress PATH   after each stdout block, write how many bytes went out so far
  --deep N          answer a tool call with a result nested N lists deep

One tool, ``a``, which answers ``"ok"``.
"""

from __future__ import annotations

import json
import sys

BLOCK = b"x" * (1 << 20)


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def _flood(stream: object, total: int, progress: str | None) -> None:
    out = stream.buffer  # type: ignore[attr-defined]
    sent = 0
    while sent < total:
        block = BLOCK[: total - sent]
        out.write(block)
        out.flush()
        sent += len(block)
        if progress:
            with open(progress, "w") as fh:
                fh.write(str(sent))


def _write(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    argv = sys.argv[1:]
    die = _flag(argv, "--die")
    if die is not None:
        sys.stderr.write(die + "\n")
        sys.exit(3)
    stderr_bytes = _flag(argv, "--stderr")
    if stderr_bytes is not None:
        _flood(sys.stderr, int(stderr_bytes), None)
    stdout_bytes = _flag(argv, "--stdout-line")
    if stdout_bytes is not None:
        _flood(sys.stdout, int(stdout_bytes), _flag(argv, "--progress"))
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "flood", "version": "1"},
            }
            _write({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif method == "tools/list":
            tools = [{"name": "a", "inputSchema": {"type": "object"}}]
            _write({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})
        elif method == "tools/call" and _flag(argv, "--deep") is not None:
            depth = int(_flag(argv, "--deep") or 0)
            deep = "[" * depth + "]" * depth
            sys.stdout.write(
                f'{{"jsonrpc": "2.0", "id": {json.dumps(message["id"])}, "result": {deep}}}\n'
            )
            sys.stdout.flush()
        elif method == "tools/call":
            content = [{"type": "text", "text": "ok"}]
            _write({"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}})


if __name__ == "__main__":
    main()
