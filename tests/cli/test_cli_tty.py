"""What a person at a terminal sees: the console script on a pseudo-terminal."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator

import pytest
from cli_support import PtyProcess, cli_env

from mantyx_sync import RunCancelledError
from mantyx_sync.testing import Faults, LocalMantyx, ModelContext, Turn

DIM = "\x1b[2m"
RED = "\x1b[31m"
CLEAR_LINE = "\r\x1b[2K"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SPINNER = re.compile(r"\r\x1b\[2K(?:\x1b\[2m)?[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] (thinking|running [a-z_, ]+)…")


def _run_on_tty(*args: str, **env: str) -> tuple[int, str]:
    term = PtyProcess(*args, env=cli_env(**env))
    try:
        return term.wait(), term.text
    finally:
        term.close()


def _server_env(server: LocalMantyx) -> dict[str, str]:
    return {
        "MANTYX_BASE_URL": server.base_url,
        "MANTYX_WORKSPACE": server.workspace,
        "MANTYX_API_KEY": server.api_key,
    }


def test_on_a_terminal_tool_lines_are_dim_and_a_spinner_runs(mantyx_server: LocalMantyx) -> None:
    status, text = _run_on_tty(
        "run", "hello", "--tool", "cli_tools:add", **_server_env(mantyx_server)
    )
    assert status == 0, text
    spinners = SPINNER.findall(text)
    assert "thinking" in spinners
    assert f"{DIM}  → add(" in text and f"{DIM}  ✓ add → 2" in text
    assert re.search(re.escape(DIM) + r"\d+ tokens \(\d+ in, \d+ out\) · 2 turns", text)
    # The spinner is wiped before anything else is written: the screen ends clean.
    plain = ANSI.sub("", text.replace(CLEAR_LINE, "\n")).replace("\r", "")
    lines = [line for line in plain.split("\n") if line and not SPINNER_TEXT.match(line)]
    # In the order it happened: the turn, its tool call and answer, the reply, the footer.
    assert lines[0] == "Calling add."
    assert lines[1] == '  → add({"a": 1, "b": 1})'
    assert lines[2].startswith("  ✓ add → 2  ")
    assert lines[3:5] == ["You said: hello", "add → 2"]
    assert re.match(r"\d+ tokens", lines[5])
    assert len(lines) == 6


SPINNER_TEXT = re.compile(r"^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] ")


def test_no_color_removes_colour_but_keeps_the_spinner(mantyx_server: LocalMantyx) -> None:
    status, text = _run_on_tty(
        "run", "hello", "--tool", "cli_tools:add", NO_COLOR="1", **_server_env(mantyx_server)
    )
    assert status == 0, text
    assert DIM not in text and RED not in text and "\x1b[0m" not in text
    assert "  ✓ add → 2" in text
    assert SPINNER.search(text)


def test_errors_are_red_on_a_terminal_and_plain_with_no_color(mantyx_server: LocalMantyx) -> None:
    env = _server_env(mantyx_server)
    env["MANTYX_API_KEY"] = "mantyx_bad"
    status, text = _run_on_tty("models", **env)
    assert status == 3
    assert f"{RED}\x1b[1mmantyx-sync: error: \x1b[0mHTTP 401" in text
    status, text = _run_on_tty("models", NO_COLOR="1", **env)
    assert status == 3
    assert "mantyx-sync: error: HTTP 401" in text
    # No colour; the spinner (cleared before the error) is all the escapes there are.
    assert DIM not in text and RED not in text and "\x1b[0m" not in text
    assert ANSI.sub("", text.replace(CLEAR_LINE, "")).endswith(
        "HTTP 401 unauthorized: invalid API key\r\n"
    )


def test_quiet_on_a_terminal_shows_no_spinner(mantyx_server: LocalMantyx) -> None:
    status, text = _run_on_tty("run", "hello", "-q", **_server_env(mantyx_server))
    assert status == 0
    assert text.replace("\r\n", "\n") == "You said: hello\n"


def test_chat_on_a_terminal(mantyx_server: LocalMantyx) -> None:
    term = PtyProcess(
        "chat", "--system-prompt", "Be brief.", env=cli_env(**_server_env(mantyx_server))
    )
    try:
        term.expect("you> ")
        (session_id,) = mantyx_server.sessions
        assert f"session {session_id}" in term.text
        term.send("My name is Ada")
        term.expect("You said: My name is Ada")
        term.expect("you> ")
        term.send("/history")
        term.expect("assistant: You said: My name is Ada")
        term.expect("you> ")
        term.send("/bogus")
        term.expect("unknown command /bogus")
        term.expect("you> ")
        term.send("/end")
        assert term.wait() == 0
    finally:
        term.close()
    assert f"session {session_id} ended" in term.text
    session = mantyx_server.sessions[session_id]
    assert session.status == "ended"
    assert [m["content"] for m in session.messages][:1] == ["My name is Ada"]
    # Each reply carried its footer, and the spinner ran while the model worked.
    assert "1 turn · model platform:cm6abc123" in term.text
    assert SPINNER.search(term.text)


def test_chat_line_editing_and_end_of_input(mantyx_server: LocalMantyx) -> None:
    term = PtyProcess("chat", env=cli_env(**_server_env(mantyx_server)))
    try:
        term.expect("you> ")
        # readline: Ctrl-A jumps to the start of the line, so "llo" + ^A + "he" is "hello".
        term.send("llo\x01he")
        term.expect("You said: hello")
        term.expect("you> ")
        term.write("\x04")  # Ctrl-D: leave, keeping the session for --session
        assert term.wait() == 0
    finally:
        term.close()
    (session_id,) = mantyx_server.sessions
    assert f"continue it with --session {session_id}" in term.text
    assert mantyx_server.sessions[session_id].status == "active"


@pytest.fixture
def slow_replies(mantyx_server: LocalMantyx) -> Iterator[None]:
    """The model echoes each prompt; the prompt ``slow`` is answered only once the test ends."""
    release = threading.Event()

    def model(ctx: ModelContext) -> Turn:
        if ctx.prompt == "slow":
            release.wait(20)
        return Turn(f"You said: {ctx.prompt}")

    mantyx_server.set_model(model)
    yield
    release.set()


@pytest.mark.usefixtures("slow_replies")
def test_ctrl_c_in_chat_cancels_the_reply_and_keeps_the_session(
    mantyx_server: LocalMantyx,
) -> None:
    # MANTYX_LOG=info: should this fail, the output shows what the cancel did.
    term = PtyProcess("chat", env=cli_env(MANTYX_LOG="info", **_server_env(mantyx_server)))
    try:
        term.expect("you> ")
        term.send("slow")
        term.expect("thinking…")
        run = mantyx_server.wait_for_run(status="running", timeout=10)
        term.write("\x03")  # Ctrl-C, as the terminal sends it
        term.expect(f"interrupted: run {run.id} cancelled")
        assert mantyx_server.wait_for_run(run.id, timeout=10).status == "cancelled"
        term.expect("you> ")
        term.send("fast")
        term.expect("You said: fast")
        term.expect("you> ")
        term.send("/end")
        assert term.wait() == 0
    finally:
        term.close()


@pytest.mark.usefixtures("slow_replies")
def test_slash_cancel_stops_a_reply_running_elsewhere_in_the_session(
    mantyx_server: LocalMantyx,
) -> None:
    term = PtyProcess("chat", env=cli_env(**_server_env(mantyx_server)))
    try:
        term.expect("you> ")
        term.send("/cancel")
        term.expect("nothing is running in this session")
        term.expect("you> ")
        (session_id,) = mantyx_server.sessions
        # Another process (here: this test) sends a message to the same session.
        with mantyx_server.client() as client:
            elsewhere = client.sessions.resume(session_id).start("slow")
            with elsewhere:
                mantyx_server.wait_for_run(elsewhere.id, status="running", timeout=10)
                term.send("/cancel")
                term.expect(f"cancelled run {elsewhere.id}")
                with pytest.raises(RunCancelledError):
                    elsewhere.wait()
        assert mantyx_server.runs[elsewhere.id].status == "cancelled"
        term.expect("you> ")
        term.send("/end")
        assert term.wait() == 0
    finally:
        term.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_is_said_at_once_and_the_spinner_stops_with_the_error() -> None:
    port = _closed_port()
    env = {"MANTYX_BASE_URL": f"http://127.0.0.1:{port}", "MANTYX_WORKSPACE": "ws"}
    term = PtyProcess("run", "x", env=cli_env(MANTYX_API_KEY="mantyx_k", **env))
    try:
        # Before the first attempt fails, and then each retry with its count.
        term.expect(f"connecting to 127.0.0.1:{port}…", timeout=3)
        term.expect(f"connecting to 127.0.0.1:{port} (attempt 2 of 5)…")
        term.expect("(attempt 5 of 5)…")
        term.expect("mantyx-sync: error: ")
        status = term.wait()
    finally:
        term.close()
    assert status == 4
    # The error is the last thing written: no spinner frame after it.
    after = term.text[term.text.rindex("mantyx-sync: error: ") :]
    assert not SPINNER_ANY.search(after), after
    assert after.count("\n") == 1


SPINNER_ANY = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] ")


def test_a_dropped_stream_says_it_is_reconnecting_with_the_attempt(
    mantyx_server: LocalMantyx,
) -> None:
    # The stream is cut twice and the first reopen is refused: the spinner says so, then
    # the run carries on where it was and ends as usual.
    mantyx_server.inject(Faults(drop_after=2, drop_times=2, stream_open_errors=2))
    host = mantyx_server.base_url.split("//", 1)[1]
    status, text = _run_on_tty("run", "hello", **_server_env(mantyx_server))
    assert status == 0, text
    assert f"reconnecting to {host} (attempt 1 of 8)…" in text
    assert f"reconnecting to {host} (attempt 2 of 8)…" in text
    assert "You said: hello" in ANSI.sub("", text)


def test_json_and_quiet_show_no_spinner_even_on_a_terminal(mantyx_server: LocalMantyx) -> None:
    for flag in ("--json", "-q"):
        status, text = _run_on_tty("run", "hello", flag, **_server_env(mantyx_server))
        assert status == 0, text
        assert not SPINNER_ANY.search(text) and "connecting" not in text, text
