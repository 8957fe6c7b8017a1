"""SimhashDedupPipeline: drops items whose text is a near-duplicate of an earlier item's.

Scrapy glue, and the item's decision (:func:`deduplicate_item`). For spiders whose items do not
map one-to-one to pages, or to keep one copy of a story published by several sources. The item
index is its own store (with LMDB: ``<SIMHASH_DIR>/<spider.name>/items``), separate from the
middleware's page index.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy.exceptions import DropItem, NotConfigured

from scrapy_simhash._component import _IndexComponent, canonical_key
from scrapy_simhash._settings import build_fingerprinter, get_config, reported_at_startup
from scrapy_simhash.fingerprint import EmptyTextError
from scrapy_simhash.novelty import OwnText
from scrapy_simhash.recrawl import PageRecord

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

    from scrapy_simhash.index import Match, SimhashIndex

logger = logging.getLogger(__name__)

_TITLE_FIELD = "title"


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


class ItemVerdict(NamedTuple):
    """:func:`deduplicate_item`'s decision: ``duplicate_of`` (the kept item's key; ``None``: the
    item is kept) and the ``distance`` to it; ``adds_to`` and ``adds``: the key of the item it
    resembles and was kept beside, and the characters its own text adds to that one's; for a
    drop, ``adds`` is what it adds to the kept item (``None``: not measured)."""

    duplicate_of: str | None = None
    distance: int | None = None
    adds_to: str | None = None
    adds: float | None = None


def deduplicate_item(index: SimhashIndex, key: str, fp: int, own: OwnText, keep_adds: int) -> ItemVerdict:
    """The item's decision, in one :meth:`SimhashIndex.batch`: it is a near-duplicate when an
    earlier item lies within the index's ``max_distance`` (check-and-add: a key seen again
    replaces its item) and, with ``keep_adds`` (`SIMHASH_KEEP_ADDS`; 0: resemblance alone), its
    ``own`` text adds fewer than ``keep_adds`` characters to that item's, or to another's within
    ``max_distance``: the rule of the page decision
    (:class:`~scrapy_simhash.recrawl.ChangeTracker`'s ``keep_adds``). Else it is kept: indexed,
    and its record holds the novelty sketch of its own text (:meth:`OwnText.sketch`, at most 2.4
    KB), what later items are measured against. An item whose record holds no sketch (indexed with ``keep_adds``
    0) cannot be measured: the resemblance decides."""
    with index.batch():
        match = index.check_and_add(key, fp)
        if not keep_adds:
            return ItemVerdict() if match is None else ItemVerdict(match.key, match.distance)
        first = None
        if match is not None:
            first = _added(index, own, [match])[0]
            if first is None or first < keep_adds:
                return ItemVerdict(match.key, match.distance, None, first)
            others = [c for c in index.near(fp, exclude=key) if c.key != match.key]
            for candidate, adds in zip(others, _added(index, own, others)):
                if adds is not None and adds < keep_adds:
                    return ItemVerdict(candidate.key, candidate.distance, None, adds)
            index.add(key, fp)  # kept: check-and-add found a match and did not store fp
        record = replace(PageRecord.first(fp), novelty=own.sketch() if own.chars else None)
        index.put_record(key, record.to_bytes())
    return ItemVerdict() if match is None else ItemVerdict(None, None, match.key, first)


def _added(index: SimhashIndex, own: OwnText, candidates: list[Match]) -> list[float | None]:
    """What ``own`` adds to each candidate's text (one batched record read); ``None`` where the
    candidate's record holds no novelty sketch of the text of its indexed fingerprint."""
    if not candidates:
        return []
    found: list[float | None] = []
    for candidate, raw in zip(candidates, index.get_records([c.key for c in candidates])):
        record = PageRecord.parse(raw)
        sketch = record.novelty if record is not None and record.last_fp == candidate.fp else None
        added = None
        if sketch is not None:
            with contextlib.suppress(ValueError):  # not a sketch: the resemblance decides
                added = own.added(sketch)
        found.append(added)
    return found


class SimhashDedupPipeline(_IndexComponent):
    """Fingerprint the text of the item fields named by `SIMHASH_ITEM_FIELDS` and drop
    near-duplicates with :class:`NearDuplicateItem`.

    The fields' text is joined (lists of strings too); a ``title`` field, when listed, is passed
    as the title. Items are named by `SIMHASH_ITEM_KEY_FIELD` (default ``url``): an item with the
    same key as an earlier one replaces it (a recrawled page is not its own duplicate); an item
    without that field is compared by content only. Items lacking every listed field pass
    through (``simhash/items/skipped/no_fields``). An item within `SIMHASH_MAX_DISTANCE` of a
    kept item whose own text (its fields' text, numbers and hashes masked) adds at least
    `SIMHASH_KEEP_ADDS` characters to that item's is kept (``simhash/items/kept/adds``; see
    :func:`deduplicate_item`).

    Reads `SIMHASH_ENABLED`, `SIMHASH_ITEM_FIELDS`, `SIMHASH_ITEM_KEY_FIELD`, `SIMHASH_DIR`,
    `SIMHASH_RESET`, `SIMHASH_BITS`, `SIMHASH_MAX_DISTANCE`, `SIMHASH_BLOCKS`,
    `SIMHASH_MAX_CANDIDATES`, `SIMHASH_KEEP_ADDS`, `SIMHASH_STORE` (and the store's own settings),
    `SIMHASH_DEBUG`, `SIMHASH_STATS_VERBOSE` and the Fingerprinter options. Spider attributes
    ``simhash_enabled = False`` and ``simhash_reset = True`` apply too.
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
        index = self.index
        assert index is not None  # _ready() returned True: the index is open
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
            verdict = deduplicate_item(index, key, fp, OwnText([title, text]), self.config.keep_adds)
        except Exception as exc:  # noqa: BLE001 - fail open: counted and logged by _store_error
            self._store_error(key, exc)
            verdict = ItemVerdict()
        self._inc("simhash/items/fingerprinted")
        if verdict.duplicate_of is None or verdict.distance is None:
            self._inc("simhash/items/new")
            if verdict.adds_to is not None:
                self._inc("simhash/items/kept/adds")  # resembles a kept item, but says more than it
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

    def _item_text(self, adapter: Any) -> tuple[str, str]:
        return fields_text(adapter, self.config.item_fields)

    def _item_key(self, adapter: Any) -> str:
        value = adapter.get(self.config.item_key_field)
        if isinstance(value, str) and value.strip():
            return canonical_key(value.strip())
        # No identity: compare by content only, under a key no other item has.
        self._inc("simhash/items/no_key")
        return f"(no {self.config.item_key_field}) {uuid.uuid4().hex}"


def fields_text(item: Any, fields: Iterable[str]) -> tuple[str, str]:
    """``(title, text)`` of an item (anything with ``.get``: an ItemAdapter, a dict) for
    ``SIMHASH_ITEM_FIELDS``: the ``title`` field is the title, the other fields' text is joined
    by newlines (the ``dedup`` command builds its lines' text with it too)."""
    title = ""
    parts: list[str] = []
    for field in fields:
        value = _text_of(item.get(field))
        if not value:
            continue
        if field == _TITLE_FIELD and not title:
            title = value
        else:
            parts.append(value)
    return title, "\n".join(parts)


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)):
        return "\n".join(part.strip() for part in value if isinstance(part, str) and part.strip())
    return ""
