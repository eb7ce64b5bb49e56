"""Client configuration: the MANTYX_* environment, bad options, and secrets kept out of sight."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import responses
from core_support import BASE, KEY, ROOT

from mantyx_sync import Agent, AuthError, Client, ConfigurationError
from mantyx_sync.config import DEFAULT_BASE_URL, ClientConfig

OAUTH_TOKEN = "mantyx_at_oauth_secret_token_456"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield rsps


def test_client_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MANTYX_API_KEY", KEY)
    monkeypatch.setenv("MANTYX_WORKSPACE", "acme")
    monkeypatch.setenv("MANTYX_BASE_URL", f"{BASE}/")
    client = Client()
    assert client.config.api_key == KEY
    assert client.config.workspace == "acme"
    assert client.config.base_url == BASE
    assert client.config.api_root == ROOT


def test_default_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MANTYX_API_KEY", KEY)
    monkeypatch.setenv("MANTYX_WORKSPACE", "acme")
    config = Client().config
    assert config.base_url == DEFAULT_BASE_URL == "https://app.mantyx.io"
    assert config.api_root == "https://app.mantyx.io/api/v1/workspaces/acme"


def test_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MANTYX_API_KEY", "mantyx_env_key_000")
    monkeypatch.setenv("MANTYX_WORKSPACE", "env-ws")
    monkeypatch.setenv("MANTYX_BASE_URL", "https://env.example")
    config = Client(KEY, workspace="acme", base_url=BASE).config
    assert (config.api_key, config.workspace, config.base_url) == (KEY, "acme", BASE)


def test_env_client_is_used_on_the_wire(
    monkeypatch: pytest.MonkeyPatch, mock: responses.RequestsMock
) -> None:
    monkeypatch.setenv("MANTYX_API_KEY", KEY)
    monkeypatch.setenv("MANTYX_WORKSPACE", "acme")
    monkeypatch.setenv("MANTYX_BASE_URL", BASE)
    mock.get(f"{ROOT}/models", json={"models": []})
    Client().models.list()
    assert mock.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"


def test_agent_without_client_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MANTYX_API_KEY", KEY)
    monkeypatch.setenv("MANTYX_WORKSPACE", "acme")
    with Agent(system_prompt="p") as agent:
        assert agent.client.config.workspace == "acme"


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"MANTYX_WORKSPACE": "acme"}, "MANTYX_API_KEY"),
        ({"MANTYX_API_KEY": KEY}, "MANTYX_WORKSPACE"),
        ({}, "MANTYX_API_KEY"),
        ({"MANTYX_API_KEY": "", "MANTYX_WORKSPACE": "acme"}, "MANTYX_API_KEY"),
        ({"MANTYX_API_KEY": KEY, "MANTYX_WORKSPACE": ""}, "MANTYX_WORKSPACE"),
    ],
)
def test_missing_variable_is_named(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], missing: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError, match=missing) as info:
        Client()
    assert isinstance(info.value, ValueError)
    assert KEY not in str(info.value)


def test_agent_without_environment_names_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="MANTYX_API_KEY"):
        Agent(system_prompt="p")


BAD_OPTIONS: list[tuple[dict[str, Any], str]] = [
    ({"request_timeout": 0}, "read_timeout"),
    ({"request_timeout": -1.0}, "read_timeout"),
    ({"request_timeout": (0, 5)}, "connect_timeout"),
    ({"request_timeout": (5, 0)}, "read_timeout"),
    ({"max_retries": -1}, "max_retries"),
    ({"max_retries": 1.5}, "max_retries"),
    ({"max_retries": True}, "max_retries"),
    ({"stream_idle_timeout": 0}, "stream_idle_timeout"),
    ({"max_workers": 0}, "max_workers"),
    ({"max_workers": -2}, "max_workers"),
    ({"tool_timeout": 0}, "tool_timeout"),
    ({"tool_timeout": -5}, "tool_timeout"),
    ({"workspace": "acme/other"}, "workspace"),
    ({"base_url": "ftp://mantyx.test"}, "base_url"),
    ({"base_url": "mantyx.test"}, "base_url"),
]


@pytest.mark.parametrize(("options", "named"), BAD_OPTIONS)
def test_bad_options(options: dict[str, Any], named: str) -> None:
    kwargs: dict[str, Any] = {"workspace": "acme", "base_url": BASE, **options}
    with pytest.raises(ConfigurationError, match=named) as info:
        Client(KEY, **kwargs)
    assert KEY not in str(info.value)
    assert KEY not in repr(info.value)


def test_timeout_tuple_of_wrong_length() -> None:
    with pytest.raises(ConfigurationError, match="timeout"):
        Client(KEY, workspace="acme", base_url=BASE, request_timeout=(1.0, 2.0, 3.0))  # type: ignore[arg-type]


def test_good_options_are_kept() -> None:
    config = Client(
        KEY,
        workspace="acme",
        base_url=BASE,
        request_timeout=(2.0, 30.0),
        max_retries=0,
        stream_idle_timeout=15.0,
        max_workers=4,
        tool_timeout=9.0,
    ).config
    assert (config.connect_timeout, config.read_timeout) == (2.0, 30.0)
    assert (config.max_retries, config.stream_idle_timeout) == (0, 15.0)
    assert (config.max_workers, config.tool_timeout) == (4, 9.0)
    assert Client(KEY, workspace="acme", request_timeout=12).config.read_timeout == 12


def test_unknown_config_option_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="unknown client option"):
        ClientConfig.from_env(KEY, workspace="acme", colour="blue")


def test_config_is_frozen() -> None:
    config = Client(KEY, workspace="acme").config
    with pytest.raises(AttributeError):
        config.api_key = "other"  # type: ignore[misc]


@pytest.mark.parametrize("secret", [KEY, OAUTH_TOKEN])
def test_secret_never_in_repr_or_str(secret: str) -> None:
    client = Client(secret, workspace="acme", base_url=BASE)
    for text in (repr(client), str(client), repr(client.config), str(client.config)):
        assert secret not in text
        assert secret[8:] not in text
    assert "acme" in repr(client)
    assert "api_key=***" in repr(client)


def test_oauth_token_goes_in_the_same_header(mock: responses.RequestsMock) -> None:
    mock.get(f"{ROOT}/models", json={"models": []})
    mock.post(f"{ROOT}/agent-runs/r/cancel", status=204)
    client = Client(OAUTH_TOKEN, workspace="acme", base_url=BASE)
    client.models.list()
    client.runs.cancel("r")
    for call in mock.calls:
        assert call.request.headers["Authorization"] == f"Bearer {OAUTH_TOKEN}"


@pytest.mark.parametrize("secret", [KEY, OAUTH_TOKEN])
def test_secret_never_in_api_errors(mock: responses.RequestsMock, secret: str) -> None:
    mock.get(
        f"{ROOT}/models",
        status=401,
        json={
            "error": "unauthorized",
            "message": f"token {secret} is expired",
            "hint": "refresh it",
        },
    )
    client = Client(secret, workspace="acme", base_url=BASE, max_retries=0)
    with pytest.raises(AuthError) as info:
        client.models.list()
    for text in (str(info.value), repr(info.value), info.value.message):
        assert secret not in text
    assert "expired" in str(info.value)


LOG_SCRIPT = textwrap.dedent(
    """
    import logging, sys
    import mantyx_sync

    client = mantyx_sync.Client()
    catalog = client.models.list()
    try:
        client.runs.get("run_missing")
    except mantyx_sync.NotFoundError as exc:
        print("not found:", exc.status)
    # A careless library message that carries the key must still be masked.
    logging.getLogger("mantyx_sync.probe").debug("key is %s", client.config.api_key)
    print("models:", len(catalog))
    """
)


def _run_script(
    env_extra: dict[str, str], base_url: str, secret: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANTYX_")}
    env.update(
        {
            "MANTYX_API_KEY": secret,
            "MANTYX_WORKSPACE": "test-ws",
            "MANTYX_BASE_URL": base_url,
            "PYTHONPATH": str(REPO),
            **env_extra,
        }
    )
    return subprocess.run(
        [sys.executable, "-c", LOG_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("secret", ["mantyx_subprocess_key_789", OAUTH_TOKEN])
def test_mantyx_log_debug_logs_requests_with_secrets_redacted(secret: str) -> None:
    testing = pytest.importorskip("mantyx_sync.testing")
    oauth = {OAUTH_TOKEN: ["models:read", "runs:read"]}
    with testing.LocalMantyx(api_key="mantyx_subprocess_key_789", oauth_tokens=oauth) as server:
        done = _run_script({"MANTYX_LOG": "debug"}, server.base_url, secret)
    assert done.returncode == 0, done.stderr
    assert "not found: 404" in done.stdout
    assert "models:" in done.stdout
    log = done.stderr
    assert "GET /models -> 200" in log
    assert "GET /agent-runs/run_missing -> 404" in log
    assert "key is ***" in log
    assert secret not in log
    assert secret not in done.stdout
    assert json.dumps(secret)[1:-1] not in log


def test_without_mantyx_log_nothing_is_written() -> None:
    testing = pytest.importorskip("mantyx_sync.testing")
    with testing.LocalMantyx(api_key="mantyx_subprocess_key_789") as server:
        done = _run_script({}, server.base_url, "mantyx_subprocess_key_789")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_mantyx_log_keeps_logger_names() -> None:
    testing = pytest.importorskip("mantyx_sync.testing")
    with testing.LocalMantyx(api_key="mantyx_subprocess_key_789") as server:
        done = _run_script({"MANTYX_LOG": "debug"}, server.base_url, "mantyx_subprocess_key_789")
    assert done.returncode == 0, done.stderr
    assert "mantyx_sync._http.api: GET /models -> 200" in done.stderr


@pytest.mark.parametrize("url", ["http://[::1", "http://host:99999", "http://"])
def test_malformed_base_url_is_a_configuration_error(url: str) -> None:
    with pytest.raises(ConfigurationError, match="base_url"):
        Client("mantyx_key_123456", workspace="acme", base_url=url)


# Regression (issue #29 item 18): with HTTP_PROXY set, LocalMantyx().client()
# went through the proxy, and the error then blamed 127.0.0.1.
def test_a_server_on_this_machine_is_never_reached_through_a_proxy(
    mantyx_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    with mantyx_server.client() as client:
        assert client.models.list().default_model_id


# Issue #29 item 18: a plain http:// base URL to another machine is said once.
def test_plain_http_to_another_machine_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    remote = f"http://plain-{os.getpid()}-{id(caplog)}.example"
    with caplog.at_level("WARNING", logger="mantyx_sync.config"):
        for url in (remote, remote, "http://127.0.0.1:8080", "http://localhost", BASE):
            ClientConfig(api_key=KEY, workspace="acme", base_url=url)
    said = [r.getMessage() for r in caplog.records if r.name == "mantyx_sync.config"]
    assert len(said) == 1, said
    assert remote in said[0] and "unencrypted" in said[0] and KEY not in said[0]
