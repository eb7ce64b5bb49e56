"""How runs display in a notebook: ``_repr_html_``/``_repr_markdown_`` and ``show``."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import pytest

import mantyx_sync
from mantyx_sync.notebook import show
from mantyx_sync.testing import Fail, LocalMantyx, ModelContext, ToolCall, Turn


@mantyx_sync.local_tool(read_only=True)
def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: What to look up.
    """
    return f"<i>{query}</i> & more"


HOSTILE = "<script>alert('x')</script> **bold** `a<b`"


@pytest.fixture
def agent(emulator: LocalMantyx) -> Iterator[mantyx_sync.Agent]:
    with emulator.client(in_memory=True) as client:
        yield mantyx_sync.Agent(client, system_prompt="s", tools=[lookup])


def test_a_result_renders_text_tools_and_footer_escaped(
    emulator: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    emulator.set_model(
        [Turn("Looking.", tool_calls=[ToolCall("lookup", {"query": "<b>x</b>"})]), Turn(HOSTILE)]
    )
    result = agent.run("q")
    page = result._repr_html_()
    assert "<script>" not in page and "<b>x</b>" not in page and "<i>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    # The tool call is collapsible, its arguments and result inside, escaped.
    assert page.count("<details>") == 1
    assert "<summary><code>✓ lookup({&quot;query&quot;: &quot;&lt;b&gt;x&lt;/b&gt;&quot;})" in page
    assert "&lt;i&gt;&lt;b&gt;x&lt;/b&gt;&lt;/i&gt; &amp; more" in page
    assert result.tokens is not None and result.model is not None
    footer = f"{result.tokens.total_tokens} tokens ({result.tokens.input_tokens} in"
    assert footer in page
    assert f"2 turns · model {result.model.id} · run {result.run_id}" in page
    assert "running" not in page

    md = result._repr_markdown_()
    assert "<script>" not in md
    assert "&lt;script&gt;alert('x')&lt;/script&gt; **bold** `a<b`" in md  # code spans verbatim
    assert md.count("<details>") == 1


def test_a_failed_run_shows_why(emulator: LocalMantyx, agent: mantyx_sync.Agent) -> None:
    emulator.set_model([Fail("the <model> fell over", partial_text="half an answ")])
    with pytest.raises(mantyx_sync.RunError) as caught:
        agent.run("q")
    page = caught.value.result._repr_html_()
    assert "failed" in page
    assert "the &lt;model&gt; fell over" in page


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def test_a_live_run_shows_its_progress(
    emulator: LocalMantyx, agent: mantyx_sync.Agent, release: threading.Event
) -> None:
    def model(ctx: ModelContext) -> Turn:
        if ctx.turn == 1:
            release.wait(20)
            return Turn("Done.")
        return Turn("Looking it up.", tool_calls=[ToolCall("lookup", {"query": "q"})])

    emulator.set_model(model)
    with agent.start("q") as run:
        for event in run:
            if event.type == "local_tool_result_in":
                break
        page = run._repr_html_()
        assert "running" in page
        assert "Looking it up." in page
        assert "✓ lookup(" in page
        release.set()
        for _ in run:
            pass
    page = run._repr_html_()
    assert "running" not in page and "Done." in page


def test_show_without_ipython_streams_plain_text(
    emulator: LocalMantyx, agent: mantyx_sync.Agent
) -> None:
    out = io.StringIO()
    result = show(agent.start("hello"), out=out)
    assert result.text.startswith("You said: hello")
    text = out.getvalue()
    # The run's text as it grows, as the command line and run.text_stream() show it.
    assert text.startswith('Calling lookup.\n  → lookup({"query": "example"})\n  ✓ lookup → ')
    assert "You said: hello\nlookup → <i>example</i> & more\n" in text
    assert f"run {result.run_id}" in text
    assert "\x1b[" not in text


def test_show_of_a_result_just_displays_it(emulator: LocalMantyx, agent: mantyx_sync.Agent) -> None:
    result = agent.run("hi")
    out = io.StringIO()
    assert show(result, out=out) is result
    assert out.getvalue() == result.text + "\n"
