"""Helpers the local-tool tests share: the model's final answer, and what the SDK posted."""

from __future__ import annotations

from typing import Any

from mantyx_sync.testing import LocalMantyx

__all__ = ["final_with_results", "posted_results"]


def final_with_results(ctx: Any) -> str:
    """A final answer naming each tool result the model saw: ``name=result | name=ERR:...``."""
    return " | ".join(
        f"{r['name']}={r.get('result', 'ERR:' + str(r.get('error')))}" for r in ctx.tool_results
    )


def posted_results(server: LocalMantyx, run_id: str) -> list[dict[str, Any]]:
    """The tool-result bodies posted for ``run_id``, in the order the emulator got them."""
    return [
        r.json for r in server.requests if r.path.endswith(f"/agent-runs/{run_id}/tool-results")
    ]
