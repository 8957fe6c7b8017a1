"""One incremental crawl's selection of known URLs (made once, at its first use) and how it enters
the crawl: before the spider's start requests (:func:`start_with_due`, called by the spider
middleware), from the spider itself (:func:`due_requests`, :class:`IncrementalSpiderMixin`), or
as a report (:func:`due_report`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.link import Link
from scrapy.spiders import CrawlSpider

from scrapy_simhash.decision.selection import run_period
from scrapy_simhash.decision.tracker import ChangeTracker, DueRow
from scrapy_simhash.scrapy.component import canonical_key
from scrapy_simhash.scrapy.settings import load_clock, load_policy
from scrapy_simhash.scrapy.state import CrawlState, Selection
from scrapy_simhash.setting_values import get_int

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping

    from scrapy import Spider
    from scrapy.settings import BaseSettings

    from scrapy_simhash.store.index import SimhashIndex

__all__ = ["IncrementalSpiderMixin", "due_report", "due_requests"]


def _selection(state: CrawlState, tracker: ChangeTracker) -> Selection:
    """The crawl's :class:`Selection`, made on first use: :meth:`ChangeTracker.selection` at the
    crawl's clock with `SIMHASH_RECRAWL_BUDGET` (a store error: an empty one, counted, marked failed)."""
    selection = state.selection_of(tracker)
    if selection is None:
        rows: list[DueRow] = []
        next_due = None
        failed = False
        try:
            now = tracker.clock()
            period = run_period(tracker.index, now, record=True)
            rows = tracker.selection(now, state.config.recrawl_budget, period)
            if not rows:
                first = tracker.index.records_due(math.inf, limit=1)
                next_due = first[0][1] if first else None
        except Exception as exc:  # noqa: BLE001 - fail open: the crawl goes on without a selection
            state.store_error("(recrawl selection)", exc)
            failed = True
        selection = state.selection = Selection(tracker, rows, next_due, failed)
    return selection


def check_at_start(state: CrawlState) -> None:
    """At the start of an incremental crawl, read the whole index once (:meth:`SimhashIndex.check`):
    a damaged one raises its store error and stops the crawl, which would otherwise select
    nothing, or treat the known URLs it cannot read as new."""
    tracker = state.page.tracker if state.page is not None else None
    if state.config.incremental and tracker is not None:
        tracker.index.check()


def crawl_selection(state: CrawlState, tracker: ChangeTracker) -> dict[str, float]:
    """The keys of the known URLs this crawl fetches, with their priorities (see
    :meth:`ChangeTracker.selection`), made once per crawl."""
    return _selection(state, tracker).priorities


def due_requests(
    spider: Spider, *, callback: Callable[..., Any] | None = None, limit: int | None = None
) -> list[Request]:
    """Requests for the known URLs this crawl fetches (its selection: the due URLs, or with
    `SIMHASH_RECRAWL_BUDGET` the most valuable ones up to it), in that order, at most ``limit``;
    ``[]`` outside incremental mode or without an index. The spider middleware puts them before
    the spider's start requests by itself; a spider that yields them from its own ``start`` /
    ``start_requests`` (for a callback of its own, or another order) gets them instead."""
    crawler = getattr(spider, "crawler", None)
    state = CrawlState.of(crawler) if crawler is not None else None
    if state is None or state.page is None or not state.config.incremental:
        return []
    tracker = state.tracker()
    if tracker is None:
        return []
    selection = _selection(state, tracker)
    selection.seeded = True
    rows = selection.rows if limit is None else selection.rows[: max(limit, 0)]
    return [_request(spider, row.key, callback) for row in rows if row.key.startswith(("http://", "https://"))]


def _request(spider: Spider, url: str, callback: Callable[..., Any] | None) -> Request:
    """The request for a selected known URL: to ``callback``; without one, on a ``CrawlSpider``,
    as its first rule whose link extractor matches the URL would build it (so that the rule's
    callback gives the page's items), else to the spider's ``parse``."""
    if callback is None and isinstance(spider, CrawlSpider):
        build = getattr(spider, "_build_request", None)
        for index, rule in enumerate(getattr(spider, "_rules", ()) or ()):
            matches = getattr(rule.link_extractor, "matches", None)
            if build is not None and matches is not None and matches(url):
                request = build(index, Link(url))
                if isinstance(request, Request):
                    return request
    return Request(url, callback=callback)


