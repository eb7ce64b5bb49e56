"""Every error the SDK raises is a ``MantyxError``; our own bugs surface as themselves
(issue 20, item 17)."""

from __future__ import annotations

from typing import Any

import pytest
import urllib3.response

import mantyx_sync
from mantyx_sync._models.wire import WireFormatError
from mantyx_sync.events import MalformedEvent, RunEvent
from mantyx_sync.testing import LocalMantyx, Turn


def test_a_malformed_server_body_is_a_mantyx_error(mantyx_server: LocalMantyx) -> None:
    mantyx_server.fail_next("GET", r"/models$", 200, json={"models": [{"label": "no id"}]})
    client = mantyx_server.client()
    with pytest.raises(mantyx_sync.MantyxError) as info:
        client.models.list()
    assert isinstance(info.value, WireFormatError)
    assert isinstance(info.value, ValueError)  # as it always was
    assert "models[0]" in str(info.value)  # names the field
    client.close()


def test_a_malformed_event_frame_is_a_mantyx_error() -> None:
    with pytest.raises(mantyx_sync.MantyxError, match="not JSON") as info:
        RunEvent.from_frame("{not json")
    assert isinstance(info.value, MalformedEvent)
    assert isinstance(info.value, ValueError)


def _stream_requests(server: LocalMantyx) -> int:
    return len([r for r in server.requests if r.path.endswith("/stream")])


def test_a_bug_under_the_stream_read_surfaces_as_itself(
    mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not a network failure: it must not pass for a dropped connection and be
    # "resumed" (which would hide the bug behind reconnects and a StreamError).
    def broken_read1(self: Any, amt: int | None = None) -> bytes:
        raise AttributeError("'NoneType' object has no attribute 'bug'")

    mantyx_server.set_model([Turn("hello")])
    client = mantyx_server.client(stream_reconnects=1)
    agent = mantyx_sync.Agent(client, system_prompt="s")
    monkeypatch.setattr(urllib3.response.HTTPResponse, "read1", broken_read1)
    with pytest.raises(AttributeError, match="no attribute 'bug'"):
        agent.run("x")
    monkeypatch.undo()
    assert _stream_requests(mantyx_server) == 1
    client.close()


def test_a_bug_in_a_parser_step_surfaces_as_itself(
    mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_from_frame(cls: Any, data_text: str, **_: Any) -> RunEvent:
        raise TypeError("bug in from_frame")

    mantyx_server.set_model([Turn("hello")])
    client = mantyx_server.client(stream_reconnects=1)
    agent = mantyx_sync.Agent(client, system_prompt="s")
    monkeypatch.setattr(RunEvent, "from_frame", classmethod(broken_from_frame))
    with pytest.raises(TypeError, match="bug in from_frame"):
        agent.run("x")
    monkeypatch.undo()
    assert _stream_requests(mantyx_server) == 1
    client.close()


def test_network_failures_while_reading_are_still_resumed(mantyx_server: LocalMantyx) -> None:
    from mantyx_sync.testing import Faults

    mantyx_server.set_model([Turn("a b c", chunks=["a", "b", "c"])])
    mantyx_server.inject(Faults(drop_after=2))
    client = mantyx_server.client()
    assert mantyx_sync.Agent(client, system_prompt="s").run("x").text == "a b c"
    assert _stream_requests(mantyx_server) == 2
    client.close()
