"""Benchmarks of mantyx_sync against the local emulator (issue 6).

Run them all with ``python -m benchmarks`` from the repository root; see
``benchmarks/README.md`` for what each one measures and the latest results.
"""
