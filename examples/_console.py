"""How the examples print a streamed run: the answer as it streams, tool events on their own lines.

:func:`print_stream` prints each ``assistant_delta`` as it arrives and, for
any other event, the line the example's ``line_for`` makes of it (``None``
skips the event), starting a new line first when the answer stopped mid-line.
"""

from __future__ import annotations

from collections.abc import Callable

import mantyx_sync

__all__ = ["print_stream"]


def print_stream(
    run: mantyx_sync.Run, line_for: Callable[[mantyx_sync.RunEvent], str | None]
) -> None:
    """Print ``run``'s answer as it streams and ``line_for(event)`` for its other events."""
    mid_line = False
    for event in run:
        if event.type == "assistant_delta":
            text = event.text or ""
            print(text, end="", flush=True)
            mid_line = not text.endswith("\n")
            continue
        line = line_for(event)
        if line is None:
            continue
        if mid_line:
            print()
            mid_line = False
        print(line, flush=True)
