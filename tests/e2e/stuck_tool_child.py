"""A script whose local tool never returns: ``python stuck_tool_child.py MODE``.

It talks to the emulator named by ``MANTYX_BASE_URL`` (workspace and key from
the environment too). The tool prints ``tool started`` and then waits on an
event nothing sets. MODE says how the main thread finishes:

* ``timeout``: the tool has a 0.5 s timeout, so the run ends normally and
  ``agent.run`` returns; the script then ends (a cron job's life);
* ``leave``: the script leaves a ``with agent.stream()`` block once the tool
  is running, which cancels the run, and ends;
* ``wait``: ``agent.run`` waits for ever; the test sends a signal (SIGTERM
  is turned into ``KeyboardInterrupt``, as the CLI and the cron recipe do).
"""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
from types import FrameType

import mantyx_sync


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(mode: str) -> None:
    signal.signal(signal.SIGTERM, _terminate)
    # The test asks for every thread's stack (SIGUSR1) before killing a child that hangs.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    started, never = threading.Event(), threading.Event()

    @mantyx_sync.local_tool(timeout=0.5 if mode == "timeout" else None)
    def stuck() -> str:
        """Never returns."""
        print("tool started", flush=True)
        started.set()
        never.wait()
        return "unreachable"

    with mantyx_sync.Client() as client:
        agent = mantyx_sync.Agent(client, system_prompt="s", tools=[stuck])
        if mode == "leave":
            with agent.stream("go") as run:
                for event in run:
                    if event.type == "local_tool_call" and started.wait(10):
                        break
        else:
            print(agent.run("go").text, flush=True)
    print("main thread done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
