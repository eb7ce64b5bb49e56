"""The parts of :mod:`mantyx_sync.events` that know no payload class: a frame's
``data:`` text as an event envelope, and an event's data built field by field
when it does not have the documented shape."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final, TypeVar, cast

import attrs

from .._base.bounded import NotJSON, decode_json
from ..errors import MantyxError
from . import wire as _wire

__all__ = ["MalformedEvent", "envelope_of", "seq_of", "structure_fields"]

# The events' own logger: what a user switches on to see odd events.
log: logging.Logger = logging.getLogger("mantyx_sync.events")

T = TypeVar("T")

# What a payload class needs to be built at all, when the event lacks it.
_REQUIRED: Final = {"local_tool_call": {"toolUseId": "", "name": ""}}


class MalformedEvent(MantyxError, ValueError):
    """An SSE frame is not a usable event envelope; the message says why.

    The stream logs and skips such frames rather than failing the run.
    """


def envelope_of(data_text: str) -> dict[str, Any]:
    """A frame's ``data:`` text as the JSON object it must be.

    :raises MalformedEvent: it is not JSON, or not an object.
    """
    try:
        envelope = decode_json(data_text)
    except NotJSON as exc:
        raise MalformedEvent(f"data is not JSON ({exc})") from exc
    if not isinstance(envelope, dict):
        raise MalformedEvent(f"data is a JSON {type(envelope).__name__}, not an object")
    return envelope


def seq_of(value: Any) -> int | None:
    """An envelope's ``seq`` (or an ``id:`` line) as an integer, ``None`` when it is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def structure_fields(event_type: str, data: Mapping[str, Any], cls: type[T]) -> T:
    """``data`` as ``cls``; when it does not have the documented shape, ``cls``
    with every field that reads (logged at warning) and ``raw`` as sent.

    One odd field never costs the others (nor, on a terminal event, how the run ended).
    """
    try:
        return _wire.structure(data, cls)
    except _wire.WireFormatError as exc:
        log.warning("%s event: fields not understood were dropped: %s", event_type, exc)
    required = _REQUIRED.get(event_type, {})
    readable = {k: v for k, v in data.items() if _reads({**required, k: v}, cls)}
    payload = _wire.structure({**required, **readable}, cls)
    if hasattr(payload, "raw"):
        payload = attrs.evolve(cast(Any, payload), raw=dict(data))
    return payload


def _reads(data: Mapping[str, Any], cls: type[Any]) -> bool:
    try:
        _wire.structure(data, cls)
    except _wire.WireFormatError:
        return False
    return True
