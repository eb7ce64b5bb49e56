"""Reading an event stream keeps every frame whole and the user's logging untouched.

Both hold only from sseclient-py 1.7 on, the floor setup.cfg declares: earlier
releases split a frame at Unicode line separators inside its JSON (before 1.6)
and logged through the root logger, configuring it as a side effect.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import mantyx_sync
from mantyx_sync.testing import LocalMantyx, Turn

# JSON allows these raw inside a string (JSON.stringify and the emulator send
# them unescaped); str.splitlines() treats each one as a line break.
SEPARATORS = "a\u2028b\u2029c\x85d\x1ce\x0bf\x0cg"


def test_unicode_line_separators_inside_a_frame_are_text(mantyx_server: LocalMantyx) -> None:
    mantyx_server.set_model([Turn(SEPARATORS, chunks=[SEPARATORS[:5], SEPARATORS[5:]])])
    # No reconnects: a frame split apart is skipped, and the run then fails at once.
    client = mantyx_server.client(stream_reconnects=0)
    result = mantyx_sync.Agent(client, system_prompt="s").run("x")
    client.close()
    assert result.text == SEPARATORS
    assert [e.text for e in result.events if e.type == "assistant_delta"] == [
        SEPARATORS[:5],
        SEPARATORS[5:],
    ]


def test_reading_a_stream_leaves_the_root_logger_alone() -> None:
    # logging.debug() on the root logger calls basicConfig(), which would give
    # the user's application a stderr handler it never asked for.
    script = textwrap.dedent(
        """
        import logging
        import mantyx_sync
        from mantyx_sync.testing import LocalMantyx, Turn

        with LocalMantyx(model=[Turn("hi")]) as server:
            agent = mantyx_sync.Agent(server.client(), system_prompt="s")
            assert agent.run("x").text == "hi"
        print(len(logging.getLogger().handlers))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
