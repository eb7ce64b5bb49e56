"""An MCP server on your side: the model uses a notebook that runs in this process's child.

    python examples/mcp_local.py

``define_local_mcp`` starts ``examples/servers/notes_mcp_server.py`` over stdio
when the run starts, lists its tools and sends the catalog with the run; each
tool call the model makes is answered by calling the server, and the server is
stopped when the run ends. The server needs the official MCP Python SDK
(``pip install mcp``).

Uses MANTYX when MANTYX_API_KEY is set (with MANTYX_WORKSPACE), and otherwise
the bundled local emulator with a scripted model (no account, no network).
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

# A helper beside this file: _connect picks MANTYX or the emulator.
from _connect import connect

import mantyx_sync

SERVER = Path(__file__).resolve().parent / "servers" / "notes_mcp_server.py"


def scripted_model() -> list[Any]:
    """What the emulator's stand-in model does: add a note, search, read a missing one."""
    from mantyx_sync.testing import ToolCall, Turn

    def summary(ctx: Any) -> str:
        lines = ["Here is what the notes server said:"]
        for r in ctx.tool_results:
            text = r["result"] if "result" in r else "error: " + r["error"]
            lines.append(f"- {r['name']}: {'; '.join(text.splitlines())}")
        return "\n".join(lines)

    return [
        Turn(
            "I'll write that down.",
            tool_calls=[ToolCall("notes_add_note", {"title": "errands", "text": "buy milk"})],
        ),
        Turn(
            "Now let me look for everything about milk.",
            tool_calls=[
                ToolCall("notes_search_notes", {"query": "milk"}),
                ToolCall("notes_read_note", {"title": "holidays"}),
            ],
        ),
        Turn(summary),
    ]


def main() -> int:
    if importlib.util.find_spec("mcp") is None:
        print(
            "This example starts an MCP server built with the official MCP Python SDK, "
            "which is not installed.\nInstall it with:  pip install mcp",
            file=sys.stderr,
        )
        return 1

    notes = mantyx_sync.define_local_mcp(
        "notes",
        command=sys.executable,
        args=[str(SERVER)],
        timeout=30,
    )
    with contextlib.ExitStack() as stack:
        client = connect(stack, scripted_model())
        print(f"MCP server: {Path(sys.executable).name} {SERVER.name} (stdio), label 'notes'\n")

        agent = mantyx_sync.Agent(
            client,
            system_prompt="You keep the user's notes with the notes tools.",
            tools=[notes],
        )
        prompt = "Note that I need to buy milk, then show me every note about milk."
        print(f"> {prompt}\n")
        try:
            run = stack.enter_context(agent.stream(prompt))
        except mantyx_sync.ToolResolutionError as exc:
            print(f"Could not start the MCP server: {exc}", file=sys.stderr)
            return 1
        # The answer as it streams, and a line for each MCP call and its answer.
        for piece in run.text_stream():
            print(piece, end="", flush=True)
        result = run.result
        assert result is not None
        print(f"\nrun {result.run_id} finished; the MCP server was stopped with it.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
