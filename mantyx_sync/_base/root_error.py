"""The root of the package's errors, in the foundation: :mod:`mantyx_sync.errors`
builds on it, and the emulator (``mantyx_sync.testing``), which never imports
the SDK, raises it too (its ``CassetteError``), so one ``except MantyxError``
catches both."""

from __future__ import annotations

__all__ = ["MantyxError"]


class MantyxError(Exception):
    """Base class of every error raised by mantyx_sync (import it from
    ``mantyx_sync`` or ``mantyx_sync.errors``)."""
