"""Cassettes are files a user may receive from someone else: what is read back is
checked first (stored strings, the file's shape), what is written holds no
secret, and replay touches no network, even with an OAuth token source."""

from __future__ import annotations

import inspect
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import mantyx_sync
from mantyx_sync import OAuth
from mantyx_sync.testing import Cassette, CassetteError, LocalMantyx, ToolCall, Turn, cassette

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
BIG = "Long answer. " * 400  # over 4096 characters: kept in <name>.files/ by hash


def _big_cassette(server: LocalMantyx, path: Path) -> str:
    """Record a run whose answer is kept by hash; its digest."""
    server.set_model([Turn(BIG)])
    with cassette(path, record_mode="all"):
        assert mantyx_sync.Agent(server.client(), system_prompt="s").run("hi").text == BIG
    (stored,) = path.with_name(path.stem + ".files").iterdir()
    return stored.name


REPLAY = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # /dev/zero must not eat the machine
import mantyx_sync
from mantyx_sync.testing import CassetteError, cassette
try:
    with cassette(sys.argv[1], record_mode="none"):
        client = mantyx_sync.Client("mantyx_ci_dummy", workspace="ci", base_url="http://127.0.0.1:9")
        text = mantyx_sync.Agent(client, system_prompt="s").run("hi").text
except CassetteError as exc:
    print("CassetteError:", exc)
else:
    print("replayed:", text[:200])
"""


def _replay_elsewhere(path: Path) -> str:
    """Replay ``path`` in a child process (a FIFO must not hang this one), what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", REPLAY, str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])},
    )
    return done.stdout + done.stderr


