"""web_stream, the run -> SSE generator the web recipes share, without a browser."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import web_stream
from recipe_support import GatedModel, cancel_requests

from mantyx_sync.testing import LocalMantyx


def _parse(frame: bytes) -> tuple[str, dict[str, object]]:
    event, data = frame.decode().rstrip("\n").split("\n")
    assert event.startswith("event: ") and data.startswith("data: ")
    return event[len("event: ") :], json.loads(data[len("data: ") :])


@pytest.fixture
def gated(mantyx_server: LocalMantyx) -> Iterator[GatedModel]:
    model = GatedModel({"story": ["Once", " upon", " a time."]}, {"break": "no luck"})
    mantyx_server.set_model(model)
    yield model
    model.close()


def test_frames_of_a_successful_run(mantyx_server: LocalMantyx, gated: GatedModel) -> None:
    agent = web_stream.make_agent(mantyx_server.client())
    gated.release("story", 3)
    frames = [_parse(f) for f in web_stream.sse_run(agent, "story")]
    run_id = mantyx_server.wait_for_run(status="succeeded").id
    assert frames == [
        ("run", {"run_id": run_id}),
        ("delta", {"text": "Once"}),
        ("delta", {"text": " upon"}),
        ("delta", {"text": " a time."}),
        ("end", {"status": "done"}),
    ]


def test_a_failed_run_ends_with_failed(mantyx_server: LocalMantyx, gated: GatedModel) -> None:
    agent = web_stream.make_agent(mantyx_server.client())
    frames = [_parse(f) for f in web_stream.sse_run(agent, "break")]
    assert frames[0][0] == "run"
    kind, data = frames[-1]
    assert kind == "end" and data["status"] == "failed" and "no luck" in str(data["error"])


def test_closing_the_stream_cancels_the_run(mantyx_server: LocalMantyx, gated: GatedModel) -> None:
    agent = web_stream.make_agent(mantyx_server.client())
    frames = web_stream.sse_run(agent, "story")
    kind, data = _parse(next(frames))
    assert kind == "run"
    gated.release("story")
    assert _parse(next(frames)) == ("delta", {"text": "Once"})
    frames.close()  # what a WSGI server does when the browser goes away
    run = mantyx_server.wait_for_run(str(data["run_id"]), status="cancelled")
    assert len(cancel_requests(mantyx_server, run.id)) == 1


def test_a_run_that_cannot_start_is_one_failed_frame(mantyx_server: LocalMantyx) -> None:
    agent = web_stream.make_agent(mantyx_server.client(api_key="mantyx_wrong_key_123"))
    frames = [_parse(f) for f in web_stream.sse_run(agent, "story")]
    assert len(frames) == 1
    kind, data = frames[0]
    assert kind == "end" and data["status"] == "failed"
    assert "mantyx_wrong_key_123" not in str(data["error"])
    assert mantyx_server.runs == {}


@pytest.mark.parametrize(
    ("body", "prompt"),
    [
        (b'{"prompt": "hello"}', "hello"),
        (b'{"prompt": "   "}', None),
        (b'{"prompt": 3}', None),
        (b"[1, 2]", None),
        (b"not json", None),
        (b"", None),
        (json.dumps({"prompt": "x" * 20_001}).encode(), None),
    ],
)
def test_read_prompt(body: bytes, prompt: str | None) -> None:
    assert web_stream.read_prompt(body) == prompt


def test_page_escapes_the_csrf_token() -> None:
    assert 'content="a&quot;b"' in web_stream.page('a"b')
    assert "csrf-token" not in web_stream.page().split("<script>")[0]
