"""The emulator's model catalog and ``modelId`` resolution."""

from __future__ import annotations

import copy
from typing import Any, Final

__all__ = ["ModelNotFound", "models_body", "resolve_model"]

DEFAULT_MODEL_ID: Final = "platform:cm6abc123"

# Two entries share a vendor id so the bare "gpt-5.5" shorthand is ambiguous
# (a bare vendor id only works when exactly one model runs it).
MODELS: Final[tuple[dict[str, Any], ...]] = (
    {
        "id": "platform:cm6abc123",
        "label": "Anthropic Claude Sonnet 4.5 (platform)",
        "provider": "anthropic",
        "vendorModelId": "claude-sonnet-4-5",
        "source": "platform_offering",
        "contextWindowTokens": 200000,
        "pricing": {"inputPer1MUsd": 3.0, "outputPer1MUsd": 15.0, "cacheReadPer1MUsd": 0.3},
    },
    {
        "id": "provider:cm6def456",
        "label": "OpenAI (workspace BYOK) — gpt-5.5",
        "provider": "openai",
        "vendorModelId": "gpt-5.5",
        "source": "workspace_provider",
        "contextWindowTokens": 200000,
        "pricing": None,
    },
    {
        "id": "platform:cm6ghi789",
        "label": "OpenAI gpt-5.5 (platform)",
        "provider": "openai",
        "vendorModelId": "gpt-5.5",
        "source": "platform_offering",
        "contextWindowTokens": 400000,
        "pricing": {"inputPer1MUsd": 1.25, "outputPer1MUsd": 10.0, "cacheReadPer1MUsd": None},
    },
    {
        "id": "provider:cm6jkl012",
        "label": "Google (workspace BYOK) — gemini-2.5-pro",
        "provider": "google",
        "vendorModelId": "gemini-2.5-pro",
        "source": "workspace_provider",
        "contextWindowTokens": 1000000,
        "pricing": None,
    },
)
_BY_ID: Final = {entry["id"]: entry for entry in MODELS}


class ModelNotFound(Exception):
    """A ``modelId`` that names no model, or more than one.

    :ivar candidates: ids the caller may have meant.
    """

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = candidates


def models_body() -> dict[str, Any]:
    """The ``GET /models`` response body (a fresh copy)."""
    return {"models": copy.deepcopy(list(MODELS)), "defaultModelId": DEFAULT_MODEL_ID}


def resolve_model(model_id: str | None) -> dict[str, Any]:
    """The ``model`` block (``id``, ``provider``, ``vendorModelId``) for a ``modelId``.

    Accepts every documented form: a catalog id,
    ``provider:<id>:<vendor>``, ``{provider}/{vendorModelId}``, a bare vendor id
    run by exactly one model, or nothing (the default model).

    :raises ModelNotFound: the id is unknown or ambiguous.
    """
    model_id = DEFAULT_MODEL_ID if model_id is None else model_id
    if model_id in _BY_ID:
        return _model_block(_BY_ID[model_id], _BY_ID[model_id]["vendorModelId"])
    if model_id.startswith("provider:") and model_id.count(":") >= 2:
        base, _, vendor = model_id.rpartition(":")
        if base in _BY_ID and vendor:
            return _model_block(_BY_ID[base], vendor)
    if "/" in model_id:
        provider, _, vendor = model_id.partition("/")
        for entry in MODELS:
            if entry["provider"] == provider and entry["vendorModelId"] == vendor:
                return _model_block(entry, vendor)
    matches = [entry for entry in MODELS if entry["vendorModelId"] == model_id]
    if len(matches) == 1:
        return _model_block(matches[0], model_id)
    if matches:
        ids = [entry["id"] for entry in matches]
        raise ModelNotFound(f"Model '{model_id}' is ambiguous; pick one of: {', '.join(ids)}", ids)
    raise ModelNotFound(
        f"Model '{model_id}' is not available in this workspace",
        [entry["id"] for entry in MODELS],
    )


def _model_block(entry: dict[str, Any], vendor: str) -> dict[str, Any]:
    return {"id": entry["id"], "provider": entry["provider"], "vendorModelId": vendor}
