"""A cassette on disk, read as a file someone else may have written.

Loading checks the whole file before anything is replayed: its shape (a
malformed file is a :class:`CassetteError` naming the file and the entry), and
every stored-string reference it answers with. A reference is ``sha256:`` and
64 lowercase hex digits, naming a regular file (not a link, a FIFO or a
device) directly in the cassette's own ``<name>.files/`` folder, at most
:data:`BLOB_MAX_BYTES`, whose content has that hash. Every reference is checked
before any is read, so a bad one is refused having read nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import CassetteError

__all__ = ["FILE_REF", "load", "looks_stored", "write"]

FILE_REF = "sha256:"
_REF = re.compile(r"sha256:([0-9a-f]{64})\Z")
# Over any string the API carries (inline files: 5 MB decoded, ~6.7 MB base64).
BLOB_MAX_BYTES = 16 * 1024 * 1024
CASSETTE_MAX_BYTES = 256 * 1024 * 1024
_ENDS = frozenset({"eof", "open", "broken", "timeout"})
_NO_ANSWER_ENDS = frozenset({"broken", "timeout"})


def looks_stored(value: str) -> bool:
    """Whether ``value`` reads as a stored-string reference (``sha256:`` + 64 characters)."""
    return len(value) == len(FILE_REF) + 64 and value.startswith(FILE_REF)


def _read_plain(path: Path, cap: int, *, follow: bool) -> bytes:
    """``path``'s bytes when it is a regular file of at most ``cap`` bytes.

    Opened without blocking (a FIFO cannot hang it) and, unless ``follow``,
    without following a link; checked on the open file, so nothing is read
    from anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _NotPlain("not a regular file")
        if info.st_size > cap:
            raise _NotPlain(f"{info.st_size} bytes, over the {cap}-byte cap")
        data = file.read(cap + 1)
    if len(data) > cap:
        raise _NotPlain(f"over the {cap}-byte cap")
    return data


class _NotPlain(Exception):
    """What makes a file unfit to read back (worded for the message)."""


def _fail(path: Path, where: str, problem: str) -> CassetteError:
    return CassetteError(f"the cassette {path} is malformed: {where} {problem}")


def _check(path: Path, data: Any) -> list[dict[str, Any]]:
    """The interactions of a decoded cassette, each entry checked."""
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise _fail(path, "the file", "must be a JSON object with an 'interactions' list")
    if data.get("version") != 1:
        raise _fail(path, "'version'", f"must be 1, not {data.get('version')!r}")
    interactions: list[Any] = data["interactions"]
    for i, item in enumerate(interactions):
        where = f"interactions[{i}]"
        request = item.get("request") if isinstance(item, dict) else None
        response = item.get("response") if isinstance(item, dict) else None
        if not isinstance(request, dict) or not isinstance(response, dict):
            raise _fail(path, where, "must have a 'request' and a 'response' object")
        for key in ("method", "path"):
            if not isinstance(request.get(key), str):
                raise _fail(path, f"{where}.request.{key}", "must be a string")
        _check_response(path, f"{where}.response", response, len(interactions))
    return interactions


def _check_response(path: Path, where: str, response: dict[str, Any], count: int) -> None:
    end = response.get("end")
    if end is not None and end not in _ENDS:
        raise _fail(path, f"{where}.end", f"must be one of {', '.join(sorted(_ENDS))}")
    if "status" not in response:
        if end is not None and end not in _NO_ANSWER_ENDS:
            raise _fail(path, where, "has no 'status', so its 'end' must be broken or timeout")
        return
    status, content_type = response["status"], response.get("content_type")
    if type(status) is not int or not isinstance(content_type, str):
        raise _fail(path, where, "must have an integer 'status' and a string 'content_type'")
    events = response.get("events", [])
    if not isinstance(events, list):
        raise _fail(path, f"{where}.events", "must be a list")
    for n, event in enumerate(events):
        after = event.get("after") if isinstance(event, dict) else None
        if (
            not isinstance(after, list)
            or not all(type(i) is int and 0 <= i < count for i in after)
            or not isinstance(event.get("frame"), dict)
        ):
            raise _fail(
                path,
                f"{where}.events[{n}]",
                "must have 'after' (a list of interaction numbers) and a 'frame' object",
            )


def _values(value: Any) -> Iterator[str]:
    """Every string value in decoded JSON ``value`` (not the keys)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _values(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _values(item)


def _references(path: Path, interactions: list[dict[str, Any]]) -> set[str]:
    """The digests the answers refer to (a request's are only compared, never read)."""
    found = set()
    for i, item in enumerate(interactions):
        response = item["response"]
        answers = [response.get("body"), [event["frame"] for event in response.get("events", [])]]
        for value in _values(answers):
            if looks_stored(value):
                match = _REF.match(value)
                if match is None:
                    raise _fail(
                        path,
                        f"interactions[{i}].response",
                        f"refers to {value[:80]!r}: a stored string is named by "
                        "'sha256:' and 64 lowercase hex digits",
                    )
                found.add(match.group(1))
    return found


def load(path: Path, files: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The cassette at ``path`` checked, and the strings its answers keep in ``files``.

    :raises CassetteError: the file, or a stored string, is not what a cassette
        writes; the message names the file and what is wrong.
    """
    try:
        data = json.loads(_read_plain(path, CASSETTE_MAX_BYTES, follow=True))
    except (OSError, _NotPlain, ValueError) as exc:
        raise CassetteError(f"the cassette {path} cannot be read back: {exc}") from None
    interactions = _check(path, data)
    digests = _references(path, interactions)
    if digests and not files.is_dir():
        raise CassetteError(
            f"the cassette {path} keeps {len(digests)} long string(s) in {files}, which is "
            "missing: copy that folder along with the file, or record it again"
        )
    for digest in digests:  # all checked before any is read
        try:
            info = os.lstat(files / digest)
        except OSError as exc:
            raise _stored(path, files, digest, f"cannot be found ({exc.strerror})") from None
        if not stat.S_ISREG(info.st_mode) or info.st_size > BLOB_MAX_BYTES:
            raise _stored(
                path, files, digest, f"is not a regular file of at most {BLOB_MAX_BYTES} bytes"
            )
    blobs = {}
    for digest in digests:
        try:
            raw = _read_plain(files / digest, BLOB_MAX_BYTES, follow=False)
        except (OSError, _NotPlain) as exc:
            raise _stored(path, files, digest, f"cannot be read ({exc})") from None
        if hashlib.sha256(raw).hexdigest() != digest:
            raise _stored(path, files, digest, "does not hold the content its name is the hash of")
        blobs[digest] = raw.decode("utf-8", "replace")
    return interactions, blobs


def _stored(path: Path, files: Path, digest: str, problem: str) -> CassetteError:
    return CassetteError(f"the cassette {path} refers to {files / digest}, which {problem}")


def write(path: Path, files: Path, data: Any, blobs: dict[str, str]) -> None:
    """Write the cassette and its new long strings, each through a fresh file
    renamed into place (never through a link planted at its name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for digest, text in blobs.items():
        files.mkdir(exist_ok=True)
        _replace(files / digest, text)
    _replace(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _replace(path: Path, text: str) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
