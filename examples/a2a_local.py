"""An A2A peer on your side: the model delegates to an agent only this process can reach.

    python examples/a2a_local.py

The example starts ``examples/servers/echo_a2a_peer.py`` (an a2a-sdk agent on
127.0.0.1) in a subprocess and waits until its Agent Card is served.
``define_local_a2a`` then fetches the card when the run starts, MANTYX shows the
peer to the model as one tool, and each call is sent to the peer by this
process, continuing one A2A conversation. The peer is stopped at the end.
It needs ``pip install "a2a-sdk[http-server]>=1" uvicorn``.

Uses MANTYX when MANTYX_API_KEY is set (with MANTYX_WORKSPACE), and otherwise
the bundled local emulator with a scripted model (no account, no network).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests

# A helper beside this file: _connect picks MANTYX or the emulator.
from _connect import connect

import mantyx_sync

PEER = Path(__file__).resolve().parent / "servers" / "echo_a2a_peer.py"
STARTUP_TIMEOUT_S = 30.0


@contextlib.contextmanager
def running_peer() -> Iterator[str]:
    """Start the echo peer, wait (bounded) until its card is served, yield its base URL."""
    proc = subprocess.Popen([sys.executable, str(PEER), "0"], stdout=subprocess.PIPE, text=True)
    try:
        yield _wait_ready(proc)
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()
        print("A2A peer stopped.")


def _wait_ready(proc: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    first_line: list[str] = []
    stdout = proc.stdout
    assert stdout is not None
    # readline() has no timeout of its own; a thread lets the wait be bounded.
    reader = threading.Thread(target=lambda: first_line.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(STARTUP_TIMEOUT_S)
    if not first_line or not first_line[0].startswith("listening on "):
        raise RuntimeError(f"the A2A peer did not start (exit code {proc.poll()})")
    base_url = first_line[0].split("listening on ", 1)[1].strip()
    card_url = f"{base_url}/.well-known/agent-card.json"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the A2A peer exited with code {proc.returncode}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(card_url, timeout=1).status_code == 200:
                return base_url
        time.sleep(0.1)
    raise RuntimeError(f"the A2A peer did not serve {card_url} within {STARTUP_TIMEOUT_S:g} s")


def scripted_model() -> list[Any]:
    """What the emulator's stand-in model does: two messages to the peer, then a summary."""
    from mantyx_sync.testing import ToolCall, Turn

    def summary(ctx: Any) -> str:
        replies = [r.get("result", "error: " + str(r.get("error"))) for r in ctx.tool_results]
        return "The echo agent answered: " + " / ".join(replies)

    return [
        Turn(
            "Let me ask the echo agent.",
            tool_calls=[ToolCall("echo_agent", {"message": "Hello from mantyx_sync"})],
        ),
        Turn(
            "And once more, in the same conversation.",
            tool_calls=[ToolCall("echo_agent", {"message": "Do you remember me?"})],
        ),
        Turn(summary),
    ]


def peer_dependencies_missing() -> str | None:
    """Why the example peer cannot run here, or ``None`` when it can."""
    if importlib.util.find_spec("a2a") is None or importlib.util.find_spec("uvicorn") is None:
        return "a2a-sdk and uvicorn are not installed"
    try:
        major = int(importlib.metadata.version("a2a-sdk").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None  # an unusual install; let the peer itself report a problem
    return None if major >= 1 else "the example peer needs a2a-sdk 1.x"


def main() -> int:
    missing = peer_dependencies_missing()
    if missing is not None:
        print(
            f"This example starts an A2A peer built with a2a-sdk, but {missing}.\n"
            'Install them with:  pip install "a2a-sdk[http-server]>=1" uvicorn',
            file=sys.stderr,
        )
        return 1

    with contextlib.ExitStack() as stack:
        client = connect(stack, scripted_model())

        try:
            peer_url = stack.enter_context(running_peer())
        except RuntimeError as exc:
            print(f"Could not start the A2A peer: {exc}", file=sys.stderr)
            return 1
        print(f"A2A peer running at {peer_url}\n")

        echo = mantyx_sync.define_local_a2a(
            "echo_agent",
            url=peer_url,
            description="An agent that repeats what you send it. Use it to test delegation.",
            timeout=30,
        )
        agent = mantyx_sync.Agent(
            client,
            system_prompt="You delegate to the echo agent when asked to.",
            tools=[echo],
        )
        prompt = "Say hello to the echo agent, then ask it whether it remembers you."
        print(f"> {prompt}\n")
        try:
            run = stack.enter_context(agent.stream(prompt))
        except mantyx_sync.ToolResolutionError as exc:
            print(f"Could not reach the A2A peer: {exc}", file=sys.stderr)
            return 1
        # The answer as it streams, and a line for each message to the peer and its reply.
        for piece in run.text_stream():
            print(piece, end="", flush=True)
        result = run.result
        assert result is not None
        print(f"\nrun {result.run_id} finished.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
