"""CrawlState: what the Scrapy components of one crawler share (its settings, the spider
middleware's index and tracker, the crawl's selection), kept on the crawler.

It imports none of the components; they import it. Scrapy glue only; private to the package.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Protocol

from scrapy_simhash.scrapy.settings import load_config, reported_at_startup, warn_unknown_settings

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from scrapy_simhash.decision.tracker import ChangeTracker, DueRow
    from scrapy_simhash.scrapy.settings import SimhashConfig

__all__ = ["CrawlState", "PageMiddleware", "Selection", "get_config"]

#: The crawler attribute that holds its state.
STATE_ATTR = "scrapy_simhash_state"


class PageMiddleware(Protocol):
    """The crawl's ``SimhashSpiderMiddleware`` as the state uses it for the other components."""

    tracker: ChangeTracker | None
    observers: list[Any]
    _spider: Spider | None
    _disabled: bool
    _itemless: set[str]

    def _ready(self) -> bool: ...

    def _store_error(self, key: str, exc: BaseException) -> None: ...


class Selection:
    """One crawl's selection of known URLs, made from one tracker: its rows in order, their
    priorities by key, whether the spider asked for them, and when it is empty the earliest due
    time in the index then (``None``: none)."""

    def __init__(
        self, tracker: ChangeTracker, rows: list[DueRow], next_due: float | None = None, failed: bool = False
    ) -> None:
        self._tracker = weakref.ref(tracker)
        self.rows = rows
        self.priorities = {row.key: row.priority for row in rows}
        self.seeded = False
        self.next_due = next_due
        #: The index could not be read to make it (a store error, logged): it is empty.
        self.failed = failed

    def made_by(self, tracker: ChangeTracker) -> bool:
        """Whether ``tracker`` (the crawl's, while its index is open) made this selection."""
        return self._tracker() is tracker


class CrawlState:
    """What the Scrapy components of one crawler share. :meth:`of` gives the crawler's, made on
    first use; the spider middleware sets :attr:`page`, the selection sets :attr:`selection`."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        #: The crawl's spider middleware (``None``: it is not enabled): its index is the crawl's.
        self.page: PageMiddleware | None = None
        #: The crawl's selection of known URLs (``None``: not made yet).
        self.selection: Selection | None = None
        self._config: SimhashConfig | None = None

    @classmethod
    def of(cls, crawler: Crawler) -> CrawlState:
        """The crawler's state, made and kept on the crawler at the first call."""
        state = getattr(crawler, STATE_ATTR, None)
        if not isinstance(state, cls):
            state = cls(crawler)
            setattr(crawler, STATE_ATTR, state)
        return state

    @property
    def config(self) -> SimhashConfig:
        """The crawler's validated settings, read once (unknown names warned about once); a bad
        value is reported as one line (:func:`reported_at_startup`) and raised."""
        if self._config is None:
            settings = self.crawler.settings
            with reported_at_startup():
                config = load_config(settings)
            warn_unknown_settings(settings)
            self._config = config
        return self._config

    def tracker(self) -> ChangeTracker | None:
        """The spider middleware's tracker over its open index, opened now if no signal did
        (``None``: no spider middleware, or no open index)."""
        page = self.page
        if page is None or not page._ready():
            return None
        return page.tracker

    @property
    def page_disabled(self) -> bool:
        """Whether the spider opted out of the spider middleware (``simhash_enabled = False``)."""
        return self.page is not None and self.page._disabled

    @property
    def spider(self) -> Spider | None:
        """The spider of the spider middleware's index, for the log lines."""
        return self.page._spider if self.page is not None else None

    def itemless(self, key: str) -> bool:
        """Whether ``key`` is a start page this crawl found new whose fetch gave no item."""
        return self.page is not None and key in self.page._itemless

    def observe(self, observer: Any) -> None:
        """Tell ``observer`` every verdict of the spider middleware (once, however often asked)."""
        if self.page is not None and observer not in self.page.observers:
            self.page.observers.append(observer)

    def selection_of(self, tracker: ChangeTracker) -> Selection | None:
        """The selection ``tracker`` made in this crawl (``None``: none yet)."""
        selection = self.selection
        return selection if selection is not None and selection.made_by(tracker) else None

    def store_error(self, key: str, exc: BaseException) -> bool:
        """Count and log a failed index read or write as the spider middleware does; False when
        there is no spider middleware to count it."""
        if self.page is None:
            return False
        self.page._store_error(key, exc)
        return True


def get_config(crawler: Crawler) -> SimhashConfig:
    """The crawler's validated settings (:attr:`CrawlState.config`)."""
    return CrawlState.of(crawler).config
