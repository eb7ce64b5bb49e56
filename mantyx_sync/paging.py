"""Cursor paging of list routes: a lazy :class:`Listing` that follows ``nextCursor``.

A list body is ``{<key>: [...], "nextCursor": ..., "total": ...}`` for every
list route. The client hands :func:`paged` a ``get(params) -> body`` callable,
so this module knows no HTTP.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, Generic, TypeVar

import attrs

from ._base.handout import handed_out
from ._models.checks import check_text
from ._models.wire import WireFormatError, camel
from .errors import SpecError

__all__ = ["Listing"]

T = TypeVar("T")

Getter = Callable[[Mapping[str, Any]], Any]
"""``get(params) -> JSON body``: one page of a list route, retried as safe."""

LIST_LIMIT_MAX: Final = 200
"""The largest page size ``GET /agent-runs`` and ``GET /agent-sessions`` accept."""


@attrs.frozen
class Page(Generic[T]):
    items: tuple[T, ...]
    next_cursor: str | None
    total: int | None


def int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def page_of(body: Any, key: str, build: Callable[[Mapping[str, Any]], T]) -> Page[T]:
    if not isinstance(body, Mapping):
        raise WireFormatError(f"expected a JSON object with {key!r}, got {type(body).__name__}")
    items = body.get(key)
    if not isinstance(items, list):
        raise WireFormatError(f"the list body has no {key!r} array")
    cursor = body.get("nextCursor")
    return Page(
        tuple(build(item) for item in items),
        cursor if isinstance(cursor, str) and cursor else None,
        int_or_none(body.get("total")),
    )


@handed_out("Runs.list, Sessions.list, Feedbacks.list and Evals.list return one")
class Listing(Generic[T]):
    """A lazy, single-pass iterator over a paged list, following ``nextCursor``.

    Nothing is fetched until it is iterated (or :attr:`total` is read); each
    further page is fetched only when iteration reaches it, one request per
    page. Iteration stops at the last page or after ``max_items`` items.

    Thread-safety: iterate from one thread.

    Example::

        for run in client.runs.list(status="failed", max_items=20):
            print(run.id, run.error)
    """

    def __init__(
        self,
        fetch: Callable[[str | None], Page[T]],
        *,
        max_items: int | None = None,
    ) -> None:
        self._fetch = fetch
        self._first: Page[T] | None = None
        # islice stops at max_items without asking for more: no page past it is fetched.
        self._items = itertools.islice(self._iterate(), max_items)

    def __repr__(self) -> str:
        total = "" if self._first is None else f" total={self._first.total}"
        return f"<Listing{total}>"

    @property
    def total(self) -> int | None:
        """How many items match, when the server counted them (``include_total``).

        Reading it before iterating fetches the first page (which iteration
        then reuses); ``None`` when the server sent no count.
        """
        return self._first_page().total

    def _first_page(self) -> Page[T]:
        if self._first is None:
            self._first = self._fetch(None)
        return self._first

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        return next(self._items)

    def _iterate(self) -> Iterator[T]:
        page = self._first_page()
        seen_cursors: set[str] = set()
        while True:
            yield from page.items
            cursor = page.next_cursor
            if cursor is None:
                return
            if cursor in seen_cursors:
                raise WireFormatError(f"the server repeated the cursor {cursor!r}; stopping")
            seen_cursors.add(cursor)
            page = self._fetch(cursor)


def filters(**given: str | None) -> dict[str, Any]:
    """A list route's text filters as its query (``agent_id=`` -> ``agentId``), each a
    non-empty string; ``None`` leaves one out.

    :raises SpecError: a filter is not a non-empty string (named by its argument).
    """
    return {camel(name): check_text(v, name) for name, v in given.items() if v is not None}


def check_positive(value: Any, path: str) -> int | None:
    if value is not None and (int_or_none(value) is None or value < 1):
        raise SpecError(f"must be a positive integer or None, got {value!r}", path=path)
    return int_or_none(value)


def paged(
    get: Getter,
    params: Mapping[str, Any],
    key: str,
    build: Callable[[Any], T],
    *,
    limit: int | None = None,
    max_items: int | None = None,
    offset: int | None = None,
) -> Listing[T]:
    """A :class:`Listing` of the ``key`` array of ``get``'s pages, chained by ``cursor``,
    or, given an ``offset`` (the route pages by ``limit``/``offset``), from that
    offset on until a page comes back short.

    :raises SpecError: ``limit``, ``max_items`` or ``offset`` is out of range (nothing is sent).
    """
    query = dict(params)
    check_positive(max_items, "max_items")
    if offset is not None and (int_or_none(offset) is None or offset < 0):
        raise SpecError(f"must be a non-negative integer, got {offset!r}", path="offset")
    if limit is not None:
        if int_or_none(limit) is None or not 1 <= limit <= LIST_LIMIT_MAX:
            raise SpecError(
                f"must be an integer from 1 to {LIST_LIMIT_MAX}, got {limit!r}", path="limit"
            )
        query["limit"] = limit
    elif max_items is not None:
        # Without a page size, a small max_items need not fetch a whole default page.
        query["limit"] = min(max_items, LIST_LIMIT_MAX)

    def fetch(cursor: str | None) -> Page[T]:
        sent = query if cursor is None else {**query, "cursor": cursor}
        return page_of(get(sent), key, build)

    def fetch_at(cursor: str | None) -> Page[T]:
        at = int(cursor) if cursor is not None else offset or 0
        body = get({**query, "offset": at})
        page = page_of(body, key, build)
        size = int_or_none(body.get("limit")) or query.get("limit") or len(page.items)
        more = bool(page.items) and len(page.items) >= size
        return Page(page.items, str(at + len(page.items)) if more else None, page.total)

    return Listing(fetch if offset is None else fetch_at, max_items=max_items)