def _start_due(state: CrawlState | None, spider: Spider | None) -> list[Request]:
    """The selection's requests that the spider middleware puts first, unless the spider yielded
    :func:`due_requests` itself: not its ``start_urls`` (its own start requests fetch those)."""
    if state is None or spider is None or state.page is None or not state.config.incremental:
        return []
    tracker = state.tracker()
    if tracker is None or _selection(state, tracker).seeded:
        return []
    own = {canonical_key(url) for url in getattr(spider, "start_urls", ()) or ()}
    return [request for request in due_requests(spider) if canonical_key(request.url) not in own]


def start_with_due(state: CrawlState | None, start: Iterable[Any], spider: Spider | None) -> Iterator[Any]:
    """``start`` (a spider's start requests, Scrapy < 2.13) after the crawl's selected known URLs
    (:func:`due_requests`), so that any spider refetches them: one whose start page answers 304
    finds no link to them. The spider's first start request is read first: a spider that yields
    :func:`due_requests` itself gets them from there, once."""
    iterator = iter(start)
    first = next(iterator, _END)
    yield from _start_due(state, spider)
    if first is not _END:
        yield first
        yield from iterator


async def start_with_due_async(
    state: CrawlState | None, start: AsyncIterator[Any], spider: Spider | None
) -> AsyncIterator[Any]:
    """:func:`start_with_due` for Scrapy >= 2.13's ``start``."""
    iterator = start.__aiter__()
    try:
        first = await iterator.__anext__()
    except StopAsyncIteration:
        first = _END
    for request in _start_due(state, spider):
        yield request
    if first is not _END:
        yield first
        async for obj in iterator:
            yield obj


_END = object()


class IncrementalSpiderMixin:
    """Optional (any spider gets the selected URLs by itself): put first in a spider's bases, its
    start requests begin with :func:`due_requests` (``start`` on Scrapy >= 2.13,
    ``start_requests`` before), then the spider's own."""

    _simhash_due_sent = False

    def _simhash_due(self) -> list[Request]:
        if self._simhash_due_sent:
            return []
        self._simhash_due_sent = True
        return due_requests(self)  # type: ignore[arg-type]

    async def start(self) -> AsyncIterator[Any]:
        for request in self._simhash_due():
            yield request
        parent = getattr(super(), "start", None)
        if parent is not None:
            async for obj in parent():
                yield obj
        else:  # Scrapy < 2.13 does not call start()
            for obj in self._start_urls():
                yield obj

    def start_requests(self) -> Iterator[Any]:
        yield from self._simhash_due()
        parent = getattr(super(), "start_requests", None)
        yield from parent() if parent is not None else self._start_urls()  # Scrapy >= 2.14 has none

    def _start_urls(self) -> Iterator[Request]:
        for url in getattr(self, "start_urls", ()):
            yield Request(url, dont_filter=True)


def due_report(
    index: SimhashIndex,
    settings: BaseSettings | Mapping[str, Any] | None = None,
    *,
    now: float | None = None,
    limit: int | None = None,
) -> list[tuple[str, float, float]]:
    """``(url, due, priority)`` of the known URLs an incremental crawl at ``now`` (default: the
    clock of ``settings``) fetches, in its order (:meth:`ChangeTracker.selection`): the due ones,
    most valuable first, ranked by the policy of ``settings`` (the project's), or with its
    `SIMHASH_RECRAWL_BUDGET` the most valuable ones up to it, due or not; at most ``limit``."""
    from scrapy.settings import BaseSettings, Settings

    if not isinstance(settings, BaseSettings):
        settings = Settings(dict(settings or {}))
    tracker = ChangeTracker(index, policy=load_policy(settings), clock=load_clock(settings))
    now = tracker.clock() if now is None else now
    rows = tracker.selection(now, get_int(settings, "SIMHASH_RECRAWL_BUDGET", 0), run_period(index, now))
    return [(row.key, row.due, row.priority) for row in rows[:limit]]
