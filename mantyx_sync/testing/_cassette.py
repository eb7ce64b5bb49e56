"""Cassettes: record a client's real exchanges once, replay them offline.

Inside ``with cassette("weather.json"):`` every ``mantyx_sync.Client`` built in
the block has its transport wrapped (the one hook, ``_base.transport_hook``).
Recording passes each request through and writes down, in order, what the SDK
sent (method, path, JSON body: no header but ``Content-Type``) and what came
back: a JSON body, or an event stream's frames and how it ended. Each frame notes
the writes (tool results, cancels) sent before it about its run or a run it names.

Replaying answers from the file with no network. A run's stream hands out its
frames in order, and holds each one back until the writes it was recorded
after have been sent again: the user's tools really run, and what they post is
checked against the recording (:mod:`._cassette_match`). Everything written
goes through the package's redaction, then the user's, and strings longer than
``_BIG`` characters (inline files) are kept once each, by hash, beside the file.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from requests.structures import CaseInsensitiveDict

from .._base.argcheck import checked
from .._base.redact import redact_text, redact_value
from .._base.transport_hook import TRANSPORT_WRAPPER
from ._cassette_match import CassetteError, diff, mismatch
from ._transport import Request

__all__ = ["Cassette", "CassetteError", "cassette"]

RecordMode = Literal["once", "new_episodes", "none", "all"]
RECORD_MODES: tuple[RecordMode, ...] = ("once", "new_episodes", "none", "all")
_BIG = 4096
_FILE_REF = "sha256:"
_WORKSPACE = re.compile(r"/workspaces/[^/]+/")
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_NAMED = re.compile(r'[iI]d"\s*:\s*"([^"\\]+)"')  # a frame's ids: "agentRunId": "r2", ...
# How a recorded answer broke, as a transport raises it; the client words it.
_ENDINGS: dict[str, type[OSError]] = {"broken": ConnectionError, "timeout": TimeoutError}


def _path(url: str) -> str:
    """The URL's path and query, its workspace left out (a replay may use any)."""
    parts = urlsplit(url)
    path = _WORKSPACE.sub("/workspaces/-/", parts.path)
    return f"{path}?{parts.query}" if parts.query else path


def _subject(path: str) -> str:
    """What a path is about: ``/v1/agent-runs/r1/stream`` -> ``r1``."""
    return path.split("?", 1)[0].rsplit("/", 2)[-2]


