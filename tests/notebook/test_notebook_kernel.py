"""The notebook recipe and ``show`` in a real Jupyter kernel, executed headless."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from queue import Empty
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient

from mantyx_sync.testing import Emit, Fail, LocalMantyx, ModelContext, Step, Turn

NOTEBOOK = Path(__file__).parents[2] / "examples" / "recipes" / "notebook.ipynb"


def _execute(path: Path) -> Any:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    return notebook


def _cell(notebook: Any, marker: str) -> Any:
    return next(cell for cell in notebook.cells if marker in cell.source)


def test_the_notebook_recipe_runs_on_its_own_emulator() -> None:
    notebook = _execute(NOTEBOOK)
    setup = _cell(notebook, "MANTYX at")
    assert setup.outputs[0]["text"].startswith("MANTYX at http://127.0.0.1:")

    # `result` at the end of a cell: the RunResult displays itself.
    (shown,) = _cell(notebook, "result = agent.run").outputs
    assert shown["output_type"] == "execute_result"
    page = shown["data"]["text/html"]
    assert "You said: How many words are in &#x27;the quick brown fox&#x27;?" in page
    assert (
        "<details><summary><code>✓ word_count({&quot;text&quot;: &quot;example&quot;}) → 1" in page
    )
    assert "2 turns · model platform:cm6abc123" in page
    assert "text/markdown" in shown["data"]

    # show(): one output area, updated in place to the run's final state.
    (live,) = _cell(notebook, "streamed = show(").outputs
    assert live["output_type"] == "display_data"
    page = live["data"]["text/html"]
    assert "You said: Write one line about &lt;b&gt;tags&lt;/b&gt; &amp; entities." in page
    assert "<b>tags</b>" not in page
    assert "running" not in page and " tokens (" in page

    printed = _cell(notebook, "print(streamed.text)").outputs[0]["text"]
    assert printed.startswith("You said: Write one line about <b>tags</b> & entities.")


def test_the_notebook_recipe_uses_mantyx_when_configured(
    mantyx_server: LocalMantyx, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MANTYX_API_KEY", mantyx_server.api_key)
    monkeypatch.setenv("MANTYX_WORKSPACE", mantyx_server.workspace)
    monkeypatch.setenv("MANTYX_BASE_URL", mantyx_server.base_url)
    notebook = _execute(NOTEBOOK)
    assert (
        _cell(notebook, "MANTYX at").outputs[0]["text"] == f"MANTYX at {mantyx_server.base_url}\n"
    )
    answers = sorted((run.final_text or "").splitlines()[0] for run in mantyx_server.runs.values())
    assert answers == [
        "You said: How many words are in 'the quick brown fox'?",
        "You said: Write one line about <b>tags</b> & entities.",
    ]


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def _reply(client: Any, msg_id: str, timeout: float) -> dict[str, Any]:
    while True:
        msg = client.get_shell_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") == msg_id:
            return dict(msg["content"])


def _show_code(server: LocalMantyx, prompt: str) -> str:
    """A cell that shows a run of ``prompt`` on ``server`` with ``show``."""
    return (
        "import mantyx_sync\n"
        "from mantyx_sync.notebook import show\n"
        f"client = mantyx_sync.Client({server.api_key!r}, "
        f"workspace={server.workspace!r}, base_url={server.base_url!r})\n"
        "agent = mantyx_sync.Agent(client, system_prompt='s')\n"
        f"show(agent.start({prompt!r}))\n"
    )


def test_interrupting_the_cell_cancels_the_run(
    mantyx_server: LocalMantyx, release: threading.Event
) -> None:
    def model(ctx: ModelContext) -> Turn:
        release.wait(30)
        return Turn("too late")

    mantyx_server.set_model(model)
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        msg_id = client.execute(_show_code(mantyx_server, "wait for me"))
        run = mantyx_server.wait_for_run(status="running", timeout=30)
        # show() is now streaming the run in the kernel's main thread.
        seen: list[str] = []
        while not any("running" in text for text in seen):
            try:
                msg = client.get_iopub_msg(timeout=30)
            except Empty:  # pragma: no cover - only on a hang
                pytest.fail(f"no live display arrived; saw {seen}")
            if msg["msg_type"] in ("display_data", "update_display_data"):
                seen.append(msg["content"]["data"].get("text/html", ""))
        manager.interrupt_kernel()
        reply = _reply(client, msg_id, timeout=30)
        assert reply["status"] == "error"
        assert reply["ename"] == "KeyboardInterrupt"
        assert mantyx_server.wait_for_run(run.id, timeout=10).status == "cancelled"
        # The same output area now says how the run ended.
        while True:
            msg = client.get_iopub_msg(timeout=30)
            if msg["msg_type"] == "update_display_data":
                page = msg["content"]["data"]["text/html"]
                if "interrupted" in page:
                    break
        assert f"interrupted, cancelled · run {run.id}" in page
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


class _Outputs:
    """The display messages one cell sends, read from the kernel as they come."""

    def __init__(self, client: Any, msg_id: str) -> None:
        self._client = client
        self._msg_id = msg_id
        self.new_areas = 0

    def _next(self) -> tuple[str, str, str]:
        while True:
            try:
                msg = self._client.get_iopub_msg(timeout=30)
            except Empty:  # pragma: no cover - only on a hang
                pytest.fail("the cell sent no display in 30 s")
            kind = msg["msg_type"]
            if msg["parent_header"].get("msg_id") != self._msg_id:
                continue
            if kind in ("display_data", "update_display_data"):
                content = msg["content"]
                if kind == "display_data":
                    self.new_areas += 1
                return kind, content["transient"]["display_id"], content["data"]["text/html"]

    def next_display(self) -> tuple[str, str]:
        """The first output area the cell creates: its display id and HTML."""
        kind, display_id, page = self._next()
        assert kind == "display_data"
        return display_id, page

    def until(self, display_id: str, needle: str) -> str:
        """Read updates of ``display_id`` until one contains ``needle``; that HTML."""
        while True:
            kind, shown_id, page = self._next()
            assert (kind, shown_id) == ("update_display_data", display_id)
            if needle in page:
                return page


def test_show_updates_one_output_area_as_the_answer_streams(mantyx_server: LocalMantyx) -> None:
    chunks = ["Once", " upon", " a time."]
    gates = threading.Semaphore(0)
    sent: list[str] = []

    def model(ctx: ModelContext) -> Step:
        # One delta each time the test releases one, then the whole answer.
        if len(sent) < len(chunks):
            if not gates.acquire(timeout=30):
                return Fail("the test never released this delta")
            sent.append(chunks[len(sent)])
            return Emit("assistant_delta", {"text": sent[-1]})
        return Turn("".join(chunks), chunks=())

    mantyx_server.set_model(model)
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        msg_id = client.execute(_show_code(mantyx_server, "tell me a story"))
        shown = _Outputs(client, msg_id)
        display_id, page = shown.next_display()
        assert "running" in page
        expected = ""
        for chunk in chunks:
            gates.release()
            expected += chunk
            # Each delta reaches the same output area while the run still goes,
            # however soon after the previous update it arrives.
            page = shown.until(display_id, f">{expected}</div>")
            if chunk != chunks[-1]:  # the last one is followed by the answer at once
                assert "running" in page
        page = shown.until(display_id, " tokens (")
        assert "running" not in page and f">{expected}</div>" in page
        assert _reply(client, msg_id, timeout=30)["status"] == "ok"
        assert shown.new_areas == 1
    finally:
        gates.release(100)
        client.stop_channels()
        manager.shutdown_kernel(now=True)
