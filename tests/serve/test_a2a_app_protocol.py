"""a2a_app against the A2A specifications' requirements, as raw JSON-RPC over HTTP:
the envelope, the errors of both lines, request checks, ListTasks, history, the card.

The official clients (tests/serve/test_a2a_app_sdk*.py) drive the common path; these
are the cases a client library does not send.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format

import mantyx_sync
from mantyx_sync import serve
from mantyx_sync.testing import LocalMantyx

pytestmark = pytest.mark.timeout(60)

SEND = {"0.3": "message/send", "1.0": "SendMessage"}
GET = {"0.3": "tasks/get", "1.0": "GetTask"}
SUBSCRIBE = {"0.3": "tasks/resubscribe", "1.0": "SubscribeToTask"}


def _message(dialect: str, text: str = "hi", **fields: Any) -> dict[str, Any]:
    if dialect == "0.3":
        message = {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": text}]}
    else:
        message = {"role": "ROLE_USER", "parts": [{"text": text}]}
    return {"messageId": f"m-{text[:10]}", **message, **fields}


class Rpc:
    """JSON-RPC calls to one served app."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.url = f"{url}/"
        self.headers = headers or {}

    def raw(self, body: Any, **headers: str) -> dict[str, Any]:
        reply = httpx.post(self.url, json=body, headers={**self.headers, **headers}, timeout=30)
        assert reply.status_code == 200, reply.text
        if reply.headers["content-type"].startswith("text/event-stream"):
            frames = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ")]
            return dict(json.loads(frames[0]))
        return dict(reply.json())

    def call(self, method: str, params: Any = None, **headers: str) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params or {}}
        return self.raw(body, **headers)

    def error(self, method: str, params: Any = None, **headers: str) -> dict[str, Any]:
        reply = self.call(method, params, **headers)
        assert "error" in reply, reply
        assert reply["id"] == 7
        return dict(reply["error"])

    def task(self, dialect: str, text: str = "hi", **fields: Any) -> dict[str, Any]:
        result = self.call(SEND[dialect], {"message": _message(dialect, text, **fields)})["result"]
        return dict(result["task"] if dialect == "1.0" else result)


@pytest.fixture
def app(mantyx_server: LocalMantyx) -> serve.A2AApp:
    agent = mantyx_sync.Agent(mantyx_server.client(), name="echo_agent", system_prompt="Echo.")
    return serve.a2a_app(agent)


@pytest.fixture
def rpc(app: serve.A2AApp, serve_wsgi: Any) -> Rpc:
    return Rpc(serve_wsgi(app).url)


@pytest.mark.parametrize("dialect", ["0.3", "1.0"])
def test_a_message_naming_a_task(rpc: Rpc, dialect: str) -> None:
    unknown = rpc.error(SEND[dialect], {"message": _message(dialect, taskId="no-such-task")})
    assert unknown["code"] == -32001
    task = rpc.task(dialect, "first")
    again = _message(dialect, "again", taskId=task["id"])
    assert rpc.error(SEND[dialect], {"message": again})["code"] == -32004
    other = _message(dialect, "again", taskId=task["id"], contextId="another-context")
    contradicted = rpc.error(SEND[dialect], {"message": other})
    assert contradicted["code"] == -32602 and "contextId" in contradicted["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "1.0", "id": 3, "method": "SendMessage"},
        {"jsonrpc": "aaa", "id": 3, "method": "message/send"},
        {"id": 3, "method": "SendMessage"},
        {"jsonrpc": "2.0", "id": 3},
        {"jsonrpc": "2.0", "id": 3, "method": 12},
    ],
)
def test_an_invalid_envelope_is_refused_before_anything_runs(
    rpc: Rpc, mantyx_server: LocalMantyx, body: dict[str, Any]
) -> None:
    body["params"] = {"message": _message("1.0")}
    reply = rpc.raw(body)
    assert reply["error"]["code"] == -32600 and reply["id"] == 3
    assert mantyx_server.runs == {}


@pytest.mark.parametrize("bad_id", [{"a": 1}, [1], True])
def test_an_id_that_is_no_string_number_or_null_is_an_invalid_request(
    rpc: Rpc, mantyx_server: LocalMantyx, bad_id: Any
) -> None:
    body = {"jsonrpc": "2.0", "id": bad_id, "method": "SendMessage"}
    reply = rpc.raw({**body, "params": {"message": _message("1.0")}})
    assert reply["error"]["code"] == -32600 and reply["id"] is None
    assert mantyx_server.runs == {}


