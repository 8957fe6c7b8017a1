"""SimhashSpiderMiddleware: fingerprints every text response and holds back items of duplicate pages.

Scrapy glue only: the fingerprint comes from :class:`~scrapy_simhash.fingerprint.simhash.Fingerprinter`,
the decision (near-duplicate lookup, change tracking, record) from
:class:`~scrapy_simhash.decision.tracker.ChangeTracker` over the index of the `SIMHASH_STORE` store.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse

from scrapy_simhash.decision.verdicts import CHANGED, NEAR_DUPLICATE, NEW, UNCHANGED, VERDICTS, Reason
from scrapy_simhash.fingerprint.simhash import EmptyTextError, PageFingerprint
from scrapy_simhash.fingerprint.templates import IndexTemplateStore, SiteTemplates
from scrapy_simhash.scrapy._compat import declared_encoding
from scrapy_simhash.scrapy.component import IndexComponent, canonical_key
from scrapy_simhash.scrapy.selection import check_at_start, start_with_due, start_with_due_async
from scrapy_simhash.scrapy.settings import build_fingerprinter, reported_at_startup
from scrapy_simhash.scrapy.state import CrawlState, get_config
from scrapy_simhash.scrapy.tree import release_tree, shared_tree
from scrapy_simhash.text.extract import decode_html

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

    from scrapy_simhash.store.index import SimhashIndex

# The logger keeps the module's former name: it is in every log line users filter on.
logger = logging.getLogger(__name__)


#: ``response.meta`` keys written for every fingerprinted response.
META_KEYS: tuple[str, ...] = ("simhash_fp", "simhash_verdict", "simhash_distance", "simhash_duplicate_of")


@dataclass
class _Outcome:
    """What happened to one response, and what to do with its output."""

    verdict: str | None = None  # None: not fingerprinted (skipped)
    fp: int | None = None
    distance: int | None = None
    duplicate_of: str | None = None
    hold_items: bool = False
    drop_requests: bool = False
    item_info: dict[str, Any] | None = None
    itemless_key: str | None = None  # a key of ``_itemless``: an item it gives takes it out


_ITEMLESS_MAX = 10_000  # keys of ``_itemless`` at most


_PASS = _Outcome()

#: Open middlewares of this process that hold the garbage collector's start-up freeze.
_freeze_holders = 0


def freeze_startup() -> bool:
    """When the spider opens (start-up done: the crawler, the index, the fingerprinter's tables;
    no response yet, whose memory a freeze would keep), one full collection, then everything
    still alive moves to the collector's permanent generation (``gc.freeze``), so that each later
    full collection no longer walks it: on a crawl of real news pages the collector's time per
    page halves (``benchmarks/results/crawl_profile.md``). Not when the collector is off or the
    process froze objects itself, nor with ``SIMHASH_GC_FREEZE = False``. True when this middleware holds the freeze (:func:`thaw` at
    its close; the last holder unfreezes)."""
    global _freeze_holders
    if not _freeze_holders:
        if not gc.isenabled() or gc.get_freeze_count():
            return False
        gc.collect()
        gc.freeze()
    _freeze_holders += 1
    return True


def thaw() -> None:
    """One holder of :func:`freeze_startup`'s freeze is closed: the last one unfreezes, so that what
    the crawl left behind can be collected."""
    global _freeze_holders
    _freeze_holders -= 1
    if not _freeze_holders:
        gc.unfreeze()


class SimhashSpiderMiddleware(IndexComponent):
    """Fingerprint every text response once; give it one verdict; hold back items of duplicates.

    The verdict (``new``, ``near_duplicate``, ``unchanged`` or ``changed``) is put in
    ``response.meta["simhash_verdict"]``; items of near-duplicates, and of unchanged pages with
    `SIMHASH_DROP_UNCHANGED`, are held back. It reads every ``SIMHASH_*`` setting through
    :func:`scrapy_simhash.scrapy.state.get_config` (``docs/reference/settings.rst``).
    """

    _logger = logger
    _stats_prefix = "simhash/"
    _index_dir = "pages"
    _label = "simhash"
    _unit = "page"
    _open_error = "Could not open the simhash index: deduplication is off for this crawl"
    _opt_out_message = "scrapy-simhash is off for spider %(spider)s (simhash_enabled = False)"
    _reset_message = "Deleted the simhash page index in %(path)s (reset)"

    def _setup(self) -> None:
        self._outcomes: weakref.WeakKeyDictionary[Response, _Outcome] = weakref.WeakKeyDictionary()
        self._time_total = 0.0
        self._time_max = 0.0
        self._candidates_max: int | None = None  # the index's, as last given to the stats
        #: Keys found new or changed in this crawl by a start request (``dont_filter``) that gave no
        #: item: fetched again unchanged (a CrawlSpider's rule callback), its items pass.
        self._itemless: set[str] = set()
        self._frozen = False  # holds freeze_startup's freeze
        #: Told of every verdict (``observe(key, response, verdict, duplicate_of)``), shown every
        #: request the spider yields (``schedule(request)``: the request to schedule) and flushed
        #: before the index closes (``flush()``): the URL rules' learner.
        self.observers: list[Any] = []
        #: What the crawler's components share (``None``: no crawler).
        self.state = CrawlState.of(self.crawler) if self.crawler is not None else None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = get_config(crawler)
        if not config.enabled:
            raise NotConfigured("scrapy-simhash is disabled; set SIMHASH_ENABLED = True")
        with reported_at_startup():
            mw = cls(config, build_fingerprinter(config), crawler.stats, crawler)
            state = CrawlState.of(crawler)
            state.page = mw  # SimhashRecrawlMiddleware shares its index
            crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
            crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
            if crawler.spider is not None:
                # Open the index now, while the crawl is starting, so that a settings mismatch or a
                # foreign directory stops the crawl with its message instead of being logged by a
                # signal handler while deduplication silently stays off.
                mw.open(crawler.spider)
                check_at_start(state)
        return mw

    # -- lifecycle ---------------------------------------------------------------------------

    def _log_opened(self, spider: Spider, index: SimhashIndex) -> None:
        logger.info(
            "Using %(store)s (bits=%(bits)d, blocks=%(blocks)s, max_distance=%(k)d, "
            "change_threshold=%(change)d, %(n)d fingerprints, %(core)s)",
            {
                "store": self._store_name(),
                "bits": index.bits,
                "blocks": index.blocks,
                "k": index.max_distance,
                "change": self.config.change_threshold,
                "n": len(index),
                "core": self._core_name(),
            },
            extra={"spider": spider},
        )

    def spider_opened(self, spider: Spider) -> None:
        self.open(spider)
        if self.index is not None and not self._frozen and self.config.gc_freeze:
            self._frozen = freeze_startup()

    def spider_closed(self, spider: Spider, reason: str = "finished") -> None:
        """Keep what was learned of the sites' templates, log the summary line, close the index."""
        templates = None if self.tracker is None else self.tracker.templates
        if templates is not None:
            try:
                templates.flush()
            except Exception as exc:  # noqa: BLE001 - fail open: what is learned is only an aid
                self._store_error("(site templates)", exc)
        for observer in self.observers:
            try:
                observer.flush()
            except Exception as exc:  # noqa: BLE001 - fail open: what is learned is only an aid
                self._store_error("(URL rules)", exc)
        if self._frozen:
            self._frozen = False
            thaw()
        self._close(spider)

    def _site_templates(self) -> SiteTemplates | None:
        """The site templates learned from the crawl, kept in the index and taught by its tracker
        (``None`` without one)."""
        tracker = self.tracker
        if tracker is None:
            return None
        if tracker.templates is None:
            tracker.templates = SiteTemplates(IndexTemplateStore(tracker.index))
        return tracker.templates

    def _log_summary(self, stats: StatsCollector, spider: Spider | None) -> None:
        self._update_index_stats()
        get = stats.get_value
        fingerprinted = get("simhash/fingerprinted", 0)
        mean = self._time_total / fingerprinted * 1000 if fingerprinted else 0.0
        logger.info(
            "simhash: %(fingerprinted)d pages fingerprinted (%(new)d new, %(near)d near-duplicate, "
            "%(unchanged)d unchanged, %(changed)d changed), %(dropped)d items held back, %(skipped)d skipped, "
            "%(errors)d store errors; fingerprint time mean %(mean).1f ms, max %(max).1f ms; index %(path)s",
            {
                "fingerprinted": fingerprinted,
                "new": get("simhash/new", 0),
                "near": get("simhash/near_duplicate", 0),
                "unchanged": get("simhash/unchanged", 0),
                "changed": get("simhash/changed", 0),
                "dropped": get("simhash/items_dropped", 0),
                "skipped": self._skipped_total(stats),
                "errors": get("simhash/store_error", 0),
                "mean": mean,
                "max": self._time_max * 1000,
                "path": self.location,
            },
            extra={"spider": spider},
        )

    # -- Scrapy hooks ------------------------------------------------------------------------

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """Incremental mode: the crawl's selected known URLs enter the crawl before the spider's
        start requests, whatever the spider (Scrapy >= 2.13; see
        :func:`scrapy_simhash.scrapy.selection.start_with_due`)."""
        async for obj in start_with_due_async(self.state, start, self._spider or getattr(self.crawler, "spider", None)):
            yield obj

    def process_start_requests(self, start_requests: Iterable[Any], spider: Spider) -> Iterable[Any]:
        """:meth:`process_start` for Scrapy < 2.13."""
        yield from start_with_due(self.state, start_requests, spider)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        """Fingerprint ``response`` and filter the spider output."""
        outcome = self._outcome(response)
        try:
            for obj in result:
                obj = self._filter(obj, outcome, response)
                if obj is not None:
                    yield obj
        finally:
            if outcome.verdict is not None:  # fingerprinted: its tree was ours to share
                release_tree(response)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        """Fingerprint ``response`` and filter the spider output (asynchronous callbacks)."""
        outcome = self._outcome(response)
        try:
            async for obj in result:
                obj = self._filter(obj, outcome, response)
                if obj is not None:
                    yield obj
        finally:
            if outcome.verdict is not None:
                release_tree(response)

    # -- output filtering --------------------------------------------------------------------

    def _filter(self, obj: Any, outcome: _Outcome, response: Response) -> Any:
        if isinstance(obj, Request):
            if outcome.drop_requests:
                self._inc("simhash/requests_dropped")
                return None
            for observer in self.observers:
                obj = observer.schedule(obj)
            return obj
        if outcome.hold_items:
            self._inc("simhash/items_dropped")
            logger.debug(
                "Held back an item of %(verdict)s page %(url)s",
                {"verdict": outcome.verdict or "unchanged (by its bytes)", "url": response.url},
                extra={"spider": self._spider},
            )
            return None
        if outcome.itemless_key is not None:
            self._itemless.discard(outcome.itemless_key)
        if outcome.item_info is not None and self.config.item_field:
            self._write_item_field(obj, outcome.item_info)
        return obj

    def _write_item_field(self, item: Any, info: dict[str, Any]) -> None:
        from itemadapter import ItemAdapter

        assert self.config.item_field is not None
        try:
            ItemAdapter(item)[self.config.item_field] = dict(info)
        except Exception:
            self._inc("simhash/item_field_error")
            if not self.stats or self.stats.get_value("simhash/item_field_error") == 1:
                logger.warning(
                    "Could not write SIMHASH_ITEM_FIELD %(field)r into an item of type %(type)s "
                    "(declare the field on the item class or unset SIMHASH_ITEM_FIELD)",
                    {"field": self.config.item_field, "type": type(item).__name__},
                    exc_info=True,
                    extra={"spider": self._spider},
                )

    # -- fingerprinting ----------------------------------------------------------------------

    def _prepare(self, response: Response) -> _Outcome | str:
        """A skip outcome, or the index key of a response to fingerprint."""
        if not isinstance(response, Response):  # errback output, start requests
            return _PASS
        known = self._outcomes.get(response)
        if known is not None:  # the same response again (recovered output): no second verdict
            return known
        if not self._ready():
            return _PASS
        meta = _meta(response)
        for key in META_KEYS:  # meta copied from an earlier response must not leak into this one
            meta.pop(key, None)
        if meta.get("dont_simhash"):
            return self._skip(response, "dont_simhash")
        if not isinstance(response, TextResponse) or not _is_text_type(response):
            return self._skip(response, "non_text", record=response.status < 300)
        if response.status >= 300:
            return self._skip(response, "http_status")
        if self.config.max_body_size and len(response.body) > self.config.max_body_size:
            return self._skip(response, "too_large", record=True)
        if not response.body:
            return self._skip(response, "empty", record=True)
        return str(meta.get("simhash_key") or canonical_key(response.url))

    def _skip(self, response: Response, reason: str, *, record: bool = False) -> _Outcome:
        """Not fingerprinted (``simhash/skipped/<reason>``). ``record``: a response that is no
        page (non-text, empty) or too large to fingerprint still gets a record from its body hash,
        so that incremental crawls schedule it like a page (``simhash/body_hash/<verdict>``; never
        a near-duplicate), and its items are held back when its bytes did not change
        (`SIMHASH_DROP_UNCHANGED`)."""
        self._inc(f"simhash/skipped/{reason}")
        outcome = _PASS
        if record and self.tracker is not None:
            unchanged = self._record_body(response) == UNCHANGED
            if unchanged and self.config.drop_unchanged:
                outcome = _Outcome(hold_items=True)
        self._outcomes[response] = outcome
        return outcome

    def _record_body(self, response: Response) -> str | None:
        """:meth:`ChangeTracker.observe_body` of ``response``: its verdict (a store error: ``None``,
        counted, let through)."""
        assert self.tracker is not None
        key = str(_meta(response).get("simhash_key") or canonical_key(response.url))
        digest = int.from_bytes(hashlib.blake2b(response.body, digest_size=8).digest(), "big")
        try:
            verdict = self.tracker.observe_body(key, digest, validators=validators(response))
        except Exception as exc:  # noqa: BLE001 - fail open: counted and logged by _store_error
            self._store_error(key, exc)
            return None
        self._inc(f"simhash/body_hash/{verdict.verdict}")
        return verdict.verdict.value

    def _fingerprint(self, response: TextResponse) -> PageFingerprint:
        """The page's fingerprint and its evidence (the one call into the fingerprinting code),
        read from the tree the spider's selectors use (:func:`~scrapy_simhash.scrapy.tree.shared_tree`),
        or the one of a page with the same text fingerprinted just before (no tree then)."""
        html = response_text(response)

        def tree() -> Any:  # (not called for the text of a page fingerprinted just before)
            root, why = shared_tree(response, html)
            if why is not None:
                self._inc(f"simhash/parse/own/{why}")
            return root

        return self.fingerprinter.fingerprint_page(html, url=response.url, templates=self._site_templates(), tree=tree)

    def _outcome(self, response: Response) -> _Outcome:
        """Fingerprint, decide, count and log one response. Never raises."""
        prepared = self._prepare(response)
        if isinstance(prepared, _Outcome):
            return prepared
        assert isinstance(response, TextResponse)
        started = time.perf_counter()
        try:
            page = self._fingerprint(response)
        except EmptyTextError:
            return self._skip(response, "empty", record=True)
        except Exception as exc:  # noqa: BLE001 - fail open: never let an error reach Scrapy
            return self._let_through(response, "Could not fingerprint", exc)
        finally:
            self._timed(time.perf_counter() - started)
        try:
            outcome = self._verdict(prepared, page, response)
            self._count(outcome)
            for name in page.stats():
                self._inc(f"simhash/{name}")
            self._annotate(response, outcome)
            for observer in self.observers:
                observer.observe(prepared, response, outcome.verdict, outcome.duplicate_of)
            if outcome.verdict == NEAR_DUPLICATE:
                self._log_duplicate(
                    "Near-duplicate (distance %(d)d): %(url)s of %(of)s",
                    {"url": response.url, "of": outcome.duplicate_of, "d": outcome.distance},
                )
            self._outcomes[response] = outcome
            return outcome
        except Exception as exc:  # noqa: BLE001 - fail open: never let an error reach Scrapy
            return self._let_through(response, "Could not decide on", exc)

    def _timed(self, elapsed: float) -> None:
        self._time_total += elapsed
        longest = elapsed > self._time_max
        if longest:
            self._time_max = elapsed
        if self.stats is not None:
            self.stats.set_value("simhash/time_ms_total", round(self._time_total * 1000, 3))
            if longest:  # one call per new maximum, not per page
                self.stats.max_value("simhash/time_ms_max", round(elapsed * 1000, 3))

    def _let_through(self, response: Response, what: str, error: BaseException) -> _Outcome:
        self._log_error(
            "%(what)s %(url)s: %(error)r; the page is let through (counted as simhash/skipped/error)",
            {"what": what, "url": response.url, "error": error},
            exc_info=(type(error), error, error.__traceback__),
        )
        return self._skip(response, "error")

    # -- verdicts ----------------------------------------------------------------------------

    def _verdict(
        self,
        key: str,
        page: PageFingerprint,
        response: Response | None = None,
    ) -> _Outcome:
        """One verdict for ``key`` fetched as ``page`` (:meth:`ChangeTracker.observe`), counted and
        logged: the verdict, and its reason where that has a stat of its own (``Verdict.reason``,
        ``Verdict.kept``).

        A store failure counts ``simhash/store_error`` and the page is treated as new (fail open).
        """
        config = self.config
        fp = page.fp
        assert self.tracker is not None
        try:
            url = None if response is None else response.url
            verdict = self.tracker.observe(key, page, validators=validators(response), url=url)
        except Exception as exc:  # noqa: BLE001 - fail open: counted and logged by _store_error
            self._store_error(key, exc)
            outcome = _Outcome(NEW.value, fp)
        else:
            # Plain strings from here on: the meta keys and item fields hold text, as they always did.
            outcome = _Outcome(verdict.verdict.value, fp, verdict.distance, verdict.duplicate_of)
            for reason in (verdict.reason, verdict.kept):
                stat = None if reason is None else reason.stat
                if stat is not None:
                    self._inc(stat)
            if verdict.evidence_missing:
                self._inc("simhash/evidence_missing")
            if verdict.kept is Reason.KEPT_UNLIKE:  # within max_distance of a page its sketch disagrees with
                logger.debug(
                    "Kept %(key)s: within SIMHASH_MAX_DISTANCE of %(unlike)s, but their change sketches "
                    "are under SIMHASH_NEAR_SIMILARITY alike",
                    {"key": key, "unlike": verdict.unlike},
                    extra={"spider": self._spider},
                )
            elif verdict.kept is Reason.KEPT_ADDS and verdict.adds is None:  # no evidence to drop it by
                logger.debug(
                    "Kept %(key)s: it resembles %(of)s, whose novelty evidence is gone "
                    "(SIMHASH_EVIDENCE_MAX_BYTES, or lost): no drop without evidence",
                    {"key": key, "of": verdict.adds_to},
                    extra={"spider": self._spider},
                )
            elif verdict.kept is Reason.KEPT_ADDS:  # resembles a kept page, but says more than it
                logger.debug(
                    "Kept %(key)s: it resembles %(of)s, but its own text adds about %(adds)d characters to it "
                    "(SIMHASH_KEEP_ADDS: %(least)d)",
                    {"key": key, "of": verdict.adds_to, "adds": verdict.adds, "least": config.keep_adds},
                    extra={"spider": self._spider},
                )
            elif verdict.kept is Reason.KEPT_HEADING:  # resembles a kept page, but is about another thing
                logger.debug(
                    "Kept %(key)s: it resembles %(of)s, but its own heading names something else",
                    {"key": key, "of": verdict.adds_to},
                    extra={"spider": self._spider},
                )
            if verdict.replaced_unreadable:
                self._inc("simhash/store_error")
                logger.warning(
                    "Unreadable simhash record for %(key)s is replaced", {"key": key}, extra={"spider": self._spider}
                )
        again = key in self._itemless  # fetched before in this crawl, and it gave no item
        held = (config.drop_unchanged and not again) or outcome.duplicate_of is not None
        outcome.hold_items = outcome.verdict == NEAR_DUPLICATE or (outcome.verdict == UNCHANGED and held)
        dont_filter = getattr(getattr(response, "request", None), "dont_filter", False)
        if again or (outcome.verdict in (NEW, CHANGED) and dont_filter and len(self._itemless) < _ITEMLESS_MAX):
            self._itemless.add(key)
            outcome.itemless_key = key
        outcome.drop_requests = not config.follow_duplicates and outcome.duplicate_of is not None
        outcome.item_info = {
            "fp": format(fp, f"0{config.bits // 4}x"),
            "verdict": outcome.verdict,
            "distance": outcome.distance,
            "duplicate_of": outcome.duplicate_of,
        }
        return outcome

    def _count(self, outcome: _Outcome) -> None:
        if self.stats is None:
            return
        assert outcome.verdict in VERDICTS
        self.stats.inc_value("simhash/fingerprinted")
        self.stats.inc_value(f"simhash/{outcome.verdict}")
        if self.config.stats_verbose and outcome.distance is not None:
            self.stats.inc_value(f"simhash/distance/{outcome.distance}")
        self._update_index_stats()

    def _update_index_stats(self) -> None:
        if self.stats is None or self.index is None:
            return
        try:
            candidates = self.index.stats.get("candidates_max")
        except Exception:  # noqa: BLE001 - fail open: never let an error reach Scrapy
            return
        if candidates is not None and candidates != self._candidates_max:
            self._candidates_max = candidates
            self.stats.max_value("simhash/candidates_max", candidates)

    def _annotate(self, response: Response, outcome: _Outcome) -> None:
        meta = _meta(response)
        meta["simhash_fp"] = outcome.fp
        meta["simhash_verdict"] = outcome.verdict
        meta["simhash_distance"] = outcome.distance
        meta["simhash_duplicate_of"] = outcome.duplicate_of