def _tamper(path: Path, digest: str, reference: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert f"sha256:{digest}" in text
    path.write_text(text.replace(f"sha256:{digest}", reference), encoding="utf-8")


def _padded(target: str) -> str:
    """A reference of a digest's length that names ``target`` as a path."""
    return "sha256:" + "/" * (64 - len(target)) + target


@pytest.mark.parametrize(
    "target", ["../secret.txt", "/proc/self/environ", "/dev/zero"], ids=["file", "environ", "zero"]
)
def test_a_reference_that_is_not_a_digest_is_refused_at_load(
    mantyx_server: LocalMantyx, tmp_path: Path, target: str
) -> None:
    path = tmp_path / "run.json"
    digest = _big_cassette(mantyx_server, path)
    (tmp_path / "secret.txt").write_text("THE-SECRET", encoding="utf-8")
    reference = _padded(target) if target.startswith("/") else "sha256:" + "./" * 26 + target
    _tamper(path, digest, reference.ljust(71, "/")[:71])
    out = _replay_elsewhere(path)
    assert "CassetteError:" in out and "64 lowercase hex digits" in out, out
    assert str(path) in out
    assert "THE-SECRET" not in out and "PATH=" not in out


@pytest.mark.parametrize("kind", ["fifo", "symlink", "device"])
def test_a_stored_string_that_is_not_a_regular_file_is_refused_unread(
    mantyx_server: LocalMantyx, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "run.json"
    digest = _big_cassette(mantyx_server, path)
    stored = tmp_path / "run.files" / digest
    stored.unlink()
    (tmp_path / "secret.txt").write_text("THE-SECRET", encoding="utf-8")
    if kind == "fifo":
        os.mkfifo(stored)
    else:
        stored.symlink_to(tmp_path / "secret.txt" if kind == "symlink" else "/dev/zero")
    out = _replay_elsewhere(path)  # a FIFO opened for reading would block here
    assert "CassetteError:" in out and "is not a regular file" in out, out
    assert "THE-SECRET" not in out


def test_a_stored_string_over_the_cap_or_not_matching_its_hash_is_refused(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    path = tmp_path / "run.json"
    digest = _big_cassette(mantyx_server, path)
    stored = tmp_path / "run.files" / digest
    stored.write_text(BIG.replace("Long", "Edited"), encoding="utf-8")
    with pytest.raises(CassetteError, match="does not hold the content its name is the hash of"):
        Cassette(path, record_mode="none")
    with stored.open("wb") as file:
        file.truncate(17 * 1024 * 1024)  # sparse: over the 16 MiB cap, nothing written
    with pytest.raises(CassetteError, match=r"not a regular file of at most 16777216 bytes"):
        Cassette(path, record_mode="none")


def test_a_missing_files_folder_is_a_cassette_error_not_the_hash_as_text(
    mantyx_server: LocalMantyx, tmp_path: Path
) -> None:
    path = tmp_path / "run.json"
    digest = _big_cassette(mantyx_server, path)
    (tmp_path / "run.files" / digest).unlink()
    (tmp_path / "run.files").rmdir()
    with pytest.raises(CassetteError) as raised:
        Cassette(path, record_mode="none")
    assert f"{tmp_path / 'run.files'}, which is missing" in str(raised.value)


def _write(path: Path, data: Any) -> None:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def _one(**response: Any) -> dict[str, Any]:
    request = {"method": "GET", "path": "/api/v1/workspaces/-/models", "body": None}
    return {"version": 1, "interactions": [{"request": request, "response": response}]}


MALFORMED = {
    "not-json": ("{oops", "cannot be read back"),
    "a-list": ([], "must be a JSON object with an 'interactions' list"),
    "no-interactions": ({"version": 1}, "must be a JSON object with an 'interactions' list"),
    "version": ({"version": 9, "interactions": []}, "'version' must be 1"),
    "no-request": (
        {"version": 1, "interactions": [{"response": {}}]},
        "interactions[0] must have a 'request' and a 'response' object",
    ),
    "status": (_one(status="200", content_type=""), "integer 'status'"),
    "end": (_one(status=200, content_type="", end="later"), "interactions[0].response.end"),
    "no-answer": (_one(end="eof"), "its 'end' must be broken or timeout"),
    "after": (
        _one(status=200, content_type="", events=[{"after": [5], "frame": {}}]),
        "interactions[0].response.events[0] must have 'after'",
    ),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_a_malformed_cassette_is_a_mantyx_error_naming_the_file_and_the_problem(
    tmp_path: Path, case: str
) -> None:
    data, problem = MALFORMED[case]
    path = tmp_path / "bad.json"
    _write(path, data)
    with pytest.raises(mantyx_sync.MantyxError) as raised:
        Cassette(path, record_mode="none")
    assert isinstance(raised.value, CassetteError)
    assert str(path) in str(raised.value) and problem in str(raised.value)


def test_cassette_error_is_a_mantyx_error_and_an_assertion_error() -> None:
    assert issubclass(CassetteError, mantyx_sync.MantyxError)
    assert issubclass(CassetteError, AssertionError)  # pytest reports a failed test
    assert mantyx_sync.errors.MantyxError is mantyx_sync.MantyxError
    assert repr(mantyx_sync.MantyxError("x")) == "MantyxError('x')"
    # Its source stays where it is defined, for inspect.getsource (Python 3.13
    # reads it from the module __module__ names).
    assert inspect.getsource(mantyx_sync.MantyxError).startswith("class MantyxError(")
    assert type(pickle.loads(pickle.dumps(mantyx_sync.MantyxError("x")))) is mantyx_sync.MantyxError


def test_replay_with_an_oauth_token_source_touches_no_network(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "oauth.json"
    oauth = OAuth("mantyx-test-client", base_url=mantyx_server.base_url)
    scopes = ["models:read", "runs:read", "runs:write", "mantyx.identity:read"]
    tokens = mantyx_server.oauth.issue_tokens(scopes)
    mantyx_server.set_model([Turn("hello")])
    with cassette(path, record_mode="all"):
        source = oauth.refresh_token_source(tokens["refresh_token"])  # refreshes at first use
        with mantyx_sync.Client(token_source=source) as client:
            assert mantyx_sync.Agent(client, system_prompt="s").run("hi").text == "hello"
    assert tokens["refresh_token"] not in path.read_text(encoding="utf-8")
    attempts = request.getfixturevalue("offline")
    source = oauth.refresh_token_source(tokens["refresh_token"])
    with cassette(path, record_mode="none"), mantyx_sync.Client(token_source=source) as client:
        assert mantyx_sync.Agent(client, system_prompt="s").run("hi").text == "hello"
    assert attempts == []  # neither the token endpoint nor userinfo was asked
    assert source.refresh_count == 0


def test_a_secret_split_across_deltas_or_short_or_in_headers_is_never_written(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def get_pin() -> str:
        """The pin."""
        return "k3y"

    path = tmp_path / "secrets.json"
    leaked = "the key is mantyx_test_key, ok"
    model = [ToolCall("get_pin", {}), Turn(leaked, chunks=["the key is mantyx_te", "st_key, ok"])]
    mcp = mantyx_sync.McpTool("gh", "https://mcp.example/v1", headers={"X-Key": "sk-live-abcdef"})
    with LocalMantyx(api_key="k3y", model=model) as server, cassette(path, record_mode="all"):
        client = server.client()  # the key "k3y", too short to mask inside text
        assert mantyx_sync.Agent(client, system_prompt="s", tools=[get_pin, mcp]).run("x").text
    text = path.read_text(encoding="utf-8")
    for secret in ("st_key", '"k3y"', "sk-live-abcdef"):
        assert secret not in text
    request.getfixturevalue("offline")
    deltas: list[str] = []
    with cassette(path, record_mode="none"):
        client = mantyx_sync.Client("k3y", workspace="ci", base_url="http://127.0.0.1:9")
        agent = mantyx_sync.Agent(client, system_prompt="s", tools=[get_pin, mcp])
        with agent.start("x") as run:
            deltas = [event.data["text"] for event in run if event.type == "assistant_delta"]
            assert run.result is not None
    assert "".join(deltas) == run.result.text == "the key is ***, ok"


def test_a_tool_named_like_a_key_is_not_masked_and_replays(
    mantyx_server: LocalMantyx, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    calls: list[str] = []

    def mantyx_docs(topic: str) -> str:
        """Look up the docs.

        :param topic: what to look up.
        """
        calls.append(topic)
        return f"docs on {topic}"

    path = tmp_path / "docs.json"
    mantyx_server.set_model([ToolCall("mantyx_docs", {"topic": "runs"}), Turn("read them")])
    with cassette(path, record_mode="all"):
        agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="s", tools=[mantyx_docs])
        assert agent.run("docs?").text == "read them"
    assert "mantyx_***" not in path.read_text(encoding="utf-8")
    request.getfixturevalue("offline")
    with cassette(path, record_mode="none"):
        client = mantyx_sync.Client(
            "mantyx_ci_dummy", workspace="ci", base_url="http://127.0.0.1:9"
        )
        agent = mantyx_sync.Agent(client, system_prompt="s", tools=[mantyx_docs])
        assert agent.run("docs?").text == "read them"
    assert calls == ["runs", "runs"]  # recorded, then replayed: the tool ran again


MARKED = """
import pytest

@pytest.mark.parametrize("where", ["../../escaped", "a/b"])
@pytest.mark.mantyx_cassette(record_mode="all")
def test_id(mantyx_cassette, where):
    mantyx_cassette.save()

@pytest.mark.mantyx_cassette("../outside", record_mode="all")
def test_named(mantyx_cassette):
    mantyx_cassette.save()
"""


def test_the_marker_never_puts_a_cassette_outside_cassettes(pytester: pytest.Pytester) -> None:
    tests = pytester.mkpydir("deep")
    (tests / "test_marked.py").write_text(textwrap.dedent(MARKED), encoding="utf-8")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "deep")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*CassetteError*'../outside' leads outside*cassettes*"])
    written = sorted(p.relative_to(pytester.path).as_posix() for p in pytester.path.rglob("*.json"))
    assert written == [
        "deep/cassettes/test_id[.._.._escaped].json",
        "deep/cassettes/test_id[a_b].json",
    ]
