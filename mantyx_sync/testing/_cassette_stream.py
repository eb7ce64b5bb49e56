"""What a cassette does with the values it writes and the streams it answers:
strings redacted as values (never names), the text a run of streamed deltas
makes up redacted as a whole, frames parsed and written back, and a recorded
answer handed out as it came (:class:`Canned`).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from requests.structures import CaseInsensitiveDict

__all__ = [
    "ENDINGS",
    "Canned",
    "Deltas",
    "cleaned",
    "ending",
    "frame",
    "frame_bytes",
    "strings",
]

# How a recorded answer broke, as a transport raises it; the client words it.
ENDINGS: dict[str, type[OSError]] = {"broken": ConnectionError, "timeout": TimeoutError}


class Canned:
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
        raise ENDINGS.get(self._end, TimeoutError)(f"the recorded answer ended here ({self._end})")

    def close(self) -> None:
        self._closed.set()
        if self._on_close is not None:
            self._on_close()


def ending(exc: BaseException) -> str:
    """How an answer broke: a read that timed out (the builtin ``TimeoutError``,
    or the client's timeout errors, which this package cannot import), else ``"broken"``."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "timeout" if names & {"TimeoutError", "Timeout"} else "broken"


def _is_name(key: str) -> bool:
    """Whether a field holds a name (``name``, ``toolName``, ``kind``...), never redacted."""
    return key in {"name", "kind", "type", "toolFilter"} or key.endswith("Name")


def strings(value: Any, leaf: Callable[[str], str]) -> Any:
    """``value`` (JSON) with ``leaf`` applied to every string value in it (not the keys)."""
    if isinstance(value, str):
        return leaf(value)
    if isinstance(value, list):
        return [strings(item, leaf) for item in value]
    if isinstance(value, dict):
        return {key: strings(item, leaf) for key, item in value.items()}
    return value


def cleaned(value: Any, leaf: Callable[[str], str], name: Callable[[str], str]) -> Any:
    """:func:`strings` for what a cassette writes: ``name`` (not ``leaf``) is
    applied to the values of name fields, and those of a ``headers`` object (a
    server-resolved tool's credentials) are masked whole."""
    if isinstance(value, list):
        return [cleaned(item, leaf, name) for item in value]
    if not isinstance(value, dict):
        return strings(value, leaf)
    out = {}
    for key, item in value.items():
        if key == "headers" and isinstance(item, dict):
            out[key] = {field: "***" if isinstance(v, str) else v for field, v in item.items()}
        else:
            out[key] = strings(item, name) if _is_name(str(key)) else cleaned(item, leaf, name)
    return out


def frame(text: str) -> dict[str, Any]:
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


def frame_bytes(fields: Mapping[str, Any]) -> bytes:
    lines = []
    for name, value in fields.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines += [f"{name}: {line}" for line in text.split("\n")]
    return ("\n".join(lines) + "\n\n").encode()


def _delta(fields: Mapping[str, Any]) -> tuple[str, str] | None:
    """A streamed-text event's ``(type, text)``: ``assistant_delta``, ``thinking_delta``..."""
    data = fields.get("data")
    if isinstance(data, dict) and str(data.get("type", "")).endswith("_delta"):
        inner = data.get("data")
        if isinstance(inner, dict) and isinstance(inner.get("text"), str):
            return str(data["type"]), inner["text"]
    return None


class Deltas:
    """One recorded stream's text deltas, as they came, to redact the text each
    run of them makes up: a secret split across two deltas is whole there.

    :param events: the stream's recorded events, as they are appended.
    :param redact: the cassette's redaction of one string value.
    :param store: the cassette's redaction that also keeps a big string by hash.
    """

    def __init__(
        self,
        events: list[dict[str, Any]],
        redact: Callable[[str], str],
        store: Callable[[str], str],
    ) -> None:
        self._events = events
        self._redact = redact
        self._store = store
        self._seen: list[tuple[int, str, str]] = []  # (event number, type, raw text)

    def note(self, fields: Mapping[str, Any]) -> None:
        """Keep the raw text of the event about to be appended, if it is a delta."""
        found = _delta(fields)
        if found is not None:
            self._seen.append((len(self._events), *found))

    def fix(self) -> None:
        """Where a run of consecutive deltas of one type (one turn's text) redacts
        otherwise as a whole than piece by piece, its first delta carries the
        whole text, redacted, and the rest none."""
        runs: list[list[tuple[int, str, str]]] = []
        for item in self._seen:
            if runs and item[0] == runs[-1][-1][0] + 1:
                runs[-1].append(item)
            else:
                runs.append([item])
        for run in runs:
            for kind in dict.fromkeys(kind for _, kind, _ in run):
                same = [(number, raw) for number, each, raw in run if each == kind]
                whole = "".join(raw for _, raw in same)
                if self._redact(whole) == "".join(self._redact(raw) for _, raw in same):
                    continue
                for n, (number, _) in enumerate(same):
                    text = self._store(whole) if n == 0 else ""
                    self._events[number]["frame"]["data"]["data"]["text"] = text
        self._seen = []
