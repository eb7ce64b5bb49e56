"""``a2a_local`` tools: an Agent2Agent peer that only this process can reach.

A connection remembers the ``contextId`` of the peer's latest reply and sends it
with the next message, so calls within one run (or one session, which keeps its
connections) continue one A2A conversation; a new connection starts a new one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

import attrs
import requests

from ._base.argcheck import checked, checked_init
from ._peers.a2a.client import A2AClient, A2AError, fetch_card
from ._peers.definition import OneTool, call_limit, check_headers, check_name, pairs
from .errors import ArgumentTypeError, SpecError, ToolError, ToolResolutionError
from .events import LocalToolCall

__all__ = ["A2AConnection", "LocalA2A", "define_local_a2a"]

logger: logging.Logger = logging.getLogger(__name__)

A2ASend = Callable[[str, Mapping[str, Any]], str]
"""Bring-your-own transport: ``send(message_text, agent_card)`` returns the reply text."""

INPUT_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
}


def _card(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else dict(value)


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True, eq=False)
class LocalA2A:
    """An ``a2a_local`` definition; see :func:`define_local_a2a`.

    Immutable and safe to share. ``headers`` values never appear in the repr.
    """

    kind: ClassVar[str] = "a2a_local"
    name: str
    url: str | None = None
    agent_card: dict[str, Any] | None = attrs.field(default=None, converter=_card, repr=False)
    headers: tuple[tuple[str, str], ...] | None = attrs.field(
        default=None, converter=pairs, repr=False
    )
    description: str | None = None
    send: A2ASend | None = attrs.field(default=None, repr=False)
    timeout: float = 60.0

    def connect(self) -> A2AConnection:
        """Resolve the Agent Card and prepare the client.

        :raises ToolResolutionError: the card cannot be fetched, or names no
            endpoint this client can speak to.
        """
        headers = dict(self.headers) if self.headers else None
        http = requests.Session()
        client = None
        try:
            card = self.agent_card
            if card is None:
                assert self.url is not None
                card = fetch_card(http, self.url, headers, timeout=self.timeout)
            if self.send is None:
                client = A2AClient(card, headers, http=http)
                logger.debug("a2a_local %r: speaking A2A %s", self.name, client.generation)
        except A2AError as exc:
            raise ToolResolutionError(f"a2a_local {self.name!r}: {exc}") from exc
        finally:
            if client is None:  # else the client owns the pool, and closes it
                http.close()
        return A2AConnection(self, card, client)


@checked(ArgumentTypeError)
def define_local_a2a(
    name: str,
    *,
    url: str | None = None,
    agent_card: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    description: str | None = None,
    send: A2ASend | None = None,
    timeout: float = 60.0,
) -> LocalA2A:
    """Define an A2A peer the model may delegate to, reached by this process.

    Give ``url`` (the peer's base URL, or the URL of its card JSON) and/or
    ``agent_card`` (the card itself: nothing is fetched). ``send`` replaces the
    built-in JSON-RPC client: ``send(message_text, agent_card) -> reply_text``.

    ::

        hr = define_local_a2a("intranet_hr", url="http://hr.intranet:9999",
                              headers={"Authorization": "Bearer ..."})

    :param name: the model-facing tool name, ``^[a-zA-Z0-9_]{1,64}$``.
    :param headers: sent with every request to the peer (values never logged).
    :param description: overrides the description MANTYX synthesises from the card.
    :param timeout: seconds for fetching the card and for each message.
    :raises SpecError: a bad name, header or combination.

    .. versionadded:: 0.1
    """
    check_name("a2a_local", name)
    if url is None and agent_card is None:
        raise SpecError(f"a2a_local {name!r}: give url= or agent_card=")
    if url is not None and not url.startswith(("http://", "https://")):
        raise SpecError(f"a2a_local {name!r}: url must be http:// or https://", path="url")
    check_headers("a2a_local", name, headers)
    if timeout <= 0:
        raise SpecError(f"a2a_local {name!r}: timeout must be positive")
    return LocalA2A(
        name=name,
        url=url,
        agent_card=agent_card,
        headers=headers,
        description=description,
        send=send,
        timeout=float(timeout),
    )


class A2AConnection(OneTool):
    """A resolved ``a2a_local`` peer (implements :class:`~mantyx_sync.tools.ToolConnection`).

    Thread-safe: calls may run concurrently; they share (and update) the
    conversation's ``contextId`` under a lock.
    """

    kind: str = "a2a_local"
    INPUT_SCHEMA: ClassVar[Mapping[str, Any]] = INPUT_SCHEMA

    def __init__(
        self, definition: LocalA2A, card: dict[str, Any], client: A2AClient | None
    ) -> None:
        self.name: str = definition.name
        self._definition = definition
        self._card = card
        self._client = client
        self._lock = threading.Lock()
        self._context_id: str | None = None

    @property
    def agent_card(self) -> Mapping[str, Any]:
        """The resolved Agent Card, verbatim."""
        return self._card

    @property
    def context_id(self) -> str | None:
        """The peer's latest ``contextId`` (sent with the next message)."""
        with self._lock:
            return self._context_id

    def wire_ref(self) -> dict[str, Any]:
        """The ``tools[]`` entry: ``{"kind", "name", "agentCard", "description"?}``."""
        ref: dict[str, Any] = {"kind": self.kind, "name": self.name, "agentCard": self._card}
        if self._definition.description is not None:
            ref["description"] = self._definition.description
        return ref

    def call(self, call: LocalToolCall, *, timeout: float | None) -> str:
        """Send ``args.message`` to the peer; returns its reply text.

        :raises ToolError: missing message, JSON-RPC error, failed or unfinished
            task, timeout, unreachable peer.
        """
        message = call.args.get("message")
        if not isinstance(message, str):
            raise ToolError('a2a_local tools take {"message": string}')
        if self._client is None:
            assert self._definition.send is not None
            return self._definition.send(message, self._card)
        limit = call_limit(self._definition.timeout, timeout)
        with self._lock:
            context_id = self._context_id
        try:
            text, new_context = self._client.send(message, context_id=context_id, timeout=limit)
        except A2AError as exc:
            raise ToolError(str(exc)) from exc
        if new_context is not None:
            with self._lock:
                self._context_id = new_context
        return text

    def close(self) -> None:
        """Release the HTTP connection pool. Idempotent."""
        if self._client is not None:
            self._client.close()
