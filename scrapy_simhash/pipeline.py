"""SimhashDedupPipeline: drops items whose text is a near-duplicate of an earlier item's.

Scrapy glue only. For spiders whose items do not map one-to-one to pages, or to keep one copy of
a story published by several sources. The item index is its own LMDB environment
(``<SIMHASH_DIR>/<spider.name>/items``), separate from the middleware's page index.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import DropItem, NotConfigured

from scrapy_simhash._settings import (
    SimhashConfig,
    build_fingerprinter,
    get_config,
    spider_opted_out,
    spider_wants_reset,
)

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

    from scrapy_simhash.fingerprint import Fingerprinter
    from scrapy_simhash.index import SimhashIndex

logger = logging.getLogger(__name__)

_TITLE_FIELD = "title"


class NearDuplicateItem(DropItem):
    """Raised by :class:`SimhashDedupPipeline` for an item whose text is within
    `SIMHASH_MAX_DISTANCE` of an earlier item's. The message names the earlier item and the distance."""

    def __init__(self, message: str, *, key: str, duplicate_of: str, distance: int) -> None:
        super().__init__(message)
        self.key = key
        self.duplicate_of = duplicate_of
        self.distance = distance


class SimhashDedupPipeline:
    """Fingerprint the text of the item fields named by `SIMHASH_ITEM_FIELDS` and drop
    near-duplicates with :class:`NearDuplicateItem`.

    The fields' text is joined (lists of strings too); a ``title`` field, when listed, is passed
    as the title. Items are named by `SIMHASH_ITEM_KEY_FIELD` (default ``url``): an item with the
    same key as an earlier one replaces it (a recrawled page is not its own duplicate); an item
    without that field is compared by content only. Items lacking every listed field pass
    through (``simhash/items/skipped/no_fields``).

    Reads `SIMHASH_ENABLED`, `SIMHASH_ITEM_FIELDS`, `SIMHASH_ITEM_KEY_FIELD`, `SIMHASH_DIR`,
    `SIMHASH_RESET`, `SIMHASH_BITS`, `SIMHASH_MAX_DISTANCE`, `SIMHASH_BLOCKS`,
    `SIMHASH_MAX_CANDIDATES`, `SIMHASH_LMDB_MAP_SIZE`, `SIMHASH_DURABLE`, `SIMHASH_DEBUG`,
    `SIMHASH_STATS_VERBOSE` and the Fingerprinter options. Spider attributes
    ``simhash_enabled = False`` and ``simhash_reset = True`` apply too.
    """

    def __init__(
        self,
        config: SimhashConfig,
        fingerprinter: Fingerprinter,
        stats: StatsCollector | None = None,
        crawler: Crawler | None = None,
    ) -> None:
        if not config.item_fields:
            raise ValueError("SIMHASH_ITEM_FIELDS (empty) is invalid: name the item fields to fingerprint")
        self.config = config
        self.fingerprinter = fingerprinter
        self.stats = stats
        self.crawler = crawler
        self.index: SimhashIndex | None = None
        self.path: Path | None = None
        self._spider: Spider | None = None
        self._disabled = False
        self._open_failed = False
        self._duplicates_logged = 0
        self._errors_logged = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = get_config(crawler)
        if not config.enabled:
            raise NotConfigured("scrapy-simhash is disabled; set SIMHASH_ENABLED = True")
        if not config.item_fields:
            raise NotConfigured(
                'SIMHASH_ITEM_FIELDS is not set; name the item fields to fingerprint, e.g. ["title", "body"]'
            )
        pipeline = cls(config, build_fingerprinter(config), crawler.stats, crawler)
        if crawler.spider is not None:
            pipeline.open(crawler.spider)  # fail at start-up, not in a signal handler
        return pipeline

    def open(self, spider: Spider) -> None:
        """Open the spider's item index (``<SIMHASH_DIR>/<spider.name>/items``); idempotent."""
        if self.index is not None or self._disabled:
            return
        self._spider = spider
        if spider_opted_out(spider):
            self._disabled = True
            return
        from scrapy_simhash.index import SimhashIndex

        path = self.config.spider_dir(spider) / "items"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.index = SimhashIndex.open(
            path,
            fingerprint_settings=self.fingerprinter.settings,
            reset=spider_wants_reset(self.config, spider),
            **self.config.index_kwargs(),
        )
        self.path = path
        logger.info(
            "Using LMDB simhash item store in %(path)s (fields=%(fields)s, key field=%(key)s, bits=%(bits)d, "
            "blocks=%(blocks)s, max_distance=%(k)d, %(n)d fingerprints)",
            {
                "path": path,
                "fields": ",".join(self.config.item_fields),
                "key": self.config.item_key_field,
                "bits": self.index.bits,
                "blocks": self.index.blocks,
                "k": self.index.max_distance,
                "n": len(self.index),
            },
            extra={"spider": spider},
        )

    def open_spider(self, spider: Spider | None = None) -> None:
        spider = spider or (self.crawler.spider if self.crawler is not None else None)
        if spider is not None:
            self.open(spider)

    def close_spider(self, spider: Spider | None = None) -> None:
        """Log a summary line and close the item index."""
        if self.index is None:
            return
        if self.stats is not None:
            get = self.stats.get_value
            logger.info(
                "simhash items: %(fp)d fingerprinted (%(new)d new, %(near)d near-duplicates dropped), "
                "%(skipped)d skipped, %(errors)d store errors; index %(path)s",
                {
                    "fp": get("simhash/items/fingerprinted", 0),
                    "new": get("simhash/items/new", 0),
                    "near": get("simhash/items/near_duplicate", 0),
                    "skipped": sum(
                        v
                        for k, v in self.stats.get_stats().items()
                        if k.startswith("simhash/items/skipped/") and isinstance(v, int)
                    ),
                    "errors": get("simhash/items/store_error", 0),
                    "path": self.path,
                },
                extra={"spider": self._spider},
            )
        try:
            self.index.close()
        except Exception:
            logger.warning("Could not close the simhash item index in %(path)s", {"path": self.path}, exc_info=True)
        self.index = None

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        """Return ``item``, or raise :class:`NearDuplicateItem`."""
        if self._disabled or self._open_failed:
            return item
        if self.index is None and not self._lazy_open():
            return item
        index = self.index
        assert index is not None  # _lazy_open() returned True: the index is open
        from itemadapter import ItemAdapter

        try:
            adapter = ItemAdapter(item)
        except TypeError:
            self._inc("simhash/items/skipped/not_an_item")
            return item
        title, text = self._item_text(adapter)
        if not title and not text:
            self._inc("simhash/items/skipped/no_fields")
            return item
        from scrapy_simhash.fingerprint import EmptyTextError

        try:
            fp = self.fingerprinter.fingerprint_text(text, title)
        except EmptyTextError:
            self._inc("simhash/items/skipped/empty")
            return item
        except Exception:
            self._inc("simhash/items/skipped/error")
            self._errors_logged += 1
            logger.log(
                logging.WARNING if self._errors_logged == 1 else logging.DEBUG,
                "Could not fingerprint an item; it is let through (counted as simhash/items/skipped/error)",
                exc_info=True,
                extra={"spider": self._spider},
            )
            return item
        key = self._item_key(adapter)
        try:
            match = index.check_and_add(key, fp)
        except Exception:
            self._inc("simhash/items/store_error")
            logger.warning(
                "simhash item store error for %(key)s; the item is treated as new",
                {"key": key},
                exc_info=True,
                extra={"spider": self._spider},
            )
            match = None
        self._inc("simhash/items/fingerprinted")
        if match is None:
            self._inc("simhash/items/new")
            return item
        self._inc("simhash/items/near_duplicate")
        if self.config.stats_verbose:
            self._inc(f"simhash/items/distance/{match.distance}")
        message = f"Near-duplicate of {match.key} (distance {match.distance}): {key}"
        self._log_duplicate(message)
        raise NearDuplicateItem(message, key=key, duplicate_of=match.key, distance=match.distance)

    def _item_text(self, adapter: Any) -> tuple[str, str]:
        title = ""
        parts: list[str] = []
        for field in self.config.item_fields:
            value = _text_of(adapter.get(field))
            if not value:
                continue
            if field == _TITLE_FIELD and not title:
                title = value
            else:
                parts.append(value)
        return title, "\n".join(parts)

    def _item_key(self, adapter: Any) -> str:
        value = adapter.get(self.config.item_key_field)
        if isinstance(value, str) and value.strip():
            value = value.strip()
            if value.startswith(("http://", "https://")):
                from w3lib.url import canonicalize_url

                value = canonicalize_url(value)
            return value
        # No identity: compare by content only, under a key no other item has.
        self._inc("simhash/items/no_key")
        return f"(no {self.config.item_key_field}) {uuid.uuid4().hex}"

    def _lazy_open(self) -> bool:
        spider = self._spider or (self.crawler.spider if self.crawler is not None else None)
        if spider is None:
            return False
        try:
            self.open(spider)
        except Exception:
            self._open_failed = True
            self._inc("simhash/items/store_error")
            logger.exception(
                "Could not open the simhash item index: item deduplication is off for this crawl",
                extra={"spider": spider},
            )
            return False
        return self.index is not None

    def _log_duplicate(self, message: str) -> None:
        self._duplicates_logged += 1
        if self.config.debug:
            logger.info("Dropped item: %(m)s", {"m": message}, extra={"spider": self._spider})
        elif self._duplicates_logged == 1:
            logger.info(
                "Dropped item: %(m)s - no more duplicates will be shown (see SIMHASH_DEBUG to show all duplicates)",
                {"m": message},
                extra={"spider": self._spider},
            )
        else:
            logger.debug("Dropped item: %(m)s", {"m": message}, extra={"spider": self._spider})

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)):
        return "\n".join(part.strip() for part in value if isinstance(part, str) and part.strip())
    return ""
