"""Bodies from a server, read one way everywhere: capped in size, JSON decoded safely.

Whatever answers — the MANTYX API, an OAuth server, an MCP server over HTTP or
stdio, an A2A peer — is read through :func:`read_capped` (chunks, stopping as
soon as the total passes the cap: an endless body is never buffered) and
decoded through :func:`decode_json` (JSON nested too deeply for the parser is
a :class:`NotJSON`, never a ``RecursionError`` escaping a reader thread).
The callers word these as their own errors (``WireFormatError`` for the API).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any, Final

__all__ = [
    "CHUNK",
    "MAX_BODY_BYTES",
    "BodyTooLarge",
    "NotJSON",
    "TooDeep",
    "decode_json",
    "raw_decode",
    "read_capped",
]

MAX_BODY_BYTES: Final = 64 * 1024 * 1024
"""The default cap on one reply body: 64 MB."""
CHUNK: Final = 64 * 1024
"""How much one read of a body asks for."""


class BodyTooLarge(ValueError):
    """A body grew past its cap (reading stopped there)."""


class NotJSON(ValueError):
    """A body is not JSON (or not UTF-8 JSON)."""


class TooDeep(NotJSON):
    """A body is JSON nested more deeply than the parser can follow."""


def read_capped(
    chunks: Iterable[bytes], *, limit: int, what: str, deadline: float | None = None
) -> bytes:
    """The chunks joined, read no further than ``limit`` bytes past the cap.

    :param what: the body's name in the message (``"the answer from host:443"``).
    :param deadline: a ``time.monotonic()`` value checked after each chunk.
    :raises BodyTooLarge: more than ``limit`` bytes came.
    :raises TimeoutError: the deadline passed before the body ended.
    """
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(
                f"{what} is larger than {limit:,} bytes, the most a reply may be; "
                "reading stopped there"
            )
        parts.append(chunk)
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"{what} was not complete by its deadline")
    return parts[0] if len(parts) == 1 else b"".join(parts)


_DECODER: Final = json.JSONDecoder()
raw_decode: Final = _DECODER.raw_decode
"""``(value, end)`` of the JSON value at the start of a string, for the per-event
path: it raises ``ValueError`` or ``RecursionError`` where :func:`decode_json`
would say why."""
_JSON_SPACE: Final = " \t\n\r"


def decode_json(content: bytes | str) -> Any:
    """The JSON value of ``content`` (text skips ``json.loads``' whitespace
    regexes when it has no space around it: the per-event path).

    :raises TooDeep: nested past what the parser follows (about 1000 levels).
    :raises NotJSON: anything else that is not JSON; the message is the reason
        alone (``"JSONDecodeError: Expecting value: ..."``), for the caller's sentence.
    """
    try:
        if type(content) is str:
            try:
                value, end = raw_decode(content)
            except json.JSONDecodeError:
                pass  # json.loads says why
            else:
                if end == len(content) or not content[end:].strip(_JSON_SPACE):
                    return value
        return json.loads(content)  # bytes, a str subclass, space around, or not JSON
    except RecursionError:
        raise TooDeep("nested too deeply to be read") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise NotJSON(f"{type(exc).__name__}: {str(exc)[:80]}") from None
