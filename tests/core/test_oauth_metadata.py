"""OAuth endpoint discovery (RFC 8414) against servers the emulator does not imitate:
a web app that answers every unknown path with its HTML page, or with a redirect."""

from __future__ import annotations

import pytest
import responses
from core_support import BASE

from mantyx_sync import OAuth

METADATA = f"{BASE}/.well-known/oauth-authorization-server"


@pytest.mark.parametrize(
    "answer",
    [
        {
            "status": 200,
            "body": "<!doctype html><html>app shell</html>",
            "content_type": "text/html",
        },
        {"status": 404, "json": {"error": "not_found"}},
        {"status": 302, "headers": {"Location": f"{BASE}/login"}},
        {"status": 200, "json": ["not", "a", "document"]},
    ],
    ids=["html-200", "404", "redirect", "json-not-an-object"],
)
@responses.activate
def test_no_usable_metadata_means_the_documented_fallback_paths(answer: dict[str, object]) -> None:
    responses.get(METADATA, **answer)  # type: ignore[arg-type]
    endpoints = OAuth("app", base_url=BASE).metadata()
    assert not endpoints.discovered
    assert endpoints.authorization_endpoint == f"{BASE}/api/oauth/authorize"
    assert endpoints.token_endpoint == f"{BASE}/api/oauth/token"
    assert len(responses.calls) == 1


@responses.activate
def test_metadata_endpoints_are_used_and_missing_ones_fall_back() -> None:
    responses.get(
        METADATA,
        json={
            "issuer": BASE,
            "authorization_endpoint": "https://auth.mantyx.test/authorize",
            "token_endpoint": "https://auth.mantyx.test/token",
        },
    )
    oauth = OAuth("app", base_url=BASE)
    endpoints = oauth.metadata()
    assert endpoints.discovered
    assert endpoints.token_endpoint == "https://auth.mantyx.test/token"
    assert endpoints.revocation_endpoint == f"{BASE}/api/oauth/revoke"
    assert oauth.metadata() is endpoints and len(responses.calls) == 1, "fetched once"
