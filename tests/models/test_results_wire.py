"""Catalog, run snapshot and session info from server bodies."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mantyx_sync._models.wire import WireFormatError
from mantyx_sync.events import ModelInfo, TokenUsage
from mantyx_sync.messages import Message
from mantyx_sync.results import Model, ModelCatalog, Pricing, RunSnapshot, SessionInfo

CATALOG = {
    "models": [
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
            "label": "OpenAI (workspace BYOK) - gpt-5.5",
            "provider": "openai",
            "vendorModelId": "gpt-5.5",
            "source": "workspace_provider",
            "contextWindowTokens": 200000,
            "pricing": None,
            "capabilities": {"vision": True},
        },
    ],
    "defaultModelId": "platform:cm6abc123",
}


def test_catalog() -> None:
    catalog = ModelCatalog.from_wire(CATALOG)
    assert catalog.default_model_id == "platform:cm6abc123"
    assert len(catalog) == 2
    assert [m.id for m in catalog] == ["platform:cm6abc123", "provider:cm6def456"]
    first = catalog.get("platform:cm6abc123")
    assert first == Model(
        id="platform:cm6abc123",
        label="Anthropic Claude Sonnet 4.5 (platform)",
        provider="anthropic",
        vendor_model_id="claude-sonnet-4-5",
        source="platform_offering",
        context_window_tokens=200000,
        pricing=Pricing(input_per_1m_usd=3.0, output_per_1m_usd=15.0, cache_read_per_1m_usd=0.3),
    )
    byok = catalog.get("provider:cm6def456")
    assert byok is not None and byok.pricing is None
    assert catalog.get("nope") is None


def test_catalog_minimal() -> None:
    catalog = ModelCatalog.from_wire({"models": [{"id": "a/b"}]})
    assert catalog.default_model_id is None
    assert list(catalog) == [Model(id="a/b")]
    assert ModelCatalog.from_wire({}).models == ()


def test_catalog_bad_shape() -> None:
    with pytest.raises(WireFormatError, match=r"\$\.models\[0\]\.id"):
        ModelCatalog.from_wire({"models": [{"label": "no id"}]})
    with pytest.raises(ValueError, match="contextWindowTokens"):
        ModelCatalog.from_wire({"models": [{"id": "x", "contextWindowTokens": "big"}]})


def test_snapshot_legacy_failed_run() -> None:
    body = {
        "id": "run_abc",
        "status": "failed",
        "finalText": '{"answer": ',
        "error": "Model output was truncated",
        "failureReason": {"errorClass": "truncation", "finishReason": "max_tokens"},
        "metadata": {"customer": "acme"},
        "spec": {"systemPrompt": "p"},
    }
    snapshot = RunSnapshot.from_wire(body)
    assert snapshot.id == "run_abc"
    assert snapshot.status == "failed"
    assert snapshot.final_text == '{"answer": '
    assert snapshot.failure_reason == {"errorClass": "truncation", "finishReason": "max_tokens"}
    assert snapshot.metadata == {"customer": "acme"}
    assert snapshot.tokens is None and snapshot.turns is None and snapshot.model is None
    assert snapshot.raw == body


def test_snapshot_with_cost_fields_and_run_id_key() -> None:
    snapshot = RunSnapshot.from_wire(
        {
            "runId": "run_1",
            "status": "completed",
            "finalText": "done",
            "sessionId": "ses_1",
            "tokens": {"inputTokens": 10, "cachedTokens": 2, "outputTokens": 5},
            "turns": 1,
            "model": {"id": "openai/gpt-5.5", "provider": "openai", "vendorModelId": "gpt-5.5"},
        }
    )
    assert snapshot.id == "run_1"
    assert snapshot.session_id == "ses_1"
    assert snapshot.tokens == TokenUsage(input_tokens=10, cached_tokens=2, output_tokens=5)
    assert snapshot.turns == 1
    assert snapshot.model == ModelInfo(
        id="openai/gpt-5.5", provider="openai", vendor_model_id="gpt-5.5"
    )


def test_snapshot_null_cost_fields_until_terminal() -> None:
    snapshot = RunSnapshot.from_wire(
        {"id": "r", "status": "running", "tokens": None, "turns": None, "model": None}
    )
    assert (snapshot.tokens, snapshot.turns, snapshot.model) == (None, None, None)


def test_snapshot_empty_provider_means_not_reported() -> None:
    snapshot = RunSnapshot.from_wire(
        {
            "id": "r",
            "status": "completed",
            "tokens": {"inputTokens": 0, "outputTokens": 0},
            "turns": 0,
            "model": {"id": "", "provider": ""},
        }
    )
    assert (snapshot.tokens, snapshot.turns, snapshot.model) == (None, None, None)


def test_snapshot_needs_an_id() -> None:
    with pytest.raises(WireFormatError, match="id"):
        RunSnapshot.from_wire({"status": "running"})


@pytest.mark.parametrize("key", ["sessionId", "id"])
def test_session_info(key: str) -> None:
    body: dict[str, Any] = {
        key: "ses_1",
        "status": "active",
        "metadata": {"env": "prod"},
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        "spec": {"systemPrompt": "p", "tools": []},
        "creationDate": "2026-01-01T00:00:00Z",
    }
    info = SessionInfo.from_wire(body)
    assert info.id == "ses_1"
    assert info.status == "active"
    assert info.metadata == {"env": "prod"}
    assert info.messages == (Message("user", "hi"), Message("assistant", "yo"))
    assert info.spec == {"systemPrompt": "p", "tools": []}
    assert info.raw == body


@pytest.mark.parametrize(
    ("messages", "where"),
    [([{"role": "user", "content": "x"}, {"role": 3}], "$.messages[1].role"), ([{}], "role")],
)
def test_session_info_with_a_message_of_another_shape_names_it(
    messages: list[dict[str, Any]], where: str
) -> None:
    with pytest.raises(WireFormatError, match=re.escape(where)):
        SessionInfo.from_wire({"sessionId": "ses_1", "messages": messages})


def test_session_info_minimal() -> None:
    info = SessionInfo.from_wire({"sessionId": "ses_2"})
    assert (info.status, info.metadata, info.messages, info.spec) == (None, None, (), None)
