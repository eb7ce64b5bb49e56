"""``Client.close()`` closes every connection the client opened, from every thread
(issue 15, fix 6), counted as the process's open sockets.

The emulator's werkzeug server closes each connection after one answer, so it
runs behind :class:`KeepAliveProxy` here: like a real server, the proxy keeps
connections open for reuse, and a socket the client forgets stays open.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from keepalive_proxy import KeepAliveProxy
from sockets_support import HAVE_PROC, client_sockets, open_sockets, settle

import mantyx_sync
from mantyx_sync import ToolActivity
from mantyx_sync.testing import LocalMantyx, ToolCall, Turn


@pytest.fixture
def served() -> Iterator[tuple[LocalMantyx, KeepAliveProxy]]:
    if not HAVE_PROC:
        pytest.skip("needs /proc/self/fd and /proc/self/net/tcp to count open sockets")
    with LocalMantyx() as server, KeepAliveProxy(server.port) as proxy:
        yield server, proxy


def test_close_after_one_run_with_one_tool_call_leaves_no_socket(
    served: tuple[LocalMantyx, KeepAliveProxy],
) -> None:
    server, proxy = served
    server.set_model([Turn(tool_calls=[ToolCall("ping", {})]), Turn("done")])

    @mantyx_sync.local_tool
    def ping() -> str:
        """Answer."""
        return "pong"

    delivered = threading.Event()

    def on_tool(activity: ToolActivity) -> None:
        if activity.phase == "end":
            delivered.set()

    port = int(proxy.base_url.rsplit(":", 1)[1])
    before = open_sockets()
    threads_before = set(threading.enumerate())
    client = server.client(base_url=proxy.base_url)
    agent = mantyx_sync.Agent(client, system_prompt="s", tools=[ping])
    with client.runs.start(agent.spec, "x", on_tool=on_tool) as run:
        assert run.wait().text == "done"
    client.close()
    # The poster's thread may still be reading its answer when the run ends.
    assert delivered.wait(10)
    assert settle(lambda: client_sockets(port), set()) == set()  # none left to the server
    # Nor anywhere else: every socket opened since (the proxy's and server's
    # ends of the client's connections too) is closed. Sockets an earlier test
    # left behind may close meanwhile (garbage collection): they do not count.
    assert settle(lambda: open_sockets() - before, set()) == set()
    assert settle(lambda: set(threading.enumerate()) - threads_before, set()) == set()


def test_close_from_another_thread_ends_a_live_stream(
    served: tuple[LocalMantyx, KeepAliveProxy],
) -> None:
    server, proxy = served
    server.set_model([Turn(tool_calls=[ToolCall("hold", {})]), Turn("done")])
    started = threading.Event()
    release = threading.Event()

    @mantyx_sync.local_tool
    def hold() -> str:
        """Hold the run open until released."""
        started.set()
        # Longer than the reader is given below: only close() may end its read.
        release.wait(30)
        return "released"

    port = int(proxy.base_url.rsplit(":", 1)[1])
    client = server.client(base_url=proxy.base_url)
    agent = mantyx_sync.Agent(client, system_prompt="s", tools=[hold])
    outcome: list[BaseException | str] = []

    def follow() -> None:
        try:
            outcome.append(agent.run("x").text)
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=follow)
    reader.start()
    assert started.wait(10)
    # Neither close() nor the reader may wait for the quiet stream's next byte.
    closer = threading.Thread(target=client.close)
    closer.start()
    closer.join(10)
    reader.join(10)
    release.set()
    assert not closer.is_alive()
    assert not reader.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], mantyx_sync.MantyxError)
    assert "closed" in str(outcome[0])
    # The run could not be cancelled (the client is closed), so the server side
    # of its stream lives on; the client's own end is gone.
    assert settle(lambda: client_sockets(port), set()) == set()
