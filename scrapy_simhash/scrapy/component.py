"""IndexComponent: what the spider middleware and the item pipeline share (their index, stats and logging).

Scrapy glue only; private to the package.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar

from w3lib.url import canonicalize_url

from scrapy_simhash.scrapy.settings import spider_opted_out, spider_wants_reset

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.fingerprint.simhash import Fingerprinter
    from scrapy_simhash.scrapy.settings import SimhashConfig
    from scrapy_simhash.store.base import FingerprintStore
    from scrapy_simhash.store.index import SimhashIndex

_NO_MORE_DUPLICATES = " - no more duplicates will be shown (see SIMHASH_DEBUG to show all duplicates)"


def canonical_key(value: str) -> str:
    """The index key of a URL, for every component and the command: ``value`` canonicalised
    (w3lib ``canonicalize_url``) if it is an http(s) URL, else unchanged (``simhash_key``, ids)."""
    if value.startswith(("http://", "https://")):
        return canonicalize_url(value)
    return value


class IndexComponent:
    """A Scrapy component that owns one index below ``<SIMHASH_DIR>/<spider.name>/``.

    Opens it (on the first use if no signal did), counts stats under ``_stats_prefix`` and logs
    with the subclass module's ``_logger``: the first duplicate at INFO, then DEBUG unless
    `SIMHASH_DEBUG`; the first error at WARNING, then DEBUG. Store failures fail open.
    """

    _logger: ClassVar[logging.Logger]
    _stats_prefix: ClassVar[str]  # "simhash/" or "simhash/items/"
    _index_dir: ClassVar[str]  # "pages" or "items"
    _label: ClassVar[str]  # "simhash" or "simhash item": in "Could not close the <label> index"
    _unit: ClassVar[str]  # "page" or "item": in "<label> store error ...; the <unit> is treated as new"
    _open_error: ClassVar[str]  # logged when a lazy open fails
    _opt_out_message: ClassVar[str | None] = None  # INFO when the spider opts out (%(spider)s: its name)
    _reset_message: ClassVar[str | None] = None  # INFO when a reset deleted the index (%(path)s)

    def __init__(
        self,
        config: SimhashConfig,
        fingerprinter: Fingerprinter,
        stats: StatsCollector | None = None,
        crawler: Crawler | None = None,
    ) -> None:
        self.config = config
        self.fingerprinter = fingerprinter
        self.stats = stats
        self.crawler = crawler
        self.index: SimhashIndex | None = None
        #: The decision class over the index (the only thing that calls the store per page).
        self.tracker: ChangeTracker | None = None
        self.path: Path | None = None
        #: Where the open index is, for the log lines: the store's own location (the LMDB
        #: directory; the Redis URL and key prefix), or ``memory``.
        self.location: str | None = None
        self._spider: Spider | None = None
        self._disabled = False  # the spider opted out
        self._open_failed = False
        self._duplicates_logged = 0
        self._errors_logged = 0
        self._error_kinds: set[str] = set()
        self._setup()

    def _setup(self) -> None:
        """The subclass's checks and state, at the end of ``__init__``."""

    def open(self, spider: Spider) -> None:
        """Open the spider's index (``<SIMHASH_DIR>/<spider.name>/<pages|items>``); idempotent.

        Reads `SIMHASH_RESET` (or the spider attribute ``simhash_reset``) and the index settings.
        """
        if self.index is not None or self._disabled:
            return
        self._spider = spider
        if spider_opted_out(spider):
            self._disabled = True
            if self._opt_out_message is not None:
                self._logger.info(self._opt_out_message, {"spider": spider.name}, extra={"spider": spider})
            return
        from scrapy_simhash.decision.tracker import ChangeTracker
        from scrapy_simhash.store.index import SimhashIndex

        if self.crawler is None:
            raise ValueError(f"{type(self).__name__} needs a crawler: build it with from_crawler()")
        path = self.config.spider_dir(spider) / self._index_dir
        store = self.config.store_cls.from_crawler(self.crawler, path)
        if spider_wants_reset(self.config, spider):
            self._reset(store, spider)
        self.index = SimhashIndex(store, fingerprint_settings=self.fingerprinter.settings, **self.config.index_kwargs())
        self.path = path
        self.location = "memory" if self.index.path is None else str(self.index.path)
        self.tracker = ChangeTracker(self.index, **self.config.tracker_kwargs())
        self._log_opened(spider, self.index)

    def _log_opened(self, spider: Spider, index: SimhashIndex) -> None:
        raise NotImplementedError

    def _reset(self, store: FingerprintStore, spider: Spider) -> None:
        """Delete the index for a reset and log ``_reset_message`` if there was one. Only what
        the store can read as its index is deleted: anything else raises, saying so."""
        from scrapy_simhash.errors import NotAnIndexError

        try:
            deleted = store.destroy()
        except NotAnIndexError as exc:
            reset = "A reset (SIMHASH_RESET, -a simhash_reset) deletes only an index it can read."
            raise NotAnIndexError(f"{exc} {reset}") from None
        if deleted and self._reset_message is not None and store.path is not None:
            self._logger.info(self._reset_message, {"path": store.path}, extra={"spider": spider})

    def _store_name(self) -> str:
        """The index, for the start-up line: ``the simhash index on LMDB in <path>``, ``... in memory``."""
        assert self.index is not None
        name = type(self.index.store).__name__
        on = {"LmdbStore": " on LMDB", "RedisStore": " on Redis", "MemoryStore": " in memory"}.get(name, f" on {name}")
        where = f" in {self.index.path}" if self.index.path is not None else ""
        return f"the {self._label} index{on}{where}"

    def _core_name(self) -> str:
        """For the start-up line: "native fingerprint core" when the native core computes the
        fingerprints, else "Python fingerprint core" (also for a fingerprinter of another class,
        which may have no ``native``), and which HTML walk runs (``Fingerprinter.html_walk``)."""
        core = "native" if getattr(self.fingerprinter, "native", False) else "Python"
        walk = getattr(self.fingerprinter, "html_walk", None)
        return f"{core} fingerprint core, {walk}" if walk else f"{core} fingerprint core"

    def _log_summary(self, stats: StatsCollector, spider: Spider | None) -> None:
        raise NotImplementedError

    def _close(self, spider: Spider | None) -> None:
        """Log the summary line (with stats) and close the index; a close error is logged, not raised."""
        if self.index is None:
            return
        if self.stats is not None:
            self._log_summary(self.stats, spider)
        try:
            self.index.close()
        except Exception:
            self._logger.warning(
                f"Could not close the {self._label} index in %(path)s", {"path": self.location}, exc_info=True
            )
        self.index = None
        self.tracker = None

    def _crawler_spider(self) -> Spider | None:
        return self.crawler.spider if self.crawler is not None else None

    def _ready(self) -> bool:
        """Whether the index is open for this output, opening it now if no signal did."""
        if self._disabled or self._open_failed:
            return False
        if self.index is not None:
            return True
        spider = self._spider or self._crawler_spider()
        if spider is None:
            return False
        try:
            self.open(spider)
        except Exception:
            self._open_failed = True
            self._inc(f"{self._stats_prefix}store_error")
            self._logger.exception(self._open_error, extra={"spider": spider})
            return False
        return self.index is not None

    def _store_error(self, key: str, exc: BaseException) -> None:
        """Count a failed index read or write for ``key`` (the caller treats it as new) under
        ``store_error`` and ``store_error/<kind>``; log the first of each kind at WARNING (a damaged
        index at ERROR; a traceback only for an unexpected error), the rest at DEBUG."""
        from scrapy_simhash.errors import StoreError

        kind = exc.kind if isinstance(exc, StoreError) else "unexpected"
        self._inc(f"{self._stats_prefix}store_error")
        self._inc(f"{self._stats_prefix}store_error/{kind}")
        first = kind not in self._error_kinds
        self._error_kinds.add(kind)
        self._logger.log(
            (logging.ERROR if kind == "corrupt" else logging.WARNING) if first else logging.DEBUG,
            f"{self._label} index error for %(key)s; the {self._unit} is treated as new: %(error)s"
            + (" (further store errors of this kind are logged at DEBUG)" if first else ""),
            {"key": key, "error": exc},
            exc_info=(type(exc), exc, exc.__traceback__) if kind == "unexpected" else None,
            extra={"spider": self._spider},
        )

    def _skipped_total(self, stats: StatsCollector) -> int:
        prefix = f"{self._stats_prefix}skipped/"
        return sum(
            value for key, value in stats.get_stats().items() if key.startswith(prefix) and isinstance(value, int)
        )

    def _log_duplicate(self, message: str, args: dict[str, Any]) -> None:
        self._duplicates_logged += 1
        if self.config.debug:
            self._logger.info(message, args, extra={"spider": self._spider})
        elif self._duplicates_logged == 1:
            self._logger.info(message + _NO_MORE_DUPLICATES, args, extra={"spider": self._spider})
        else:
            self._logger.debug(message, args, extra={"spider": self._spider})

    def _log_error(self, message: str, *args: Any, exc_info: Any = True) -> None:
        self._errors_logged += 1
        level = logging.WARNING if self._errors_logged == 1 else logging.DEBUG
        self._logger.log(level, message, *args, exc_info=exc_info, extra={"spider": self._spider})

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)
