"""Attachments: ask an agent to summarise a local PDF or text file.

    python examples/attachments.py [path/to/file.pdf|.txt|.md]

Without a path, a small text file is written to a temporary folder and used.
Runs against MANTYX when MANTYX_API_KEY is set (with MANTYX_WORKSPACE), and
otherwise against the bundled local emulator (``mantyx_sync.testing``), whose
scripted stand-in model can only describe the files it received.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

# A helper beside this file: _connect picks MANTYX or the emulator.
from _connect import connect

import mantyx_sync
from mantyx_sync import Attachment

SAMPLE = """Quarterly notes

Revenue grew 12% on the previous quarter, led by the new self-serve plan.
Support tickets fell by a third after the onboarding guide was rewritten.
Next quarter: ship the billing dashboard and hire two engineers.
"""


def describe_files(ctx: object) -> object:
    """The emulator's stand-in model: it reports what arrived, as a real model would see it."""
    from mantyx_sync.testing import Turn

    files = getattr(ctx, "attachments", [])
    lines = [f"I received {len(files)} file(s):"]
    for meta in files:
        size = meta.get("sizeBytes")
        lines.append(f"- {meta.get('filename')} ({meta.get('mimeType')}, {size} bytes)")
    lines.append("A real model would summarise their content here.")
    return Turn("\n".join(lines))


def main(argv: list[str]) -> int:
    with contextlib.ExitStack() as stack:
        if len(argv) > 1:
            path = Path(argv[1])
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            path = folder / "quarterly-notes.txt"
            path.write_text(SAMPLE, encoding="utf-8")
        try:
            # Checked now (exists, MIME type accepted); read when the run is sent.
            attachment = Attachment.from_path(path)
        except mantyx_sync.SpecError as exc:
            print(f"cannot attach {path}: {exc}", file=sys.stderr)
            return 2

        client = connect(stack, describe_files)
        print()

        agent = mantyx_sync.Agent(client, system_prompt="You summarise documents in three bullets.")
        print(
            f"> Summarise {attachment.filename} ({attachment.mime_type}, {attachment.size} bytes)\n"
        )
        result = agent.run("Summarise the attached file.", attachments=[attachment])
        print(result.text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