@pytest.mark.parametrize("dialect", ["0.3", "1.0"])
def test_subscribing_to_an_unknown_or_finished_task(rpc: Rpc, dialect: str) -> None:
    assert rpc.error(SUBSCRIBE[dialect], {"id": "nope"})["code"] == -32001
    task = rpc.task(dialect)
    finished = rpc.error(SUBSCRIBE[dialect], {"id": task["id"]})
    assert finished["code"] == -32004 and "completed" in finished["message"]


def test_list_tasks(rpc: Rpc) -> None:
    ids = [rpc.task("1.0", f"task {n}", contextId="ctx-a")["id"] for n in range(3)]
    other = rpc.task("1.0", "elsewhere", contextId="ctx-b")["id"]
    listed = rpc.call("ListTasks", {})["result"]
    assert [t["id"] for t in listed["tasks"]] == [other, *reversed(ids)]  # newest first
    assert listed["totalSize"] == 4 and listed["nextPageToken"] == ""
    assert listed["pageSize"] == 50
    assert all("artifacts" not in t for t in listed["tasks"])  # unless includeArtifacts

    page = rpc.call("ListTasks", {"contextId": "ctx-a", "pageSize": 2})["result"]
    assert [t["id"] for t in page["tasks"]] == [ids[2], ids[1]] and page["totalSize"] == 3
    rest = {"contextId": "ctx-a", "pageSize": 2, "pageToken": page["nextPageToken"]}
    last = rpc.call("ListTasks", rest)["result"]
    assert [t["id"] for t in last["tasks"]] == [ids[0]] and last["nextPageToken"] == ""

    full = {"status": "TASK_STATE_COMPLETED", "includeArtifacts": True, "historyLength": 1}
    done = rpc.call("ListTasks", full)["result"]
    assert done["totalSize"] == 4
    assert done["tasks"][0]["artifacts"][0]["parts"] == [{"text": "You said: elsewhere"}]
    assert [m["role"] for m in done["tasks"][0]["history"]] == ["ROLE_AGENT"]
    assert rpc.call("ListTasks", {"status": "TASK_STATE_WORKING"})["result"]["tasks"] == []
    assert rpc.call("ListTasks", {"status": "completed"})["result"]["totalSize"] == 4
    after = {"statusTimestampAfter": done["tasks"][0]["status"]["timestamp"]}
    assert rpc.call("ListTasks", after)["result"]["totalSize"] == 0


@pytest.mark.parametrize(
    "params",
    [
        {"pageSize": 0},
        {"pageSize": 101},
        {"pageSize": "ten"},
        {"status": "done"},
        {"pageToken": "not-a-token"},
        {"historyLength": -1},
        {"statusTimestampAfter": "yesterday"},
        {"includeArtifacts": "yes"},
    ],
)
def test_list_tasks_refuses_invalid_parameters(rpc: Rpc, params: dict[str, Any]) -> None:
    assert rpc.error("ListTasks", params)["code"] == -32602


def test_a_caller_lists_only_its_own_tasks(mantyx_server: LocalMantyx, serve_wsgi: Any) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.a2a_app(agent, authenticate=serve.bearer_token("one", "two"))).url
    first = Rpc(url, {"Authorization": "Bearer one"})
    second = Rpc(url, {"Authorization": "Bearer two"})
    mine = first.task("1.0")["id"]
    assert [t["id"] for t in first.call("ListTasks")["result"]["tasks"]] == [mine]
    assert second.call("ListTasks")["result"] == {
        "tasks": [],
        "nextPageToken": "",
        "pageSize": 50,
        "totalSize": 0,
    }


def test_the_a2a_version_header_selects_the_line(rpc: Rpc, mantyx_server: LocalMantyx) -> None:
    params = {"message": _message("1.0")}
    refused = rpc.error("SendMessage", params, **{"A2A-Version": "0.5"})
    assert refused["code"] == -32009
    info = refused["data"][0]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert (info["reason"], info["domain"]) == ("VERSION_NOT_SUPPORTED", "a2a-protocol.org")
    assert mantyx_server.runs == {}
    assert rpc.call("SendMessage", params, **{"A2A-Version": "1.0.2"})["result"]["task"]
    # A method of the other line is not one of the line the header asks for.
    assert rpc.error("message/send", params, **{"A2A-Version": "1.0"})["code"] == -32601


