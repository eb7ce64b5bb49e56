"""An in-memory transport: the client's requests handed straight to a WSGI app.

:class:`WSGITransport` fits ``mantyx_sync.Client(transport=...)``: each
request becomes a WSGI call of the app (the emulator's, or any other) on the
calling thread, with no socket at all. An event stream's body is produced on
a thread of its own and handed over chunk by chunk as it comes, so a run's
events keep flowing while its local tools post their results from other
threads, and a stream that stays quiet past its read timeout raises
:class:`TimeoutError` as a socket would.

What needs a real socket does not apply: the emulator's drop and stall
faults cut nothing (a dropped request answers ``500``, a dropped stream just
ends), and no connection can be refused. Test those over HTTP.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Protocol
from urllib.parse import urlsplit

from requests.structures import CaseInsensitiveDict

from .._base.argcheck import checked

__all__ = ["WSGITransport"]


class Request(Protocol):
    """The request the client hands a transport (``mantyx_sync.HttpRequest``)."""

    @property
    def method(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def body(self) -> bytes | Iterable[bytes] | None: ...
    @property
    def timeout(self) -> tuple[float, float]: ...


class _Response:
    """An answer: its body already whole (``send``), or read from the app by a
    pump thread as it is produced (``stream``)."""

    def __init__(
        self,
        status: int,
        headers: Mapping[str, str],
        body: Iterable[bytes],
        read_timeout: float | None,
    ) -> None:
        self.status = status
        self.headers = headers
        self._timeout = read_timeout
        self._chunks: queue.SimpleQueue[bytes | BaseException | None] = queue.SimpleQueue()
        self._closed = threading.Event()
        if read_timeout is None:
            self._pump(body)
        else:
            threading.Thread(
                target=self._pump, args=(body,), name="mantyx-wsgi-stream", daemon=True
            ).start()

    def _pump(self, body: Iterable[bytes]) -> None:
        try:
            for chunk in body:
                if self._closed.is_set():
                    break
                if chunk:
                    self._chunks.put(chunk)
        except BaseException as exc:  # the app failed mid-body: the reader sees a broken stream
            self._chunks.put(exc)
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
            self._chunks.put(None)

    def __iter__(self) -> Iterator[bytes]:
        while not self._closed.is_set():
            try:
                item = self._chunks.get(timeout=self._timeout)
            except queue.Empty:
                raise TimeoutError(f"no bytes for {self._timeout:g}s") from None
            if item is None or self._closed.is_set():
                return
            if isinstance(item, BaseException):
                raise ConnectionError("the app failed while sending the body") from item
            yield item

    def close(self) -> None:
        """End the body for its reader at once (any thread); the app's iterable
        is closed once it yields again or ends."""
        self._closed.set()
        self._chunks.put(None)


class WSGITransport:
    """A transport for ``mantyx_sync.Client(transport=...)`` that calls a WSGI app in memory.

    Example::

        srv = LocalMantyx(model=[Turn("hi")])
        client = srv.client(in_memory=True)  # Client(transport=WSGITransport(srv.app), ...)
        print(Agent(client, system_prompt="Be brief.").run("hello").text)

    :param app: the WSGI application, e.g. :attr:`LocalMantyx.app` (the server
        need not be started).

    Thread-safety: call it from any number of threads.

    .. versionadded:: 0.1.0
    """

    @checked(TypeError)
    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        # werkzeug builds the WSGI environ, as its own test client does.
        from werkzeug.test import EnvironBuilder, run_wsgi_app

        self._app = app
        self._builder = EnvironBuilder
        self._run = run_wsgi_app
        self._streams: weakref.WeakSet[_Response] = weakref.WeakSet()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<WSGITransport {self._app!r}>"

    def _call(self, request: Request) -> tuple[int, Mapping[str, str], Iterable[bytes]]:
        parts = urlsplit(request.url)
        body = request.body
        data = body if body is None or isinstance(body, bytes) else b"".join(body)
        environ = self._builder(
            path=parts.path,
            base_url=f"{parts.scheme}://{parts.netloc}",
            query_string=parts.query,
            method=request.method,
            headers=list(request.headers.items()),
            data=data,
        ).get_environ()
        app_iter, status, headers = self._run(self._app, environ, buffered=False)
        return int(status.split(" ", 1)[0]), CaseInsensitiveDict(headers.items()), app_iter

    def send(self, request: Request) -> _Response:
        """Call the app and read the whole body."""
        return _Response(*self._call(request), read_timeout=None)

    def stream(self, request: Request) -> _Response:
        """Call the app and hand its body over as it is produced."""
        streamed = _Response(*self._call(request), read_timeout=request.timeout[1])
        with self._lock:
            self._streams.add(streamed)
        return streamed

    def close(self) -> None:
        """End every open stream. Idempotent."""
        with self._lock:
            streams, self._streams = list(self._streams), weakref.WeakSet()
        for streamed in streams:
            streamed.close()
