"""Quickstart: an agent with two local tools, streamed to the terminal.

Runs against MANTYX when MANTYX_API_KEY is set (with MANTYX_WORKSPACE), and
otherwise against the bundled local emulator (``mantyx_sync.testing``), so it
works offline with no account:

    python examples/quickstart.py
"""

from __future__ import annotations

import contextlib
import datetime
import os
import sys

import mantyx_sync


@mantyx_sync.local_tool(read_only=True)
def word_count(text: str) -> int:
    """Count the words in a piece of text.

    Args:
        text: The text to count.
    """
    return len(text.split())


@mantyx_sync.local_tool(read_only=True)
def current_time(timezone_offset_hours: int = 0) -> str:
    """The current time as an ISO 8601 string.

    Args:
        timezone_offset_hours: Hours east of UTC.
    """
    tz = datetime.timezone(datetime.timedelta(hours=timezone_offset_hours))
    return datetime.datetime.now(tz).isoformat(timespec="seconds")


def answer(results: dict[str, str | None]) -> str:
    return (
        f"'the quick brown fox' has {results['word_count']} words, "
        f"and the time is {results['current_time']}."
    )


def main() -> int:
    with contextlib.ExitStack() as stack:
        if os.environ.get("MANTYX_API_KEY"):
            client = stack.enter_context(mantyx_sync.Client())
            print(f"Using MANTYX at {client.config.base_url} (workspace {client.config.workspace})")
        else:
            from mantyx_sync.testing import LocalMantyx, ToolCall, Turn

            # A scripted stand-in for the model: one turn calling both tools,
            # then an answer built from what the tools returned.
            script = [
                Turn(
                    "Let me count the words and check the clock.",
                    tool_calls=[
                        ToolCall("word_count", {"text": "the quick brown fox"}),
                        ToolCall("current_time", {}),
                    ],
                ),
                Turn(lambda ctx: answer({r["name"]: r.get("result") for r in ctx.tool_results})),
            ]
            server = stack.enter_context(LocalMantyx(model=script))
            client = stack.enter_context(server.client())
            print(
                f"MANTYX_API_KEY is not set: using the local MANTYX emulator at {server.base_url}"
            )
            print("(a scripted stand-in model, not a real LLM)\n")

        agent = mantyx_sync.Agent(
            client,
            system_prompt="You are a helpful assistant. Use the tools when they help.",
            tools=[word_count, current_time],
        )
        prompt = "How many words are in 'the quick brown fox', and what time is it?"
        print(f"> {prompt}\n")
        # The answer as it streams, each model turn on a line of its own, and a
        # line when each tool call starts and when it is answered.
        with agent.stream(prompt) as run:
            for piece in run.text_stream():
                print(piece, end="", flush=True)
        result = run.result
        assert result is not None
        print(f"\nrun {result.run_id} finished: {len(result.events)} events")
        if result.tokens is not None:
            print(f"tokens: {result.tokens.input_tokens} in / {result.tokens.output_tokens} out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
