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
goes through the package's redaction, then the user's: every string value
(streamed text deltas also as the text they make up); a name (``toolName``...)
is never taken for a key, and keys are left alone. Strings longer than
``_BIG`` characters (inline files) are kept once each, by hash, beside the
file. A file read back is checked first (:mod:`._cassette_file`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from .._base.argcheck import checked
from .._base.redact import redact_text, redact_whole
from .._base.transport_hook import HOOK
from ._cassette_file import FILE_REF, load, looks_stored, write
from ._cassette_match import diff, mismatch
from ._cassette_stream import (
    ENDINGS,
    Canned,
    Deltas,
    cleaned,
    ending,
    frame,
    frame_bytes,
    strings,
)
from .errors import CassetteError
from .transport import Request

__all__ = ["Cassette", "cassette"]

RecordMode = Literal["once", "new_episodes", "none", "all"]
RECORD_MODES: tuple[RecordMode, ...] = ("once", "new_episodes", "none", "all")
_BIG = 4096
_WORKSPACE = re.compile(r"/workspaces/[^/]+/")
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_NAMED = re.compile(r'[iI]d"\s*:\s*"([^"\\]+)"')  # a frame's ids: "agentRunId": "r2", ...


def _path(url: str) -> str:
    """The URL's path and query, its workspace left out (a replay may use any)."""
    parts = urlsplit(url)
    path = _WORKSPACE.sub("/workspaces/-/", parts.path)
    return f"{path}?{parts.query}" if parts.query else path


def _subject(path: str) -> str:
    """What a path is about: ``/v1/agent-runs/r1/stream`` -> ``r1``."""
    return path.split("?", 1)[0].rsplit("/", 2)[-2]


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
        self.path: Path = Path(path)
        self._files = self.path.with_name(self.path.stem + ".files")  # big strings, by hash
        self._stored: dict[str, str] = {}  # ... as read back, checked
        self.record_mode = record_mode
        self.match_tool_results = match_tool_results
        self._redact = redact
        self._lock = threading.Condition()
        self._sent: set[int] = set()  # replayed interactions whose request came again
        self._failure: CassetteError | None = None
        self._dirty = False
        self._blobs: dict[str, str] = {}
        self._deltas: list[Deltas] = []  # each recorded stream's, redacted whole at save
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
            self.interactions, self._stored = load(self.path, self._files)
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
        """``value`` redacted (package, then user), its big strings kept by hash;
        a name (``toolName``...) only of registered secrets, never as a key's shape."""
        return cleaned(value, self._store, functools.partial(redact_whole, shapes=False))

    def _redacted(self, value: str) -> str:
        text = redact_whole(value)
        return text if self._redact is None else self._redact(text)

    def _store(self, value: str) -> str:
        text = self._redacted(value)
        if len(text) <= _BIG and not looks_stored(text):  # a look-alike is stored too
            return text
        digest = hashlib.sha256(text.encode()).hexdigest()
        self._blobs[digest] = text
        return FILE_REF + digest

    def _fetch(self, value: str) -> str:
        """A string kept by hash, as read back (and checked) with the cassette."""
        if not looks_stored(value):
            return value
        return self._stored.get(value.removeprefix(FILE_REF), value)

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
            for deltas in self._deltas:
                deltas.fix()
            data = {"version": 1, "interactions": self.interactions}
            blobs, self._blobs = dict(self._blobs), {}
        write(self.path, self._files, data, blobs)

    def _record(self, inner: Any, request: Request, stream: bool) -> Canned:
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
                return Canned(answer.status, response["content_type"], [content])
        except Exception as exc:
            response["end"] = ending(exc)
            raise
        response["events"] = []

        def close() -> None:
            with self._lock:
                response.setdefault("end", "open")  # closed by the client while still open
            answer.close()

        tape = self._tape(answer, index, response)
        return Canned(answer.status, response["content_type"], tape, on_close=close)

    def _tape(self, answer: Any, index: int, response: dict[str, Any]) -> Iterator[bytes]:
        """``answer``'s chunks, passed on as they come; each whole frame noted with
        the writes recorded before it about its stream's run or a run it named."""
        buffer, checked, end = b"", 0, "eof"
        names = {_subject(self.interactions[index]["request"]["path"])}
        deltas = Deltas(response["events"], self._redacted, self._store)
        with self._lock:
            self._deltas.append(deltas)
        try:
            for chunk in answer:
                buffer += chunk.replace(b"\r\n", b"\n")
                *frames, buffer = buffer.split(b"\n\n")
                for raw in frames:
                    fields = frame(raw.decode("utf-8", "replace"))
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
                        deltas.note(fields)
                        response["events"].append({"after": after, "frame": self._clean(fields)})
                yield chunk  # after noting it: the reader may stop at its last event
        except Exception as exc:
            end = ending(exc)
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

    def _replay(self, request: Request, stream: bool) -> Canned | None:
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
            raise ENDINGS[response.get("end", "broken")]("the recorded request failed here")
        timeout = request.timeout[1]
        if not stream or "events" not in response:
            content = json.dumps(strings(response.get("body"), self._fetch)).encode()
            body = b"" if response.get("body") is None else content
            return Canned(response["status"], response["content_type"], [body])
        frames = self._frames(response["events"], timeout)
        end = response.get("end", "open")
        return Canned(
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
            yield frame_bytes(strings(event["frame"], self._fetch))

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

    def _answer(self, request: Request, stream: bool) -> Canned:
        if self._cassette.replaying:
            answer = self._cassette._replay(request, stream)
            if answer is not None:
                return answer
        return self._cassette._record(self._inner, request, stream)

    def send(self, request: Request) -> Canned:
        return self._answer(request, stream=False)

    def stream(self, request: Request) -> Canned:
        return self._answer(request, stream=True)

    def close(self) -> None:
        self._inner.close()


class _ReplayedTokens:
    """A client's token source while its cassette only replays: the recording
    answers without a credential, so none is fetched and nothing goes out."""

    def __init__(self, source: Any) -> None:
        self._source = source

    def __repr__(self) -> str:
        return f"<token source replayed from a cassette, instead of {type(self._source).__name__}>"

    def token(self) -> str:
        return "replayed"

    def refresh(self, rejected: str) -> str:
        return "replayed"


class _ReplayedIdentity(_ReplayedTokens):
    """... for a source that also names its server and workspaces (``IdentityAware``):
    the server is the source's; the workspace, any (a cassette's paths leave it out)."""

    @property
    def base_url(self) -> str:
        return str(self._source.base_url)

    def workspaces(self) -> list[str]:
        return ["replayed"]


class _Hook:
    """What an open cassette does to each client built in its block (``_base.transport_hook``)."""

    def __init__(self, cassette: Cassette) -> None:
        self._cassette = cassette

    def transport(self, transport: Any) -> _CassetteTransport:
        return _CassetteTransport(self._cassette, transport)

    def token_source(self, source: Any) -> Any:
        tape = self._cassette
        if not tape.replaying or tape.record_mode == "new_episodes":
            return source  # it may record, with the real credential
        if not all(callable(getattr(source, name, None)) for name in ("token", "refresh")):
            return source  # not a token source: the client says so
        identity = callable(getattr(source, "workspaces", None)) and hasattr(source, "base_url")
        return (_ReplayedIdentity if identity else _ReplayedTokens)(source)


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
    :param redact: a function applied to every string value (never to names:
        keys, tool names) before it is written, after the API key, tokens and
        registered secrets are masked; request headers are never written.
    :raises CassetteError: the file cannot be read back (malformed, or a
        stored string that is not a plain file of its folder: checked when the
        block opens, naming the file and the entry); a request differs from
        the recording (naming the field and both values), or is not in it
        under ``"none"``/``"once"``.
    """
    tape = Cassette(
        path, record_mode=record_mode, match_tool_results=match_tool_results, redact=redact
    )
    # A client built in the block sends through the cassette instead of its transport.
    token = HOOK.set(_Hook(tape))
    try:
        yield tape
    finally:
        HOOK.reset(token)
    tape.check()
