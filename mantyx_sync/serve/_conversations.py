"""Protocol conversation ids (A2A ``contextId``, Agent API ``session_id``) → MANTYX sessions.

An id belongs to the caller that sent it (as ``authenticate`` names it), so no caller
reaches another's history. Past ``max_sessions`` of one caller, that caller's least
recently used conversation is evicted and its session ended on the server (which
cancels a run still going in it): a busy caller never pushes out anyone else's.
MANTYX runs one message of a session at a time, so a second message waits its turn.
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import Final

from ..agent import Agent
from ..errors import MantyxError
from ..run import Run
from ..session import Session
from ._wsgi import loggable

__all__ = ["Conversations", "Turn"]

log = logging.getLogger(__name__)

BUSY_WAIT_S: Final = 120.0


class ConversationBusy(MantyxError):
    """A conversation's previous message is still running after the wait."""


class _Conversation:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.turn_lock = threading.Lock()


class Turn:
    """One message's run, holding its conversation until :meth:`finish`."""

    def __init__(self, run: Run, release: threading.Lock | None) -> None:
        self.run = run
        self._release = release

    def finish(self) -> None:
        """Let the conversation's next message start (called once: when the run's pump ends)."""
        if self._release is not None:
            self._release.release()


class Conversations:
    """Per caller, an LRU map of conversation ids to MANTYX sessions (thread-safe)."""

    def __init__(self, agent: Agent, *, stateless: bool, max_sessions: int) -> None:
        # max_sessions >= 1: ServedApp refuses anything else before building this.
        self._agent = agent
        self._stateless = stateless
        self._max = max_sessions
        self._lock = threading.Lock()
        self._open: dict[str, collections.OrderedDict[str, _Conversation]] = {}
        self._creating: dict[tuple[str, str], threading.Lock] = {}

    def __len__(self) -> int:
        with self._lock:
            return sum(len(mine) for mine in self._open.values())

    def session_id(self, key: str, caller: str = "") -> str | None:
        """The MANTYX session id of ``caller``'s conversation ``key``, if it is open."""
        with self._lock:
            conversation = self._open.get(caller, collections.OrderedDict()).get(key)
            return conversation.session.id if conversation else None

    def start(self, caller: str, key: str, prompt: str) -> Turn:
        """Start the MANTYX run for one message of ``caller``'s conversation ``key``.

        :raises ConversationBusy: the conversation's previous run did not end in time.
        :raises MantyxError: the session or run could not be created.
        """
        if self._stateless:
            return Turn(self._agent.start(prompt), None)
        conversation = self._get(caller, key)
        if not conversation.turn_lock.acquire(timeout=BUSY_WAIT_S):
            raise ConversationBusy(f"conversation {key!r} is still answering a previous message")
        try:
            return Turn(conversation.session.start(prompt), conversation.turn_lock)
        except BaseException:
            conversation.turn_lock.release()
            raise

    def _get(self, caller: str, key: str) -> _Conversation:
        with self._lock:
            found = self._touch_locked(caller, key)
            if found is not None:
                return found
            creating = self._creating.setdefault((caller, key), threading.Lock())
        # Sessions are created outside the pool lock (an HTTP call), once per key.
        with creating:
            with self._lock:
                found = self._touch_locked(caller, key)
                if found is not None:
                    return found
            try:
                conversation = _Conversation(self._agent.session())
            except BaseException:
                with self._lock:
                    self._creating.pop((caller, key), None)  # a later message tries again
                raise
            with self._lock:
                mine = self._open.setdefault(caller, collections.OrderedDict())
                mine[key] = conversation
                self._creating.pop((caller, key), None)
                evicted = [mine.popitem(last=False) for _ in range(len(mine) - self._max)]
        for old_key, old in evicted:
            log.info(
                "conversation %s evicted; ending session %s", loggable(old_key), old.session.id
            )
            self._end(old)
        return conversation

    def _touch_locked(self, caller: str, key: str) -> _Conversation | None:
        mine = self._open.get(caller, collections.OrderedDict())
        if key in mine:
            mine.move_to_end(key)
        return mine.get(key)

    @staticmethod
    def _end(conversation: _Conversation) -> None:
        try:
            conversation.session.end()
        except MantyxError as exc:
            log.warning("could not end session %s: %s", conversation.session.id, exc)

    def close(self) -> None:
        """End every open session."""
        with self._lock:
            open_ = [each for mine in self._open.values() for each in mine.values()]
            self._open.clear()
        for conversation in open_:
            self._end(conversation)