class _Canned:
    """A whole answer, or a stream handed out frame by frame and ended as
    recorded (``end``): by the server (``"eof"``), with a read that timed out or
    a broken connection, or held open until the client closes it (``"open"``)."""

    def __init__(
        self,
        status: int,
        content_type: str,
        chunks: Iterable[bytes],
        *,
        end: str = "eof",
        timeout: float = 0.0,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.status = status
        self.headers = CaseInsensitiveDict({"Content-Type": content_type} if content_type else {})
        self._chunks = chunks
        self._end = end
        self._timeout = timeout
        self._on_close = on_close
        self._closed = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            if self._closed.is_set():
                return
            yield chunk
        if self._end == "eof" or (self._end == "open" and self._closed.wait(self._timeout)):
            return
        raise _ENDINGS.get(self._end, TimeoutError)(f"the recorded answer ended here ({self._end})")

    def close(self) -> None:
        self._closed.set()
        if self._on_close is not None:
            self._on_close()


def _ending(exc: BaseException) -> str:
    """How an answer broke: a read that timed out (the builtin ``TimeoutError``,
    or the client's ``Timeout``, which this package cannot import), else ``"broken"``."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "timeout" if names & {"TimeoutError", "Timeout"} else "broken"


def _strings(value: Any, leaf: Callable[[str], str]) -> Any:
    """``value`` (JSON) with ``leaf`` applied to every string in it."""
    if isinstance(value, str):
        return leaf(value)
    if isinstance(value, list):
        return [_strings(item, leaf) for item in value]
    if isinstance(value, dict):
        return {key: _strings(item, leaf) for key, item in value.items()}
    return value


def _frame(text: str) -> dict[str, Any]:
    """An SSE frame as ``{field: value}``, its ``data`` decoded when it is JSON."""
    fields: dict[str, Any] = {}
    for line in text.splitlines():
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        fields[name] = f"{fields[name]}\n{value}" if name in fields else value
    if "data" in fields:
        with contextlib.suppress(ValueError):
            fields["data"] = json.loads(fields["data"])
    return fields


def _frame_bytes(fields: Mapping[str, Any]) -> bytes:
    lines = []
    for name, value in fields.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines += [f"{name}: {line}" for line in text.split("\n")]
    return ("\n".join(lines) + "\n\n").encode()


class Cassette:
    """One cassette file, recording or replaying (see :func:`cassette`).

    :ivar path: the cassette file.
    :ivar record_mode: how it was opened.
    :ivar interactions: every exchange, in the order the requests were sent.
    """

    @checked(TypeError)
    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        record_mode: RecordMode = "once",
        match_tool_results: bool = True,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        if record_mode not in RECORD_MODES:
            raise CassetteError(
                f"record_mode must be one of {', '.join(RECORD_MODES)}, not {record_mode!r}"
            )
        self.path = Path(path)
        self._files = self.path.with_name(self.path.stem + ".files")  # big strings, by hash
        self.record_mode = record_mode
        self.match_tool_results = match_tool_results
        self._redact = redact
        self._lock = threading.Condition()
        self._sent: set[int] = set()  # replayed interactions whose request came again
        self._failure: CassetteError | None = None
        self._dirty = False
        self._blobs: dict[str, str] = {}
        exists = self.path.exists()
        if record_mode == "none" and not exists:
            raise CassetteError(
                f"no cassette at {self.path} and record_mode='none' never records: "
                "run once with record_mode='once' (pytest: --mantyx-record-mode=once) "
                "against a server to record it"
            )
        self.interactions: list[dict[str, Any]] = []
        self._recorded = 0
        if exists and record_mode != "all":
            self.interactions = json.loads(self.path.read_text(encoding="utf-8"))["interactions"]
            self._recorded = len(self.interactions)

    def __repr__(self) -> str:
        return (
            f"<Cassette {str(self.path)!r} {self.record_mode} {len(self.interactions)} exchanges>"
        )

    @property
    def replaying(self) -> bool:
        """Whether recorded exchanges are served (else every request goes out)."""
        return self._recorded > 0 or self.record_mode == "none"

    def _clean(self, value: Any) -> Any:
        """``value`` redacted (package, then user), its big strings kept by hash."""
        return _strings(redact_value(value), self._store)

    def _store(self, value: str) -> str:
        text = value if self._redact is None else self._redact(value)
        if len(text) <= _BIG:
            return text
        digest = hashlib.sha256(text.encode()).hexdigest()
        self._blobs[digest] = text
        return _FILE_REF + digest

    def _fetch(self, value: str) -> str:
        """A string kept by hash read back from beside the cassette."""
        if value.startswith(_FILE_REF) and len(value) == 71:
            with contextlib.suppress(OSError):
                return (self._files / value.removeprefix(_FILE_REF)).read_text(encoding="utf-8")
        return value

    def _body(self, body: bytes | Iterable[bytes] | None) -> Any:
        if body is None:
            return None
        raw = body if isinstance(body, bytes) else b"".join(body)
        try:
            decoded = json.loads(raw) if raw else None
        except ValueError:
            decoded = raw.decode("utf-8", "replace")
        return self._clean(decoded)

    def _request(self, request: Request) -> dict[str, Any]:
        return {
            "method": request.method,
            "path": redact_text(_path(request.url)),
            "body": self._body(request.body),
        }

    def save(self) -> None:
        """Write the file (sorted keys, stable across recordings) and its big strings."""
        with self._lock:
            data = {"version": 1, "interactions": self.interactions}
            blobs, self._blobs = dict(self._blobs), {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for digest, text in blobs.items():
            self._files.mkdir(exist_ok=True)
            (self._files / digest).write_text(text, encoding="utf-8")
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
        self.path.write_text(text + "\n", encoding="utf-8")

    def _record(self, inner: Any, request: Request, stream: bool) -> _Canned:
        response: dict[str, Any] = {}
        with self._lock:
            self.interactions.append({"request": self._request(request), "response": response})
            self._dirty = True
            index = len(self.interactions) - 1
        try:
            answer = inner.stream(request) if stream else inner.send(request)
            response["status"] = answer.status
            response["content_type"] = answer.headers.get("content-type", "")
            if not stream:
                try:
                    content = b"".join(answer)
                finally:
                    answer.close()
                response["body"] = self._body(content)
                return _Canned(answer.status, response["content_type"], [content])
        except Exception as exc:
            response["end"] = _ending(exc)
            raise
        response["events"] = []

        def close() -> None:
            with self._lock:
                response.setdefault("end", "open")  # closed by the client while still open
            answer.close()

        tape = self._tape(answer, index, response)
        return _Canned(answer.status, response["content_type"], tape, on_close=close)

    def _tape(self, answer: Any, index: int, response: dict[str, Any]) -> Iterator[bytes]:
        """``answer``'s chunks, passed on as they come; each whole frame noted with
        the writes recorded before it about its stream's run or a run it named."""
        buffer, checked, end = b"", 0, "eof"
        names = {_subject(self.interactions[index]["request"]["path"])}
        try:
            for chunk in answer:
                buffer += chunk.replace(b"\r\n", b"\n")
                *frames, buffer = buffer.split(b"\n\n")
                for raw in frames:
                    fields = _frame(raw.decode("utf-8", "replace"))
                    if not fields:
                        continue
                    names.update(_NAMED.findall(raw.decode("utf-8", "replace")))
                    with self._lock:
                        after = [
                            i
                            for i in range(max(checked, self._recorded), len(self.interactions))
                            if self.interactions[i]["request"]["method"] in _WRITES
                            and _subject(self.interactions[i]["request"]["path"]) in names
                        ]
                        checked = len(self.interactions)
                        response["events"].append({"after": after, "frame": self._clean(fields)})
                yield chunk  # after noting it: the reader may stop at its last event
        except Exception as exc:
            end = _ending(exc)
            raise
        finally:
            with self._lock:
                response.setdefault("end", end)
            answer.close()

    def _find(self, request: dict[str, Any]) -> int | None:
        """The recorded exchange ``request`` replays (lock held): the Nth request
        with a method, path and body is the Nth recorded one. Past the recorded
        ones new_episodes records it; otherwise a read answers as it did last,
        and a write differs from the first one not yet sent."""
        same = [
            i
            for i in range(self._recorded)
            if self.interactions[i]["request"]["method"] == request["method"]
            and self.interactions[i]["request"]["path"] == request["path"]
        ]
        fresh = [i for i in same if i not in self._sent]
        for i in fresh:
            if self.interactions[i]["request"]["body"] == request["body"]:
                return i
        tool_use = _tool_use_id(request["body"])
        for i in fresh:
            if (
                tool_use is not None
                and _tool_use_id(self.interactions[i]["request"]["body"]) == tool_use
            ):
                return i
        if fresh and self.record_mode != "new_episodes":
            return fresh[0]  # to report how it differs
        if same and request["method"] not in _WRITES and self.record_mode != "new_episodes":
            return same[-1]
        return None

    def _replay(self, request: Request, stream: bool) -> _Canned | None:
        """The recorded answer to ``request``; ``None`` when new_episodes should record it."""
        live = self._request(request)
        with self._lock:
            if self._failure is not None:
                raise self._failure  # the first difference, not what followed from it (a cancel)
            index = self._find(live)
            if index is None:
                if self.record_mode == "new_episodes":
                    return None
                recorded = sorted(
                    {f"{i['request']['method']} {i['request']['path']}" for i in self.interactions}
                )
                raise self._fail(
                    CassetteError(
                        f"{live['method']} {live['path']} is not in the cassette {self.path} "
                        f"(it has: {', '.join(recorded) or 'nothing'}). Record it again with "
                        "record_mode='all' (pytest: --mantyx-record-mode=all), or add it with "
                        "record_mode='new_episodes'"
                    )
                )
            recorded_request = self.interactions[index]["request"]
            problem = diff(recorded_request["body"], live["body"])
            if problem is not None:
                error = mismatch(live, problem, self.interactions[: self._recorded], self.path)
                if self.match_tool_results or not error.tool_use_id:
                    raise self._fail(error)
            self._sent.add(index)
            self._lock.notify_all()
        response = self.interactions[index]["response"]
        if "status" not in response:  # no answer came (before the block ended)
            raise _ENDINGS[response.get("end", "broken")]("the recorded request failed here")
        timeout = request.timeout[1]
        if not stream or "events" not in response:
            content = json.dumps(_strings(response.get("body"), self._fetch)).encode()
            body = b"" if response.get("body") is None else content
            return _Canned(response["status"], response["content_type"], [body])
        frames = self._frames(response["events"], timeout)
        end = response.get("end", "open")
        return _Canned(
            response["status"], response["content_type"], frames, end=end, timeout=timeout
        )

    def _frames(self, events: list[dict[str, Any]], timeout: float) -> Iterator[bytes]:
        for event in events:
            after = set(event["after"])
            with self._lock:
                if not self._lock.wait_for(
                    functools.partial(self._released, after), timeout=timeout
                ):
                    missing = [self.interactions[i]["request"] for i in sorted(after - self._sent)]
                    raise self._fail(
                        CassetteError(
                            "the recording waits for "
                            + ", ".join(f"{r['method']} {r['path']}" for r in missing)
                            + f" before its next event, and it was not sent within {timeout:g}s"
                        )
                    )
                if self._failure is not None:
                    raise self._failure
            yield _frame_bytes(_strings(event["frame"], self._fetch))

    def _released(self, after: set[int]) -> bool:
        return self._failure is not None or after <= self._sent

    def _fail(self, error: CassetteError) -> CassetteError:
        with self._lock:
            if self._failure is None:
                self._failure = error
            self._lock.notify_all()
        return error

    def check(self) -> None:
        """Raise the first mismatch seen (a request answered from another thread
        may have swallowed it), then save what was recorded."""
        if self._failure is not None:
            raise self._failure
        if self._dirty:
            self.save()


def _tool_use_id(body: Any) -> str | None:
    value = body.get("toolUseId") if isinstance(body, dict) else None
    return value if isinstance(value, str) else None


class _CassetteTransport:
    """A client's transport inside a cassette block: replay, else record through ``inner``."""

    def __init__(self, cassette: Cassette, inner: Any) -> None:
        self._cassette = cassette
        self._inner = inner

    def __repr__(self) -> str:
        return f"<cassette transport {str(self._cassette.path)!r}>"

    def _answer(self, request: Request, stream: bool) -> _Canned:
        if self._cassette.replaying:
            answer = self._cassette._replay(request, stream)
            if answer is not None:
                return answer
        return self._cassette._record(self._inner, request, stream)

    def send(self, request: Request) -> _Canned:
        return self._answer(request, stream=False)

    def stream(self, request: Request) -> _Canned:
        return self._answer(request, stream=True)

    def close(self) -> None:
        self._inner.close()


@contextlib.contextmanager
@checked(TypeError)
def cassette(
    path: str | os.PathLike[str],
    *,
    record_mode: RecordMode = "once",
    match_tool_results: bool = True,
    redact: Callable[[str], str] | None = None,
) -> Iterator[Cassette]:
    """Record the MANTYX exchanges of every ``Client`` built in the block, or replay them.

    Example::

        with mantyx_sync.testing.cassette("tests/cassettes/weather.json"):
            client = mantyx_sync.Client()
            print(Agent(client, tools=[get_weather]).run("Weather in Oslo?").text)

    The first time (no file yet) the block talks to the server and the file is
    written when it ends; from then on it is answered from the file with no
    network, your tools running for real and their results checked against the
    recorded ones.

    :param path: the cassette file (JSON; strings over 4096 characters go in
        a ``<name>.files/`` folder beside it, one file per content hash).
    :param record_mode: ``"once"`` records when the file does not exist and
        replays it when it does; ``"new_episodes"`` replays what is recorded and
        records requests it lacks; ``"none"`` only replays; ``"all"`` records
        afresh every time.
    :param match_tool_results: ``False`` accepts tool results that differ from
        the recorded ones (tools whose output changes, like the time).
    :param redact: a function applied to every string before it is written,
        after the API key, tokens and registered secrets are masked; request
        headers are never written.
    :raises CassetteError: a request differs from the recording (naming the
        field and both values), or is not in it under ``"none"``/``"once"``.
    """
    tape = Cassette(
        path, record_mode=record_mode, match_tool_results=match_tool_results, redact=redact
    )
    # A client built in the block sends through the cassette instead of its transport.
    token = TRANSPORT_WRAPPER.set(functools.partial(_CassetteTransport, tape))
    try:
        yield tape
    finally:
        TRANSPORT_WRAPPER.reset(token)
    tape.check()
