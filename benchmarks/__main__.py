"""``python -m benchmarks``: run every benchmark and print the results table."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import BESIDE_TREE, CLIENT_TREE, beside_copy
from ._suite import Config, run_suite

NAMES = (
    "roundtrip",
    "fanout",
    "stream",
    "import",
    "memory",
    "scale",
    "coldstart",
    "swarm",
    "thousand",
    "fleet",
)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the table (and optionally write raw JSON)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="mantyx_sync benchmarks against LocalMantyx on 127.0.0.1.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes (a smoke run, figures meaningless)"
    )
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(NAMES)}")
    parser.add_argument(
        "--no-official",
        action="store_true",
        help="skip the official SDK column even when it is installed",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the raw figures as JSON")
    parser.add_argument(
        "--client",
        metavar="DIR",
        help="measure the mantyx_sync of the checkout DIR as the client, against this "
        "tree's emulator (the tree before a change, for the 'no row worse' check)",
    )
    parser.add_argument(
        "--beside",
        metavar="DIR",
        help="also run the mantyx_sync of the checkout DIR in rows 1 and 3, in the same "
        "client process as this tree's, round by round: the 'before' ratio of a change",
    )
    parser.add_argument(
        "--reps",
        type=int,
        default=1,
        metavar="N",
        help="repeat every measurement N times as often (steadier on a noisy machine)",
    )
    args = parser.parse_args(argv)
    only = frozenset(filter(None, (n.strip() for n in args.only.split(","))))
    unknown = only - set(NAMES)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    options: dict[str, Any] = {"official": not args.no_official, "only": only}
    if args.client:
        if not (Path(args.client) / "mantyx_sync" / "__init__.py").is_file():
            parser.error(f"--client {args.client}: no mantyx_sync package there")
        os.environ[CLIENT_TREE] = str(Path(args.client).resolve())
    if args.reps < 1:
        parser.error("--reps must be 1 or more")
    workdir = contextlib.ExitStack()
    if args.beside:
        if not (Path(args.beside) / "mantyx_sync" / "__init__.py").is_file():
            parser.error(f"--beside {args.beside}: no mantyx_sync package there")
        copy = workdir.enter_context(tempfile.TemporaryDirectory(prefix="mantyx-beside-"))
        os.environ[BESIDE_TREE] = str(beside_copy(Path(args.beside), Path(copy)))
    config = (Config.quick(**options) if args.quick else Config(**options)).repeated(args.reps)
    with workdir:
        report = run_suite(config)
    print(f"Machine: {report.machine}")
    print()
    print(report.table())
    print()
    print(f"({report.seconds:.0f} s; medians of the repetitions, [min–max] beside them)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"machine": report.machine, "raw": report.raw}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
