"""A synchronous A2A client: Agent Card discovery and one-shot ``send``, in the
protocol line the card offers (1.0 when it offers both, as a2a-sdk 1.x does):

* **1.0**: method ``SendMessage``, header ``A2A-Version: 1.0``; the result wraps
  ``{"message": …}`` or ``{"task": …}``, task states read ``TASK_STATE_COMPLETED``.
* **0.3**: method ``message/send``, ``kind``-tagged message and parts; the result
  *is* the Message or Task, states read ``completed``. A card offering only gRPC
  or HTTP+JSON is refused.

The reply text comes from a Message's parts, or a completed Task's artifacts,
then its status message; never from ``history`` (which repeats the question).
"""

from __future__ import annotations

import json
import logging
import urllib.parse
import uuid
from collections.abc import Mapping
from typing import Any, Final

import requests

from ..._base.bounded import CHUNK, MAX_BODY_BYTES, BodyTooLarge, decode_json, read_capped
from ..._base.redact import display_url

__all__ = ["A2AClient", "A2AError", "fetch_card"]

logger = logging.getLogger(__name__)

_CONNECT_TIMEOUT_S: Final = 10.0


class A2AError(Exception):
    """The peer could not be reached, or answered something unusable; the message is safe."""


def card_urls(url: str) -> list[str]:
    """Where to look for a card: ``url`` itself if it names a JSON file, else the
    well-known ``agent-card.json`` then the older ``agent.json``."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith(".json"):
        return [url]
    # The well-known path goes on the path, before any query (which may carry a key).
    return [
        urllib.parse.urlunsplit(parts._replace(path=f"{path}/.well-known/{name}", fragment=""))
        for name in ("agent-card.json", "agent.json")
    ]


def fetch_card(
    http: requests.Session, url: str, headers: Mapping[str, str] | None, *, timeout: float
) -> dict[str, Any]:
    """GET the Agent Card, trying :func:`card_urls` in order.

    :raises A2AError: no candidate answered 200 with a JSON object (the message
        lists what was tried; never header values).
    """
    tried: list[str] = []
    for candidate in card_urls(url):
        try:
            resp = http.get(
                candidate,
                headers={**(headers or {}), "Accept": "application/json"},
                timeout=(_CONNECT_TIMEOUT_S, timeout),
                stream=True,
            )
        except requests.RequestException as exc:
            tried.append(f"{display_url(candidate)} ({type(exc).__name__})")
            continue
        with resp:
            if resp.status_code != 200:
                tried.append(f"{display_url(candidate)} (HTTP {resp.status_code})")
                continue
            try:
                card = _json_of(resp, "the Agent Card")
            except BodyTooLarge as exc:
                raise A2AError(f"{display_url(candidate)}: {exc}") from None
            except (ValueError, requests.RequestException):
                tried.append(f"{display_url(candidate)} (not JSON)")
                continue
        if isinstance(card, dict):
            return card
        tried.append(f"{display_url(candidate)} (not a JSON object)")
    raise A2AError("no Agent Card found; tried " + "; ".join(tried))


def _json_of(resp: requests.Response, what: str) -> Any:
    """A streamed answer's JSON body, read to the cap.

    :raises BodyTooLarge: past the cap (reading stopped there).
    :raises ValueError: not JSON.
    """
    return decode_json(read_capped(resp.iter_content(CHUNK), limit=MAX_BODY_BYTES, what=what))


def _one_or_later(version: Any) -> bool:
    """Whether ``version`` is a protocol version string of 1.x or later."""
    head = version.strip().lstrip("vV").split(".", 1)[0] if isinstance(version, str) else ""
    return head.isdigit() and int(head) >= 1


def select_interface(card: Mapping[str, Any]) -> tuple[str, str]:
    """``(generation, endpoint_url)`` for the card, generation ``"1.0"`` or ``"0.3"``.

    :raises A2AError: the card names no JSON-RPC endpoint.
    """
    interfaces = [
        i
        for i in card.get("supportedInterfaces") or ()
        if isinstance(i, dict)
        and isinstance(i.get("url"), str)
        and str(i.get("protocolBinding") or "JSONRPC").upper() == "JSONRPC"
    ]
    for iface in interfaces:
        if _one_or_later(iface.get("protocolVersion")):
            return "1.0", iface["url"]
    url = card.get("url")
    if _one_or_later(card.get("protocolVersion")):
        target = url if isinstance(url, str) else (interfaces[0]["url"] if interfaces else None)
        if target:
            return "1.0", target
    preferred = card.get("preferredTransport")
    if isinstance(url, str) and url:
        if preferred is None or str(preferred).upper() == "JSONRPC":
            return "0.3", url
        for extra in card.get("additionalInterfaces") or ():
            if (
                isinstance(extra, dict)
                and str(extra.get("transport") or "").upper() == "JSONRPC"
                and isinstance(extra.get("url"), str)
                and extra["url"]
            ):
                return "0.3", extra["url"]
        raise A2AError(
            f"the A2A peer offers no JSON-RPC interface (preferredTransport {preferred!r} "
            "and no JSONRPC entry in additionalInterfaces); this client speaks JSON-RPC only"
        )
    if interfaces:
        return "0.3", interfaces[0]["url"]
    raise A2AError("the Agent Card names no JSON-RPC endpoint (no 'url' or 'supportedInterfaces')")


def _parts_text(parts: Any) -> list[str]:
    out: list[str] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            out.append(part["text"])
        elif "data" in part:
            out.append(json.dumps(part["data"], ensure_ascii=False))
        elif "file" in part or "url" in part or "raw" in part:
            file_info = part.get("file")
            info = file_info if isinstance(file_info, dict) else part
            name = info.get("name") or info.get("filename") or ""
            mime = info.get("mimeType") or info.get("mediaType") or "unknown type"
            out.append(f"[file: {name} ({mime})]")
    return out


def extract_reply(result: Any) -> tuple[str, str | None]:
    """The reply text and ``contextId`` of a ``message/send`` / ``SendMessage`` result.

    :raises A2AError: a result that is neither a Message nor a Task, or a Task
        that did not complete (failed, rejected, canceled, input-required, still
        working, ...), with the peer's reason.
    """
    if not isinstance(result, dict):
        raise A2AError("the A2A peer returned a non-object result")
    if isinstance(result.get("message"), dict):
        kind, body = "message", result["message"]
    elif isinstance(result.get("task"), dict):
        kind, body = "task", result["task"]
    elif result.get("kind") in ("message", "task"):
        kind, body = result["kind"], result
    elif "status" in result:
        kind, body = "task", result
    elif "parts" in result:
        kind, body = "message", result
    else:
        raise A2AError("the A2A peer returned neither a Message nor a Task")
    context_id = body.get("contextId") if isinstance(body.get("contextId"), str) else None
    if kind == "message":
        return "\n".join(_parts_text(body.get("parts"))), context_id
    status = body.get("status")
    status = status if isinstance(status, dict) else {}
    # 1.0 spells TASK_STATE_INPUT_REQUIRED what 0.3 spells input-required.
    state = str(status.get("state") or "unknown").lower().removeprefix("task_state_")
    state = state.replace("_", "-")
    status_msg = status.get("message")
    parts = status_msg.get("parts") if isinstance(status_msg, dict) else None
    status_text = "\n".join(_parts_text(parts))
    if state != "completed":
        raise A2AError(f"A2A task {state}: {status_text}" if status_text else f"A2A task {state}")
    texts: list[str] = []
    for artifact in body.get("artifacts") or ():
        if isinstance(artifact, dict):
            texts.extend(_parts_text(artifact.get("parts")))
    return ("\n".join(texts) if texts else status_text), context_id


class A2AClient:
    """Talks to one A2A peer over JSON-RPC.

    Thread-safe: each :meth:`send` is an independent request on the ``http`` pool.

    :param card: the resolved Agent Card.
    :param headers: extra headers for every request (values never logged).
    :param http: the connection pool, closed by :meth:`close`.
    """

    def __init__(
        self, card: Mapping[str, Any], headers: Mapping[str, str] | None, *, http: requests.Session
    ) -> None:
        self.generation: str
        self.endpoint: str
        self.generation, self.endpoint = select_interface(card)
        self._headers = dict(headers or {})
        self._http = http

    def send(self, text: str, *, context_id: str | None, timeout: float) -> tuple[str, str | None]:
        """Send ``text`` as a user message; returns ``(reply_text, context_id)``.

        :raises A2AError: transport failure, HTTP error, JSON-RPC error or failed task.
        """
        headers = {
            **self._headers,
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        message: dict[str, Any] = {"messageId": str(uuid.uuid4())}
        if self.generation == "1.0":
            method = "SendMessage"
            headers["A2A-Version"] = "1.0"
            message.update(role="ROLE_USER", parts=[{"text": text}])
        else:
            method = "message/send"
            message.update(kind="message", role="user", parts=[{"kind": "text", "text": text}])
        if context_id is not None:
            message["contextId"] = context_id
        body = {
            "jsonrpc": "2.0",
            "id": str(uuid.uuid4()),
            "method": method,
            "params": {"message": message},
        }
        try:
            resp = self._http.post(
                self.endpoint,
                data=json.dumps(body).encode("utf-8"),
                headers=headers,
                timeout=(_CONNECT_TIMEOUT_S, timeout),
                stream=True,
            )
        except requests.Timeout as exc:
            raise A2AError(f"the A2A peer did not answer within {timeout} s") from exc
        except requests.RequestException as exc:
            raise A2AError(f"the A2A peer is unreachable ({type(exc).__name__})") from exc
        with resp:
            try:
                payload = _json_of(resp, "the A2A peer's answer")
            except BodyTooLarge as exc:
                raise A2AError(str(exc)) from None
            except requests.RequestException as exc:
                raise A2AError(f"the A2A peer's answer broke off ({type(exc).__name__})") from exc
            except ValueError:
                payload = None
            error = payload.get("error") if isinstance(payload, dict) else None
            if isinstance(error, dict):
                code = error.get("code")
                code = code if isinstance(code, int) else 0
                raise A2AError(f"A2A error {code}: {error.get('message', '')}")
            if resp.status_code >= 400 or not isinstance(payload, dict):
                raise A2AError(f"the A2A peer answered HTTP {resp.status_code}")
        logger.debug("A2A %s -> %s", method, display_url(self.endpoint))
        return extract_reply(payload.get("result"))

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._http.close()