def validators(response: Response | None) -> tuple[str | None, str | None]:
    """The response's ``(ETag, Last-Modified)`` header values (``None`` when absent)."""
    if response is None:
        return None, None
    get = response.headers.get
    return _validator(get(b"ETag")), _validator(get(b"Last-Modified"))


def _validator(value: bytes | None) -> str | None:
    return value.decode("latin-1").strip() or None if value else None


def _meta(response: Response) -> dict[str, Any]:
    try:
        return response.meta
    except AttributeError:  # a response built without a request has no meta
        return {}


# application/* media types fingerprinted as pages (besides text/*): HTML, XHTML, XML, JSON, and
# the XML and JSON families (application/rss+xml, application/ld+json, ...). Not image/svg+xml.
_APPLICATION_TEXT = frozenset(("html", "xhtml+xml", "xml", "json"))


def _is_text_type(response: Response) -> bool:
    """Whether the response's ``Content-Type`` names a page: text/*, HTML, XHTML, XML or JSON.

    Scrapy makes a :class:`TextResponse` of a body without control characters in its first
    bytes whatever the header says, so a PDF, an image or a ZIP file served as
    ``application/pdf`` / ``image/*`` / ``application/octet-stream`` can arrive as one. No
    ``Content-Type`` header, or a value that is not a media type, counts as a page.
    """
    raw = response.headers.get(b"Content-Type")
    if not raw:
        return True
    media = raw.decode("latin-1").split(";", 1)[0].strip().lower()
    top, slash, sub = media.partition("/")
    if not slash or not top or not sub or "*" in media:
        return True  # "html", "*/*": not a media type
    if top == "text":
        return True
    return top == "application" and (sub in _APPLICATION_TEXT or sub.endswith(("+xml", "+json")))


def response_text(response: TextResponse) -> str:
    """The response's text. Scrapy's decoding when a charset is declared (header, BOM, <meta>);
    otherwise :func:`scrapy_simhash.text.extract.decode_html`, which sniffs GBK/GB18030 where Scrapy
    would fall back to cp1252."""
    if declared_encoding(response):
        return response.text
    content_type = response.headers.get(b"Content-Type")
    html, _ = decode_html(
        response.body,
        content_type=content_type.decode("latin-1") if content_type else None,
    )
    return html
