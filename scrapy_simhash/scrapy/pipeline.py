"""SimhashDedupPipeline: drops items whose text is a near-duplicate of an earlier item's.

Scrapy glue only (the decision is :meth:`ChangeTracker.deduplicate`). For spiders whose items do
not map one-to-one to pages, or to keep one copy of a story published by several sources. The item
index is its own store (with LMDB: ``<SIMHASH_DIR>/<spider.name>/items``), separate from the
middleware's page index.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import DropItem, NotConfigured

from scrapy_simhash.decision.tracker import Verdict
from scrapy_simhash.decision.verdicts import NEW
from scrapy_simhash.fingerprint.fields import TITLE_FIELD, fields_text
from scrapy_simhash.fingerprint.novelty import OwnText
from scrapy_simhash.fingerprint.simhash import EmptyTextError
from scrapy_simhash.scrapy.component import IndexComponent, canonical_key
from scrapy_simhash.scrapy.settings import build_fingerprinter, reported_at_startup
from scrapy_simhash.scrapy.state import get_config

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

    from scrapy_simhash.store.index import SimhashIndex

# The logger keeps the module's former name: it is in every log line users filter on.
logger = logging.getLogger(__name__)


class NearDuplicateItem(DropItem):
    """Raised by :class:`SimhashDedupPipeline` for an item whose text is within
    `SIMHASH_MAX_DISTANCE` of an earlier item's and adds fewer than `SIMHASH_KEEP_ADDS` characters
    to it. The message names the earlier item and the distance; ``adds``: the characters it adds
    (``None``: not measured)."""

    def __init__(self, message: str, *, key: str, duplicate_of: str, distance: int, adds: float | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.duplicate_of = duplicate_of
        self.distance = distance
        self.adds = adds


class SimhashDedupPipeline(IndexComponent):
    """Fingerprint the text of the item fields named by `SIMHASH_ITEM_FIELDS` and drop
    near-duplicates with :class:`NearDuplicateItem`.

    Items are keyed by `SIMHASH_ITEM_KEY_FIELD` (an item replaces the earlier one of its key); items
    lacking every listed field pass through (``simhash/items/skipped/no_fields``), and one whose own
    text adds `SIMHASH_KEEP_ADDS` characters is kept. Its settings are in
    ``docs/reference/settings.rst`` and ``docs/usage/dedup.rst``.
    """

    _logger = logger
    _stats_prefix = "simhash/items/"
    _index_dir = "items"
    _label = "simhash item"
    _unit = "item"
    _open_error = "Could not open the simhash item index: item deduplication is off for this crawl"

    def _setup(self) -> None:
        if not self.config.item_fields:
            raise ValueError("SIMHASH_ITEM_FIELDS (empty) is invalid: name the item fields to fingerprint")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = get_config(crawler)
        if not config.enabled:
            raise NotConfigured("scrapy-simhash is disabled; set SIMHASH_ENABLED = True")
        if not config.item_fields:
            raise NotConfigured(
                'SIMHASH_ITEM_FIELDS is not set; name the item fields to fingerprint, e.g. ["title", "body"]'
            )
        with reported_at_startup():
            pipeline = cls(config, build_fingerprinter(config), crawler.stats, crawler)
            if crawler.spider is not None:
                pipeline.open(crawler.spider)  # fail at start-up, not in a signal handler
        return pipeline

    def _log_opened(self, spider: Spider, index: SimhashIndex) -> None:
        logger.info(
            "Using %(store)s (fields=%(fields)s, key field=%(key)s, bits=%(bits)d, "
            "blocks=%(blocks)s, max_distance=%(k)d, %(n)d fingerprints, %(core)s)",
            {
                "store": self._store_name(),
                "fields": ",".join(self.config.item_fields),
                "key": self.config.item_key_field,
                "bits": index.bits,
                "blocks": index.blocks,
                "k": index.max_distance,
                "n": len(index),
                "core": self._core_name(),
            },
            extra={"spider": spider},
        )

    def open_spider(self, spider: Spider | None = None) -> None:
        spider = spider or self._crawler_spider()
        if spider is not None:
            self.open(spider)

    def close_spider(self, spider: Spider | None = None) -> None:
        """Log a summary line and close the item index."""
        self._close(self._spider)

    def _log_summary(self, stats: StatsCollector, spider: Spider | None) -> None:
        get = stats.get_value
        logger.info(
            "simhash items: %(fp)d fingerprinted (%(new)d new, %(near)d near-duplicates dropped), "
            "%(skipped)d skipped, %(errors)d store errors; index %(path)s",
            {
                "fp": get("simhash/items/fingerprinted", 0),
                "new": get("simhash/items/new", 0),
                "near": get("simhash/items/near_duplicate", 0),
                "skipped": self._skipped_total(stats),
                "errors": get("simhash/items/store_error", 0),
                "path": self.location,
            },
            extra={"spider": spider},
        )

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        """Return ``item``, or raise :class:`NearDuplicateItem`."""
        if not self._ready():
            return item
        tracker = self.tracker
        assert tracker is not None  # _ready() returned True: the index is open
        from itemadapter import ItemAdapter

        try:
            adapter = ItemAdapter(item)
        except TypeError:
            self._inc("simhash/items/skipped/not_an_item")
            return item
        title, text = self._item_text(adapter)
        if not text and (not title or any(f != TITLE_FIELD for f in self.config.item_fields)):
            return self._no_fields(item, adapter)
        try:
            fp = self.fingerprinter.fingerprint_text(text, title)
        except EmptyTextError:
            self._inc("simhash/items/skipped/empty")
            return item
        except Exception:  # noqa: BLE001 - fail open: logged by _log_error
            self._inc("simhash/items/skipped/error")
            self._log_error("Could not fingerprint an item; it is let through (counted as simhash/items/skipped/error)")
            return item
        key = self._item_key(adapter)
        try:
            # No short-text rule (the dedup command's): on real short items it drops items that differ
            # in a name (benchmarks/quality/short_text_items.py).
            verdict = tracker.deduplicate(key, fp, OwnText([title, text]))
        except Exception as exc:  # noqa: BLE001 - fail open: counted and logged by _store_error
            self._store_error(key, exc)
            verdict = Verdict(NEW, fp)
        self._inc("simhash/items/fingerprinted")
        if verdict.evidence_missing:
            self._inc("simhash/evidence_missing")
        if verdict.duplicate_of is None or verdict.distance is None:
            self._inc("simhash/items/new")
            if verdict.adds_to is not None:
                self._inc("simhash/items/kept/adds")  # resembles a kept item, but says more than it
            if verdict.adds_to is not None and verdict.adds is not None:
                logger.debug(
                    "Kept item %(key)s: it resembles %(of)s, but its own text adds about %(adds)d characters "
                    "to it (SIMHASH_KEEP_ADDS: %(least)d)",
                    {"key": key, "of": verdict.adds_to, "adds": verdict.adds, "least": self.config.keep_adds},
                    extra={"spider": self._spider},
                )
            return item
        self._inc("simhash/items/near_duplicate")
        if self.config.stats_verbose:
            self._inc(f"simhash/items/distance/{verdict.distance}")
        message = f"Near-duplicate of {verdict.duplicate_of} (distance {verdict.distance}): {key}"
        self._log_duplicate("Dropped item: %(m)s", {"m": message})
        raise NearDuplicateItem(
            message, key=key, duplicate_of=verdict.duplicate_of, distance=verdict.distance, adds=verdict.adds
        )

    def _no_fields(self, item: Any, adapter: Any) -> Any:
        """``item`` passed through unfingerprinted: it has no text in the listed fields (a title
        alone is never compared when other fields are listed), warned about once."""
        self._inc("simhash/items/skipped/no_fields")
        if not self.stats or self.stats.get_value("simhash/items/skipped/no_fields") == 1:
            logger.warning(
                "An item has no text in SIMHASH_ITEM_FIELDS %(fields)s (fields it has: %(has)s): such items "
                "pass through, never deduplicated (simhash/items/skipped/no_fields); check the field names",
                {"fields": list(self.config.item_fields), "has": sorted(map(str, adapter.keys()))[:20]},
                extra={"spider": self._spider},
            )
        return item

    def _item_text(self, adapter: Any) -> tuple[str, str]:
        return fields_text(adapter, self.config.item_fields)

    def _item_key(self, adapter: Any) -> str:
        value = adapter.get(self.config.item_key_field)
        if isinstance(value, str) and value.strip():
            return canonical_key(value.strip())
        # No identity: compare by content only, under a key no other item has.
        self._inc("simhash/items/no_key")
        return f"(no {self.config.item_key_field}) {uuid.uuid4().hex}"