def test_1_0_errors_carry_error_info(rpc: Rpc) -> None:
    missing = rpc.error("GetTask", {"id": "nope"})
    assert missing["code"] == -32001
    assert missing["data"] == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": "nope"},
        }
    ]
    assert rpc.error("GetTask", {})["data"][0]["reason"] == "INVALID_PARAMS"


@pytest.mark.parametrize(
    "method",
    [
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    ],
)
def test_push_notification_methods_are_not_supported(rpc: Rpc, method: str) -> None:
    assert rpc.error(method, {"taskId": "t", "id": "t"})["code"] == -32003


def test_the_extended_card_is_not_configured(rpc: Rpc) -> None:
    assert rpc.error("GetExtendedAgentCard")["code"] == -32004
    assert rpc.error("agent/getAuthenticatedExtendedCard")["code"] == -32007


@pytest.mark.parametrize("dialect", ["0.3", "1.0"])
def test_a_part_of_a_media_type_the_agent_does_not_take(
    rpc: Rpc, mantyx_server: LocalMantyx, dialect: str
) -> None:
    png = base64.b64encode(b"\x89PNG....").decode()
    if dialect == "0.3":
        part = {"kind": "file", "file": {"name": "a.png", "mimeType": "image/png", "bytes": png}}
    else:
        part = {"raw": png, "filename": "a.png", "mediaType": "image/png"}
    message = _message(dialect)
    message["parts"].append(part)
    refused = rpc.error(SEND[dialect], {"message": message})
    assert refused["code"] == -32005 and "image/png" in refused["message"]
    assert mantyx_server.runs == {}


@pytest.mark.parametrize(
    ("dialect", "change"),
    [
        ("0.3", {"messageId": None}),
        ("1.0", {"messageId": None}),
        ("0.3", {"role": None}),
        ("1.0", {"role": None}),
        ("1.0", {"role": "ROLE_SOMEONE"}),
        ("0.3", {"parts": [{"text": "a part without kind"}]}),
        ("0.3", {"messageId": "m" * 300}),
        ("1.0", {"contextId": "c" * 300}),
    ],
)
def test_a_message_the_specification_refuses(
    rpc: Rpc, mantyx_server: LocalMantyx, dialect: str, change: dict[str, Any]
) -> None:
    message = {k: v for k, v in {**_message(dialect), **change}.items() if v is not None}
    assert rpc.error(SEND[dialect], {"message": message})["code"] == -32602
    assert mantyx_server.runs == {}


@pytest.mark.parametrize("dialect", ["0.3", "1.0"])
def test_a_negative_history_length_is_refused(rpc: Rpc, dialect: str) -> None:
    task = rpc.task(dialect)
    assert rpc.error(GET[dialect], {"id": task["id"], "historyLength": -1})["code"] == -32602
    configuration = {"configuration": {"historyLength": -2}, "message": _message(dialect)}
    assert rpc.error(SEND[dialect], configuration)["code"] == -32602


@pytest.mark.parametrize("dialect", ["0.3", "1.0"])
def test_history_holds_the_reply_and_only_specified_fields(rpc: Rpc, dialect: str) -> None:
    sent = _message(dialect, "remember me", smuggled={"x": "y" * 1000})
    sent["parts"][0]["extra"] = "not a part field"
    result = rpc.call(SEND[dialect], {"message": sent})["result"]
    task = result["task"] if dialect == "1.0" else result
    got = rpc.call(GET[dialect], {"id": task["id"]})["result"]
    user, agent = got["history"]
    assert "smuggled" not in json.dumps(got) and "extra" not in json.dumps(got)
    assert (user["role"], agent["role"]) == (
        ("user", "agent") if dialect == "0.3" else ("ROLE_USER", "ROLE_AGENT")
    )
    assert user["parts"][0]["text"] == "remember me" and user["taskId"] == task["id"]
    assert agent["parts"][0]["text"] == "You said: remember me"
    latest = rpc.call(GET[dialect], {"id": task["id"], "historyLength": 1})["result"]
    assert latest["history"] == [agent]
    assert "history" not in rpc.call(GET[dialect], {"id": task["id"], "historyLength": 0})["result"]


