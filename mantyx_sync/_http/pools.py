"""The ``requests`` sessions behind the transport: built once per process, closed for good."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sized
from typing import cast

import requests
import requests.utils

from ..config import is_loopback
from .deadline import DeadlineAdapter

__all__ = ["adapter_verify", "close_session", "new_session", "prepare"]

_POOL_SIZE = 64


def prepare(
    method: str, url: str, headers: Mapping[str, str], body: bytes | Iterable[bytes] | None
) -> requests.PreparedRequest:
    prepared = requests.PreparedRequest()
    prepared.method = method
    prepared.url = url
    # A plain dict: the adapter and urllib3 only iterate it and look up
    # "Content-Length", which is written here in that case.
    sent = dict(headers)
    if body is not None or method in ("POST", "PUT", "PATCH"):
        # Every body the client builds knows its length (bytes, or a StreamedBody).
        sent["Content-Length"] = str(len(cast(Sized, body or b"")))
    prepared.headers = sent  # type: ignore[assignment]
    # The adapter sends any iterable body (a StreamedBody: files encoded as it goes);
    # requests' stubs only name bytes and str.
    prepared.body = body  # type: ignore[assignment]
    prepared.hooks = {"response": []}
    return prepared


def adapter_verify(session: requests.Session, url: str) -> bool | str:
    """The session's ``verify``, except ``True`` for a plain ``http://`` URL sent
    without a proxy: urllib3 drops every TLS setting there, while requests would
    still ``stat`` a bundle path on every request (``os.path.isdir`` in
    ``requests.adapters._urllib3_request_context``) — ~10 µs and one more
    release of the GIL per tool result (benchmarks/README.md).
    """
    verify = True if session.verify is None else session.verify
    if verify is not True and not session.proxies and url.startswith("http://"):
        return True
    return verify


def close_session(session: requests.Session) -> None:
    """Close ``session`` and every connection pool it made.

    ``Session.close()`` alone only forgets urllib3's pools: their idle sockets
    stay open until garbage collection, and a request still in flight returns
    its connection to a pool nobody closes. A closed pool closes its idle
    connections now and any connection handed back to it later.
    """
    adapters = {id(adapter): adapter for adapter in session.adapters.values()}
    for adapter in adapters.values():
        managers = [getattr(adapter, "poolmanager", None)]
        managers.extend(getattr(adapter, "proxy_manager", {}).values())
        for manager in managers:
            pools = getattr(manager, "pools", None)
            if pools is None:
                continue
            for key in list(pools.keys()):
                pool = pools.get(key)
                if pool is not None:
                    pool.close()
    session.close()


def new_session(base_url: str) -> requests.Session:
    session = requests.Session()
    # Exactly one retry layer (ours): the adapter itself never retries. Its
    # connections hold each request to its deadline (deadline.py).
    adapter = DeadlineAdapter(pool_connections=4, pool_maxsize=_POOL_SIZE, max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    # The environment's proxy and CA settings are read once per session (per
    # process after a fork), not on every request: with trust_env, requests
    # scans os.environ and stats ~/.netrc for each call, the largest single
    # cost of posting a tool result (benchmarks/README.md). The session only
    # ever talks to base_url, so its proxies (NO_PROXY applied) are fixed; a
    # server on this machine (the local emulator) is never reached through one.
    session.trust_env = False
    if not is_loopback(base_url):  # a proxy cannot reach this machine's own servers
        session.proxies.update(requests.utils.get_environ_proxies(base_url))
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle:
        session.verify = bundle
    return session
