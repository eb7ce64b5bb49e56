"""What a caller can make a served app keep, parse or log (issue 28, items 10, 11, 13, 14).

Both apps, mounted on a real werkzeug server on 127.0.0.1: bodies are capped at
``max_body_bytes`` (1 MiB by default) and at one JSON value per 16 of those
bytes, counted before parsing; an Agent API ``session_id`` is at most 256
characters; a Host that is an IP address is answered when ``allowed_hosts``
names a wildcard address and the caller authenticates; what callers send is
escaped in the log.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import requests

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)

MIB = 1024 * 1024
A2A_MESSAGE = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}


@pytest.fixture
def agent(mantyx_server: LocalMantyx) -> mantyx_sync.Agent:
    return mantyx_sync.Agent(mantyx_server.client(), name="echo", system_prompt="Echo.")


def _a2a(**params: Any) -> dict[str, Any]:
    params.setdefault("message", A2A_MESSAGE)
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}


def _agent_api(**fields: Any) -> dict[str, Any]:
    return {"input": [{"role": "user", "content": "hi"}], "stream": False, **fields}


def _both(agent: mantyx_sync.Agent, serve_wsgi: Any, **kwargs: Any) -> list[tuple[str, Any]]:
    """(POST URL, body maker) of each app serving ``agent``."""
    a2a = serve_wsgi(serve.a2a_app(agent, **kwargs)).url + "/"
    agent_api = serve_wsgi(serve.agent_api_app(agent, **kwargs)).url + "/process"
    return [(a2a, _a2a), (agent_api, _agent_api)]


def _post(url: str, body: Any, **headers: str) -> requests.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **headers}
    return requests.post(url, data=data, headers=headers, timeout=30)


def _padded(make: Any, size: int) -> bytes:
    """A valid request of exactly ``size`` bytes (a string pads it)."""
    body = json.dumps(make(metadata={"pad": ""}))
    return body.replace('"pad": ""', '"pad": "' + "x" * (size - len(body)) + '"').encode()


def test_bodies_are_capped_at_a_mebibyte_by_default(
    agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    for url, make in _both(agent, serve_wsgi):
        assert len(_padded(make, MIB)) == MIB
        served = _post(url, _padded(make, MIB))
        assert served.status_code == 200 and "You said: hi" in served.text, served.text[:300]
        refused = _post(url, _padded(make, MIB + 1))
        assert refused.status_code == 413
        assert refused.json()["error"]["message"] == f"the body is larger than {MIB} bytes"


def test_the_body_cap_is_an_argument(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    for url, make in _both(agent, serve_wsgi, max_body_bytes=4 * MIB):
        assert _post(url, _padded(make, 2 * MIB)).status_code == 200
    for url, make in _both(agent, serve_wsgi, max_body_bytes=1000):
        assert _post(url, _padded(make, 1000)).status_code == 200
        assert _post(url, _padded(make, 1001)).status_code == 413
    for factory in (serve.a2a_app, serve.agent_api_app):
        with pytest.raises(mantyx_sync.SpecError, match="max_body_bytes"):
            factory(agent, max_body_bytes=0)


def test_values_are_counted_before_parsing(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    # 65,536 values fit in a MiB body; the same commas in a string are no values.
    many = ",".join(["0"] * 70_000)
    for url, make in _both(agent, serve_wsgi):
        body = json.dumps(make(metadata={"n": "MANY"})).replace('"MANY"', f"[{many}]")
        refused = _post(url, body.encode())
        assert "holds more than 65536 values" in refused.text, refused.text
        assert refused.status_code == (200 if url.endswith("/") else 400)  # JSON-RPC: in-band
        quoted = _post(url, make(metadata={"n": many, "k": 'a\\",:[{' * 10_000}))
        assert quoted.status_code == 200 and "You said: hi" in quoted.text, quoted.text[:300]
    assert len(mantyx_server.runs) == 2  # only the quoted ones ran


def test_an_agent_api_session_id_is_at_most_256_characters(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    url = serve_wsgi(serve.agent_api_app(agent)).url + "/process"
    refused = _post(url, _agent_api(session_id="s" * 257))
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "session_id must be at most 256 characters"
    assert mantyx_server.sessions == {}
    served = _post(url, _agent_api(session_id="s" * 256))
    assert served.status_code == 200 and served.json()["session_id"] == "s" * 256


def test_a_wildcard_address_lets_in_ip_hosts_of_authenticated_callers(
    agent: mantyx_sync.Agent, serve_wsgi: Any
) -> None:
    token = {"Authorization": "Bearer wild-tok"}
    for wildcard in ("0.0.0.0", "::"):
        kwargs = {"allowed_hosts": [wildcard], "authenticate": serve.bearer_token("wild-tok")}
        for url, make in _both(agent, serve_wsgi, **kwargs):
            for host in ("192.0.2.7:8000", "[2001:db8::1]", "10.0.0.5"):
                assert _post(url, make(), Host=host, **token).status_code == 200, host
                assert _post(url, make(), Host=host).status_code == 401
            for host in ("evil.example", "192.0.2.7.nip.io", "[::1].evil"):
                assert _post(url, make(), Host=host, **token).status_code == 421, host
    # Without authentication, a wildcard lets in no more than loopback.
    for url, make in _both(agent, serve_wsgi, allowed_hosts=["0.0.0.0"]):
        assert _post(url, make(), Host="192.0.2.7").status_code == 421
        assert _post(url, make(), Host="127.0.0.1").status_code == 200


FORGED = "\nCRITICAL forged: the admin logged in"


def test_what_callers_send_is_escaped_in_the_log(
    mantyx_server: LocalMantyx,
    agent: mantyx_sync.Agent,
    serve_wsgi: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mantyx_sync.serve")
    a2a, agent_api = (url for url, _ in _both(agent, serve_wsgi))
    context = "ctx" + FORGED
    assert _post(a2a, _a2a(message={**A2A_MESSAGE, "contextId": context})).status_code == 200
    assert _post(agent_api, _agent_api(session_id="sess" + FORGED)).status_code == 200
    # A run that cannot start logs the id and the error, which quotes the prompt.
    too_long = [{"text": "x" * 200_001 + FORGED}]
    message = {**A2A_MESSAGE, "contextId": context, "parts": too_long}
    _post(a2a, _a2a(message=message))
    _post(agent_api, {"input": [{"role": "user", "content": too_long}], "session_id": "s" + FORGED})
    logged = [record.getMessage() for record in caplog.records]
    assert any("'ctx\\nCRITICAL forged" in line for line in logged), logged
    assert any("'sess\\nCRITICAL forged" in line for line in logged), logged
    assert sum("could not start a run" in line for line in logged) == 2, logged
    assert not [line for line in logged if "\n" in line], logged
