"""Fault plans: what the emulator does wrong, on purpose, for one run or one request."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

import attrs

from .._base.argcheck import checked_init

__all__ = ["Faults"]


def _nonneg(_inst: Any, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"Faults(): {attribute.name} must be >= 0")


def check_status(where: str, name: str, status: int) -> None:
    """Refuse an HTTP status outside 100..599 (``ValueError`` naming the argument)."""
    if not 100 <= status <= 599:
        raise ValueError(f"{where}(): {name} must be an HTTP status (100 to 599)")


def _status(_inst: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    check_status("Faults", attribute.name, value)


@checked_init(TypeError)
@attrs.frozen(kw_only=True)
class Faults:
    """A fault plan for the next created run (``LocalMantyx.inject(Faults(...))``).

    Every fault is off by default. Event counts below are *seqs*: the run's
    events are numbered 1, 2, 3, … and "after N" means "right after the event
    with seq N".

    :ivar drop_after: cut a stream connection abruptly (no terminating chunk)
        right after it sends the first event with ``seq >= drop_after`` that is
        new to that connection (seq above its ``Last-Event-ID``/``lastSeq``).
        This happens to the first ``drop_times`` connections that get that far,
        so a client that resumes correctly always makes progress.
    :ivar drop_times: how many connections :attr:`drop_after` cuts (default 1).
    :ivar stall_after: once per run, after a connection sends the event with
        ``seq == stall_after`` (or the first one past it), that connection sends
        nothing at all — no keep-alives — until :attr:`stall_seconds` pass or
        the client goes away; then it carries on normally.
    :ivar stall_seconds: how long the stall lasts.
    :ivar replay_overlap: on a resumed stream (``Last-Event-ID``/``lastSeq``
        given), also resend this many events before the resume point.
    :ivar duplicate_tool_calls: every ``local_tool_call`` is logged twice, same
        ``toolUseId``, distinct seqs.
    :ivar tool_result_errors: the first k tool-result POSTs of the run answer
        :attr:`tool_result_error_status` and are not accepted.
    :ivar tool_result_error_status: status for :attr:`tool_result_errors`.
    :ivar tool_result_accept_then_drop: the first k tool-result POSTs are
        accepted (recorded, run resumes) but the connection is closed without
        any HTTP response.
    :ivar tool_result_rate_limited: the first k tool-result POSTs answer 429
        with ``Retry-After: <retry_after>`` and are not accepted.
    :ivar retry_after: seconds sent in ``Retry-After``.
    :ivar stream_open_errors: the first k stream GETs answer
        :attr:`stream_open_status`.
    :ivar stream_open_status: status for :attr:`stream_open_errors`.
    :ivar strip_event_lines: frames carry only ``id:`` and ``data:`` lines.
    :ivar malformed_frame_after: once per run, after the event with that seq is
        sent, send one frame (no ``id:``) whose data is not valid JSON; no seq
        is consumed.
    :ivar unknown_event_after: log a ``mystery_event`` ``{"x": 1}`` right after
        the event with that seq (it takes the next seq; never after a terminal
        event).
    :ivar no_event_field_in_data: envelopes carry no ``"type"`` key; only the
        ``event:`` line names the type.

    When several tool-result faults are set, each POST uses up the first one
    that is not exhausted, in this order: errors, rate limiting, accept-then-drop.
    """

    drop_after: int | None = attrs.field(default=None, validator=_nonneg)
    drop_times: int = attrs.field(default=1, validator=_nonneg)
    stall_after: int | None = attrs.field(default=None, validator=_nonneg)
    stall_seconds: float = attrs.field(default=30.0, validator=_nonneg)
    replay_overlap: int = attrs.field(default=0, validator=_nonneg)
    duplicate_tool_calls: bool = False
    tool_result_errors: int = attrs.field(default=0, validator=_nonneg)
    tool_result_error_status: int = attrs.field(default=503, validator=_status)
    tool_result_accept_then_drop: int = attrs.field(default=0, validator=_nonneg)
    tool_result_rate_limited: int = attrs.field(default=0, validator=_nonneg)
    retry_after: float = attrs.field(default=0.0, validator=_nonneg)
    stream_open_errors: int = attrs.field(default=0, validator=_nonneg)
    stream_open_status: int = attrs.field(default=500, validator=_status)
    strip_event_lines: bool = False
    malformed_frame_after: int | None = attrs.field(default=None, validator=_nonneg)
    unknown_event_after: int | None = attrs.field(default=None, validator=_nonneg)
    no_event_field_in_data: bool = False

    @property
    def affects_frames(self) -> bool:
        """Whether the stream writer must look at every event one by one."""
        return (
            self.drop_after is not None
            or self.stall_after is not None
            or self.malformed_frame_after is not None
        )


class FaultState:
    """The counters a :class:`Faults` plan uses up during one run.

    Thread-safety: every method may be called from any thread.
    """

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self._lock = threading.Lock()
        self._left = {
            "drop": faults.drop_times if faults.drop_after is not None else 0,
            "stall": 1 if faults.stall_after is not None else 0,
            "malformed": 1 if faults.malformed_frame_after is not None else 0,
            "stream_open": faults.stream_open_errors,
            "error": faults.tool_result_errors,
            "rate_limited": faults.tool_result_rate_limited,
            "accept_then_drop": faults.tool_result_accept_then_drop,
        }

    def _take(self, kind: str) -> bool:
        """Use up one fault of ``kind``; ``False`` when none is left."""
        with self._lock:
            if self._left[kind] <= 0:
                return False
            self._left[kind] -= 1
            return True

    def take_stream_open_error(self) -> int | None:
        """The status to answer this stream GET with, or ``None`` to serve it."""
        return self.faults.stream_open_status if self._take("stream_open") else None

    def take_tool_result_fault(self) -> str | None:
        """``"error"``, ``"rate_limited"``, ``"accept_then_drop"`` or ``None``."""
        return next(
            (k for k in ("error", "rate_limited", "accept_then_drop") if self._take(k)), None
        )

    def should_drop(self, seq: int, resume_seq: int) -> bool:
        """Whether to cut the connection right after sending event ``seq``."""
        after = self.faults.drop_after
        return after is not None and after <= seq and resume_seq < seq and self._take("drop")

    def should_stall(self, seq: int) -> bool:
        """Whether to stall the connection right after sending event ``seq``."""
        after = self.faults.stall_after
        return after is not None and after <= seq and self._take("stall")

    def should_send_malformed(self, seq: int) -> bool:
        """Whether to send the one malformed frame right after event ``seq``."""
        after = self.faults.malformed_frame_after
        return after is not None and after <= seq and self._take("malformed")


@attrs.frozen(kw_only=True)
class RequestFault:
    """One ``fail_next`` rule (the arguments of :meth:`LocalMantyx.fail_next`, the
    method upper case, the path regex compiled)."""

    method: str
    path_pattern: re.Pattern[str]
    status: int
    body: Any = attrs.field(default=None, hash=False)
    headers: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    drop: bool = False
    applied: bool = False

    def __attrs_post_init__(self) -> None:
        if self.applied and not self.drop:
            raise ValueError("applied=True needs drop=True (the answer is what gets lost)")

    def matches(self, method: str, path: str) -> bool:
        """Whether this rule applies to a request."""
        return self.method in ("*", method) and self.path_pattern.search(path) is not None


class RequestFaults:
    """The queue of :class:`RequestFault` rules, each with a remaining count.

    Thread-safety: every method may be called from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[list[Any]] = []

    def add(self, rule: RequestFault, times: int) -> None:
        """Apply ``rule`` to the next ``times`` matching requests."""
        if times < 1:
            raise ValueError("LocalMantyx.fail_next(): times must be >= 1")
        with self._lock:
            self._rules.append([rule, times])

    def take(self, method: str, path: str) -> RequestFault | None:
        """Use up and return the oldest rule matching this request, if any."""
        with self._lock:
            for entry in self._rules:
                rule: RequestFault = entry[0]
                if rule.matches(method, path):
                    entry[1] -= 1
                    if entry[1] <= 0:
                        self._rules.remove(entry)
                    return rule
            return None
