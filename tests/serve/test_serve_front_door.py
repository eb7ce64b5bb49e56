"""What a browser page can make a served app do: nothing (issue 20, item 1).

A page can POST ``text/plain`` or a form to ``http://127.0.0.1:PORT/`` without
a CORS preflight, and a DNS-rebound name reaches the same socket with its own
Host header. Both apps answer such requests 415 / 421 before any run starts,
and the A2A card's URLs never echo an unchecked Host.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)

A2A_SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}
AGENT_API_SEND = {"input": [{"role": "user", "content": "hi"}], "stream": False}


@pytest.fixture
def agent(mantyx_server: LocalMantyx) -> mantyx_sync.Agent:
    return mantyx_sync.Agent(mantyx_server.client(), name="echo", system_prompt="Echo.")


def _both(agent: mantyx_sync.Agent, serve_wsgi: Any, **kwargs: Any) -> list[tuple[str, Any]]:
    """(POST URL, JSON body) of each app serving ``agent``."""
    a2a = serve_wsgi(serve.a2a_app(agent, **kwargs)).url + "/"
    agent_api = serve_wsgi(serve.agent_api_app(agent, **kwargs)).url + "/process"
    return [(a2a, A2A_SEND), (agent_api, AGENT_API_SEND)]


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
        "application/jsonp",
    ],
)
def test_a_body_that_is_not_json_is_415_before_anything_runs(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent, serve_wsgi: Any, content_type: str | None
) -> None:
    for url, body in _both(agent, serve_wsgi):
        headers = {"Content-Type": content_type} if content_type else {}
        reply = requests.post(url, data=json.dumps(body), headers=headers, timeout=10)
        assert reply.status_code == 415, (url, reply.text)
        assert "application/json" in reply.json()["error"]["message"]
    assert mantyx_server.runs == {} and mantyx_server.sessions == {}


@pytest.mark.parametrize(
    "content_type", ["application/json", "Application/JSON; charset=utf-8", "application/a2a+json"]
)
def test_json_media_types_are_served(
    agent: mantyx_sync.Agent, serve_wsgi: Any, content_type: str
) -> None:
    for url, body in _both(agent, serve_wsgi):
        headers = {"Content-Type": content_type}
        reply = requests.post(url, data=json.dumps(body), headers=headers, timeout=30)
        assert reply.status_code == 200, reply.text
        assert "You said: hi" in reply.text


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example"])
def test_a_host_outside_the_allowed_names_is_421(
    mantyx_server: LocalMantyx, agent: mantyx_sync.Agent, serve_wsgi: Any, host: str
) -> None:
    for url, body in _both(agent, serve_wsgi):
        reply = requests.post(url, json=body, headers={"Host": host}, timeout=10)
        assert reply.status_code == 421, reply.text
        assert "allowed_hosts" in reply.json()["error"]["message"]
        assert host not in reply.text  # never echoed
    a2a = serve_wsgi(serve.a2a_app(agent)).url
    card = requests.get(f"{a2a}/.well-known/agent-card.json", headers={"Host": host}, timeout=10)
    assert card.status_code == 421 and host not in card.text
    assert mantyx_server.runs == {} and mantyx_server.sessions == {}
    # A health probe still answers, whatever name it used.
    assert requests.get(f"{a2a}/health", headers={"Host": host}, timeout=10).status_code == 200


def test_loopback_names_on_any_port_are_allowed(agent: mantyx_sync.Agent, serve_wsgi: Any) -> None:
    url = serve_wsgi(serve.a2a_app(agent)).url
    for host in ["localhost", "LOCALHOST:1", "127.0.0.1:9", "[::1]", "[::1]:8000", "localhost."]:
        card = requests.get(
            f"{url}/.well-known/agent-card.json", headers={"Host": host}, timeout=10
        )
        assert card.status_code == 200, host
        assert card.json()["url"] == f"http://{host}/"


def test_allowed_hosts_adds_names(agent: mantyx_sync.Agent, serve_wsgi: Any) -> None:
    for url, body in _both(agent, serve_wsgi, allowed_hosts=["Agents.Example.com"]):
        reply = requests.post(
            url, json=body, headers={"Host": "agents.example.com:8443"}, timeout=30
        )
        assert reply.status_code == 200 and "You said: hi" in reply.text
        other = requests.post(url, json=body, headers={"Host": "example.com"}, timeout=10)
        assert other.status_code == 421
        assert requests.post(url, json=body, timeout=30).status_code == 200  # loopback still
    url = serve_wsgi(serve.a2a_app(agent, allowed_hosts=["*"])).url
    card = requests.get(f"{url}/.well-known/agent.json", headers={"Host": "any.name"}, timeout=10)
    assert card.status_code == 200 and card.json()["url"] == "http://any.name/"


def test_public_url_makes_the_card_url(agent: mantyx_sync.Agent, serve_wsgi: Any) -> None:
    app = serve.a2a_app(agent, public_url="https://agents.example.com/a2a/")
    url = serve_wsgi(app).url
    card = requests.get(f"{url}/.well-known/agent-card.json", timeout=10).json()
    assert card["url"] == "https://agents.example.com/a2a/"
    assert {i["url"] for i in card["supportedInterfaces"]} == {"https://agents.example.com/a2a/"}
    # The public URL's host is allowed (the proxy in front forwards it).
    headers = {"Host": "agents.example.com"}
    card = requests.get(f"{url}/.well-known/agent-card.json", headers=headers, timeout=10)
    assert card.status_code == 200 and card.json()["url"] == "https://agents.example.com/a2a/"


def test_bad_front_door_arguments(agent: mantyx_sync.Agent) -> None:
    for make in (serve.a2a_app, serve.agent_api_app):
        with pytest.raises(mantyx_sync.SpecError, match="allowed_hosts"):
            make(agent, allowed_hosts="example.com")  # type: ignore[arg-type]
        with pytest.raises(mantyx_sync.SpecError, match="allowed_hosts"):
            make(agent, allowed_hosts=["http://example.com/"])
        with pytest.raises(mantyx_sync.SpecError, match="allowed_hosts"):
            make(agent, allowed_hosts=[""])
    with pytest.raises(mantyx_sync.SpecError, match="public_url"):
        serve.a2a_app(agent, public_url="agents.example.com")