def test_1_0_parameters_are_read_in_snake_case_too(rpc: Rpc) -> None:
    message = {
        "message_id": "m-1",
        "context_id": "snake-ctx",
        "role": "ROLE_USER",
        "parts": [{"text": "hi", "metadata": {"keep_me": 1}}],
    }
    task = rpc.call("SendMessage", {"message": message})["result"]["task"]
    assert task["contextId"] == "snake-ctx"
    got = rpc.call("GetTask", {"id": task["id"], "history_length": 0})["result"]
    assert "history" not in got
    listed = rpc.call("ListTasks", {"context_id": "snake-ctx", "page_size": 1})["result"]
    assert listed["tasks"][0]["id"] == task["id"] and listed["pageSize"] == 1
    both = {"message": {**message, "messageId": "m-2"}}
    assert rpc.error("SendMessage", both)["code"] == -32602


def test_the_card_is_cacheable(rpc: Rpc) -> None:
    card_url = rpc.url + ".well-known/agent-card.json"
    first = httpx.get(card_url)
    assert first.headers["Cache-Control"].startswith("max-age=")
    etag = first.headers["ETag"]
    again = httpx.get(card_url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["ETag"] == etag
    assert httpx.get(card_url, headers={"If-None-Match": '"other"'}).status_code == 200


def test_a_1_0_client_gets_a_card_in_the_1_0_schema(rpc: Rpc) -> None:
    card_url = rpc.url + ".well-known/agent-card.json"
    card = httpx.get(card_url, headers={"A2A-Version": "1.0"}).json()
    parsed = json_format.ParseDict(card, pb.AgentCard())  # refuses any field 1.0 does not define
    assert {i.protocol_version for i in parsed.supported_interfaces} == {"1.0", "0.3"}
    legacy = httpx.get(card_url).json()  # 0.3 clients keep the fields they read
    assert legacy["url"] == rpc.url and legacy["protocolVersion"] == "0.3.0"


def test_with_a_token_the_card_stays_readable_and_declares_the_scheme(
    mantyx_server: LocalMantyx, serve_wsgi: Any
) -> None:
    agent = mantyx_sync.Agent(mantyx_server.client(), system_prompt="Echo.")
    url = serve_wsgi(serve.a2a_app(agent, authenticate=serve.bearer_token("tok"))).url
    card = httpx.get(f"{url}/.well-known/agent-card.json")
    assert card.status_code == 200
    assert card.json()["securitySchemes"] == {"bearer": {"type": "http", "scheme": "bearer"}}
    assert card.json()["security"] == [{"bearer": []}]
    modern = httpx.get(f"{url}/.well-known/agent-card.json", headers={"A2A-Version": "1.0"})
    parsed = json_format.ParseDict(modern.json(), pb.AgentCard())
    assert parsed.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    assert list(parsed.security_requirements[0].schemes) == ["bearer"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    assert httpx.post(f"{url}/", json=body).status_code == 401


def test_finished_tasks_are_bounded_in_bytes_per_caller(
    app: serve.A2AApp, serve_wsgi: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mantyx_sync.serve import _a2a_tasks

    monkeypatch.setattr(_a2a_tasks, "MAX_FINISHED_BYTES", 500_000)
    rpc = Rpc(serve_wsgi(serve.a2a_app(app.agent)).url)
    # Each task keeps about 200 kB: the message's 100 kB and the echoed answer.
    ids = [rpc.task("1.0", f"{n} " + "x" * 100_000)["id"] for n in range(5)]
    assert rpc.call("ListTasks")["result"]["totalSize"] == 2
    assert rpc.error("GetTask", {"id": ids[0]})["code"] == -32001
    assert rpc.call("GetTask", {"id": ids[-1]})["result"]["status"]["state"].endswith("COMPLETED")


def test_a_task_keeps_no_file_bytes(rpc: Rpc, app: serve.A2AApp) -> None:
    notes = base64.b64encode(b"n" * 300_000).decode()
    message = _message("1.0", "read the notes")
    message["parts"].append({"raw": notes, "filename": "notes.txt", "mediaType": "text/plain"})
    task = rpc.call("SendMessage", {"message": message})["result"]["task"]
    got = rpc.call("GetTask", {"id": task["id"]})["result"]
    assert got["history"][0]["parts"] == [{"text": "read the notes"}, {"text": "[file: notes.txt]"}]
    kept = app.tasks.get(task["id"], "")
    assert kept is not None and kept.size < 2_000
