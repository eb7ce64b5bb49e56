"""Benchmarks of mantyx_sync against the local emulator (issue 6).

Run them all with ``python -m benchmarks`` from the repository root; see
``benchmarks/README.md`` for what each one measures and the latest results.
"""

CLIENT_TREE = "MANTYX_BENCH_CLIENT"
"""The environment variable ``--client DIR`` sets: a checkout whose mantyx_sync the
client processes import instead of this tree's (the emulator stays this tree's)."""
