"""SimhashSpiderMiddleware: fingerprints every text response and holds back items of duplicate pages.

Scrapy glue only: the fingerprint comes from :class:`~scrapy_simhash.fingerprint.Fingerprinter`,
the near-duplicate lookup from :class:`~scrapy_simhash.index.SimhashIndex`, the per-URL record
from :mod:`scrapy_simhash.recrawl`.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections import deque
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse
from w3lib.url import canonicalize_url

from scrapy_simhash._component import _IndexComponent
from scrapy_simhash._settings import build_fingerprinter, get_config
from scrapy_simhash.extract import decode_html
from scrapy_simhash.fingerprint import EmptyTextError, PageFingerprint, hamming
from scrapy_simhash.recrawl import (
    CHANGED,
    NEAR_DUPLICATE,
    NEW,
    UNCHANGED,
    VERDICTS,
    PageRecord,
    change_verdict,
)
from scrapy_simhash.templates import IndexTemplateStore, SiteTemplates

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred
    from typing_extensions import Self

    from scrapy_simhash.index import SimhashIndex

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


_PASS = _Outcome()


@dataclass
class _Job:
    """A response waiting for its fingerprint."""

    response: TextResponse
    key: str
    url: str
    fp: int | None = None
    page: PageFingerprint | None = None
    error: BaseException | None = None
    elapsed: float = 0.0
    done: bool = False
    waiter: Deferred[_Outcome] | None = None


class SimhashSpiderMiddleware(_IndexComponent):
    """Fingerprint every text response once; give it one verdict; hold back items of duplicates.

    Verdicts (``response.meta["simhash_verdict"]``): ``new``, ``near_duplicate`` (within
    `SIMHASH_MAX_DISTANCE` of a page of another URL), ``unchanged`` / ``changed`` (same URL fetched
    before; its change distance against the previous fingerprint is at most / above
    `SIMHASH_CHANGE_THRESHOLD`). Items of near-duplicate pages are held back, and items of unchanged
    pages when `SIMHASH_DROP_UNCHANGED`; requests of near-duplicate pages are kept unless
    `SIMHASH_FOLLOW_DUPLICATES` is False.

    Reads every ``SIMHASH_*`` setting through :func:`scrapy_simhash._settings.get_config`:
    `SIMHASH_ENABLED`, `SIMHASH_DIR`, `SIMHASH_RESET`, `SIMHASH_BITS`, `SIMHASH_MAX_DISTANCE`,
    `SIMHASH_BLOCKS`, `SIMHASH_CHANGE_THRESHOLD`, the Fingerprinter options, `SIMHASH_DROP_UNCHANGED`,
    `SIMHASH_FOLLOW_DUPLICATES`, `SIMHASH_ITEM_FIELD`, `SIMHASH_MAX_BODY_SIZE`, `SIMHASH_DEBUG`,
    `SIMHASH_STATS_VERBOSE`, `SIMHASH_LMDB_MAP_SIZE`, `SIMHASH_DURABLE`, `SIMHASH_MAX_CANDIDATES`,
    `SIMHASH_THREADS`, `SIMHASH_HISTORY_SIZE`. Request meta: ``dont_simhash``, ``simhash_key``;
    spider attributes: ``simhash_enabled = False``, ``simhash_reset = True``.
    """

    _logger = logger
    _stats_prefix = "simhash/"
    _index_dir = "pages"
    _label = "simhash"
    _unit = "page"
    _open_error = "Could not open the simhash index: deduplication is off for this crawl"
    _opt_out_message = "scrapy-simhash is off for spider %(spider)s (simhash_enabled = False)"
    _reset_message = "Deleting the simhash page index in %(path)s (reset)"

    def _setup(self) -> None:
        self._outcomes: weakref.WeakKeyDictionary[Response, _Outcome] = weakref.WeakKeyDictionary()
        self._pool: Executor | None = None
        self._queue: deque[_Job] = deque()
        self._draining = False
        self._time_total = 0.0
        self._time_max = 0.0
        self._templates: SiteTemplates | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = get_config(crawler)
        if not config.enabled:
            raise NotConfigured("scrapy-simhash is disabled; set SIMHASH_ENABLED = True")
        mw = cls(config, build_fingerprinter(config), crawler.stats, crawler)
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        if crawler.spider is not None:
            # Open the index now, while the crawl is starting, so that a settings mismatch or a
            # foreign directory stops the crawl with its message instead of being logged by a
            # signal handler while deduplication silently stays off.
            mw.open(crawler.spider)
        return mw

    # -- lifecycle ---------------------------------------------------------------------------

    def _log_opened(self, spider: Spider, index: SimhashIndex) -> None:
        logger.info(
            "Using LMDB simhash store in %(path)s (bits=%(bits)d, blocks=%(blocks)s, max_distance=%(k)d, "
            "change_threshold=%(change)d, %(n)d fingerprints, threads=%(threads)d)",
            {
                "path": self.path,
                "bits": index.bits,
                "blocks": index.blocks,
                "k": index.max_distance,
                "change": self.config.change_threshold,
                "n": len(index),
                "threads": self.config.threads,
            },
            extra={"spider": spider},
        )

    def spider_opened(self, spider: Spider) -> None:
        self.open(spider)

    def spider_closed(self, spider: Spider, reason: str = "finished") -> None:
        """Log the summary line and close the index."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._templates is not None:
            try:
                self._templates.flush()
            except Exception:  # noqa: BLE001 - fail open: what is learned is only an aid
                self._store_error("site templates")
            self._templates = None
        self._close(spider)

    def _site_templates(self) -> SiteTemplates | None:
        """The site templates learned from this crawl, kept in the index (None without one)."""
        if self._templates is None and self.index is not None:
            self._templates = SiteTemplates(IndexTemplateStore(self.index))
        return self._templates

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
                "path": self.path,
            },
            extra={"spider": spider},
        )

    # -- Scrapy hooks ------------------------------------------------------------------------

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        """Fingerprint ``response`` (on the calling thread) and filter the spider output."""
        outcome = self._outcome_sync(response)
        for obj in result:
            obj = self._filter(obj, outcome, response)
            if obj is not None:
                yield obj

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        """Fingerprint ``response`` (in a worker thread when `SIMHASH_THREADS` > 0) and filter the
        spider output. Verdicts are decided on the reactor thread in the order responses arrive,
        so they do not depend on which worker finishes first."""
        outcome = await self._outcome_async(response)
        async for obj in result:
            obj = self._filter(obj, outcome, response)
            if obj is not None:
                yield obj

    # -- output filtering --------------------------------------------------------------------

    def _filter(self, obj: Any, outcome: _Outcome, response: Response) -> Any:
        if isinstance(obj, Request):
            if outcome.drop_requests:
                self._inc("simhash/requests_dropped")
                return None
            return obj
        if outcome.hold_items:
            self._inc("simhash/items_dropped")
            logger.debug(
                "Held back an item of %(verdict)s page %(url)s",
                {"verdict": outcome.verdict, "url": response.url},
                extra={"spider": self._spider},
            )
            return None
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

    def _prepare(self, response: Response) -> _Outcome | _Job:
        """Checks done on the reactor thread: a skip outcome, or a job to fingerprint."""
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
            return self._skip(response, "non_text")
        if response.status >= 300:
            return self._skip(response, "http_status")
        if self.config.max_body_size and len(response.body) > self.config.max_body_size:
            return self._skip(response, "too_large")
        if not response.body:
            return self._skip(response, "empty")
        key = meta.get("simhash_key") or canonicalize_url(response.url)
        return _Job(response=response, key=str(key), url=response.url)

    def _skip(self, response: Response, reason: str) -> _Outcome:
        self._inc(f"simhash/skipped/{reason}")
        self._outcomes[response] = _PASS
        return _PASS

    def _fingerprint(self, job: _Job) -> _Job:
        """Decode and fingerprint ``job.response``; runs on a worker thread when `SIMHASH_THREADS`
        > 0. Never raises: the error is kept for the reactor thread to count."""
        started = time.perf_counter()
        try:
            html = _response_text(job.response)
            job.page = self.fingerprinter.fingerprint_page(html, url=job.url, templates=self._site_templates())
            job.fp = job.page.fp
        except Exception as exc:  # noqa: BLE001 - fail open: never let an error reach Scrapy
            job.error = exc
        job.elapsed = time.perf_counter() - started
        job.done = True
        return job

    def _outcome_sync(self, response: Response) -> _Outcome:
        prepared = self._prepare(response)
        if isinstance(prepared, _Outcome):
            return prepared
        return self._decide(self._fingerprint(prepared))

    async def _outcome_async(self, response: Response) -> _Outcome:
        if self.config.threads <= 0 and self.config.processes <= 0:
            return self._outcome_sync(response)
        prepared = self._prepare(response)
        if isinstance(prepared, _Outcome):
            return prepared
        from scrapy.utils.defer import maybe_deferred_to_future

        return await maybe_deferred_to_future(self._submit(prepared))

    def _executor(self) -> Executor:
        if self._pool is None:
            if self.config.processes > 0:
                import multiprocessing

                # spawn, not fork: forking a process that runs a reactor and threads can deadlock.
                self._pool = ProcessPoolExecutor(
                    max_workers=self.config.processes,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_worker_init,
                    initargs=({"bits": self.config.bits, **self.config.fingerprinter_kwargs},),
                )
            else:
                self._pool = ThreadPoolExecutor(max_workers=self.config.threads, thread_name_prefix="simhash")
        return self._pool

    def _submit(self, job: _Job) -> Deferred[_Outcome]:
        from twisted.internet import reactor
        from twisted.internet.defer import Deferred

        job.waiter = Deferred()
        self._queue.append(job)
        future: Future[Any]
        try:
            if self.config.processes > 0:
                # Decoding stays here (Scrapy's cached response.text); the worker gets a str.
                started = time.perf_counter()
                html = _response_text(job.response)
                job.elapsed = time.perf_counter() - started
                future = self._executor().submit(_worker_fingerprint, html, job.url)
            else:
                future = self._executor().submit(self._fingerprint, job)
        except Exception:  # noqa: BLE001 - fail open: never let an error reach Scrapy
            # A broken or shut-down pool: fingerprint here rather than lose the page.
            self._fingerprint(job)
            self._fingerprinted(None, job)
            return job.waiter
        future.add_done_callback(lambda done: reactor.callFromThread(self._fingerprinted, done, job))
        return job.waiter

    def _fingerprinted(self, future: Future[Any] | None, job: _Job) -> None:
        """Reactor thread: a worker finished ``job``; decide every job that is ready, in order."""
        if not job.done and future is not None:
            try:
                result = future.result()
            except BaseException as exc:  # the worker failed, or the pool was shut down  # noqa: BLE001 - fail open: never let an error reach Scrapy
                job.error = exc
            else:
                if isinstance(result, tuple):  # from a worker process: (fp, seconds)
                    job.fp, elapsed = result
                    job.elapsed += elapsed
            job.done = True
        if self._draining:
            return
        # Decide in arrival order: a job waits for every job queued before it.
        self._draining = True
        try:
            while self._queue and self._queue[0].done:
                ready = self._queue.popleft()
                outcome = self._decide(ready)
                assert ready.waiter is not None
                ready.waiter.callback(outcome)
        finally:
            self._draining = False

    # -- verdicts ----------------------------------------------------------------------------

    def _decide(self, job: _Job) -> _Outcome:
        """Turn a fingerprint into a verdict (reactor thread), count it and log it. Never raises."""
        response = job.response
        try:
            self._time_total += job.elapsed
            self._time_max = max(self._time_max, job.elapsed)
            if self.stats is not None:
                total = self.stats.get_value("simhash/time_ms_total", 0) + job.elapsed * 1000
                self.stats.set_value("simhash/time_ms_total", round(total, 3))
                self.stats.max_value("simhash/time_ms_max", round(job.elapsed * 1000, 3))
            if job.error is not None or job.fp is None:
                return self._fingerprint_failed(job)
            page = job.page
            outcome = self._verdict(job.key, job.fp, page is None or page.may_match)
            self._count(outcome)
            if page is not None:
                for key in page.stats():
                    self._inc(f"simhash/{key}")
                if outcome.verdict != UNCHANGED and self._templates is not None:
                    # Not an unchanged refetch, nor (by fingerprint) an exact copy: those must not
                    # make a page's own text look like its site's template.
                    self._templates.observe(job.url, page.visible.split("\n"), page.fp)
            self._annotate(response, outcome)
            if outcome.verdict == NEAR_DUPLICATE:
                self._log_duplicate(
                    "Near-duplicate (distance %(d)d): %(url)s of %(of)s",
                    {"url": job.url, "of": outcome.duplicate_of, "d": outcome.distance},
                )
            self._outcomes[response] = outcome
            return outcome
        except Exception:  # noqa: BLE001 - fail open: never let an error reach Scrapy
            # A bug of ours must never reach Scrapy: let the page through.
            return self._let_through(job, "Could not decide on")

    def _fingerprint_failed(self, job: _Job) -> _Outcome:
        if isinstance(job.error, EmptyTextError) or job.error is None:
            return self._skip(job.response, "empty")
        return self._let_through(job, "Could not fingerprint")

    def _let_through(self, job: _Job, what: str) -> _Outcome:
        error = job.error
        self._log_error(
            "%(what)s %(url)s: %(error)r; the page is let through (counted as simhash/skipped/error)",
            {"what": what, "url": job.url, "error": error},
            exc_info=(type(error), error, error.__traceback__) if error is not None else True,
        )
        return self._skip(job.response, "error")

    def _verdict(self, key: str, fp: int, may_match: bool = True) -> _Outcome:
        """One verdict for ``key`` with fingerprint ``fp``; updates the index and the record.

        ``may_match`` False (a page with no text of its own beside its site's template): the page
        is never a near-duplicate and is not indexed, so that no page can duplicate it.

        A store failure counts ``simhash/store_error`` and the page is treated as new (fail open).
        """
        index = self.index
        assert index is not None
        config = self.config
        try:
            with index.batch():
                record = self._record(key)
                if record is None or record.last_fp is None:
                    match = index.check_and_add(key, fp) if may_match else None
                    duplicate_of = match.key if match is not None else None
                    new_record = PageRecord.first(fp, duplicate_of=duplicate_of)
                    if match is None:
                        outcome = _Outcome(NEW, fp)
                    else:
                        outcome = _Outcome(NEAR_DUPLICATE, fp, match.distance, match.key)
                else:
                    change = hamming(fp, record.last_fp)
                    if change_verdict(change, config.change_threshold) == UNCHANGED:
                        duplicate_of = record.duplicate_of
                        if duplicate_of is None and may_match and index.get(key) != fp:
                            index.add(key, fp)  # keep the canonical page's newest fingerprint
                        outcome = _Outcome(UNCHANGED, fp, change, duplicate_of)
                    else:
                        match = index.check_and_add(key, fp) if may_match else None
                        if match is None:
                            duplicate_of = None
                            outcome = _Outcome(CHANGED, fp, change)
                        else:
                            # The URL now serves another page's content: it is a near-duplicate,
                            # and its old content must not keep matching future pages.
                            duplicate_of = match.key
                            index.remove(key)
                            outcome = _Outcome(NEAR_DUPLICATE, fp, match.distance, match.key)
                    new_record = record.updated(
                        fp,
                        change,
                        change > config.change_threshold,
                        history_size=config.history_size,
                        duplicate_of=duplicate_of,
                    )
                index.put_record(key, new_record.to_bytes())
        except Exception:  # noqa: BLE001 - fail open: logged by _store_error
            self._store_error(key)
            outcome = _Outcome(NEW, fp)
        held = outcome.verdict == NEAR_DUPLICATE or (
            outcome.verdict == UNCHANGED and (config.drop_unchanged or outcome.duplicate_of is not None)
        )
        outcome.hold_items = held
        outcome.drop_requests = not config.follow_duplicates and outcome.duplicate_of is not None
        outcome.item_info = {
            "fp": format(fp, f"0{config.bits // 4}x"),
            "verdict": outcome.verdict,
            "distance": outcome.distance,
            "duplicate_of": outcome.duplicate_of,
        }
        return outcome

    def _record(self, key: str) -> PageRecord | None:
        """The stored record of ``key``; an unreadable one counts as a store error and is replaced."""
        assert self.index is not None
        raw = self.index.get_record(key)
        record = PageRecord.parse(raw)
        if record is None and raw is not None:
            self._inc("simhash/store_error")
            logger.warning(
                "Unreadable simhash record for %(key)s is replaced", {"key": key}, extra={"spider": self._spider}
            )
        return record

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
        if candidates is not None:
            self.stats.max_value("simhash/candidates_max", candidates)

    def _annotate(self, response: Response, outcome: _Outcome) -> None:
        meta = _meta(response)
        meta["simhash_fp"] = outcome.fp
        meta["simhash_verdict"] = outcome.verdict
        meta["simhash_distance"] = outcome.distance
        meta["simhash_duplicate_of"] = outcome.duplicate_of


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


def _response_text(response: TextResponse) -> str:
    """The response's text. Scrapy's decoding when a charset is declared (header, BOM, <meta>);
    otherwise :func:`scrapy_simhash.extract.decode_html`, which sniffs GBK/GB18030 where Scrapy
    would fall back to cp1252."""
    try:
        declared = response._declared_encoding()
    except Exception:  # noqa: BLE001 - fail open: never let an error reach Scrapy
        declared = None
    if declared:
        return response.text
    content_type = response.headers.get(b"Content-Type")
    html, _ = decode_html(
        response.body,
        content_type=content_type.decode("latin-1") if content_type else None,
    )
    return html


# -- worker processes (SIMHASH_PROCESSES) ------------------------------------------------------

_WORKER_FINGERPRINTER: Any = None


def _worker_init(kwargs: dict[str, Any]) -> None:
    """Build the worker's Fingerprinter once and load the tokenizer before the first page."""
    global _WORKER_FINGERPRINTER
    from scrapy_simhash.fingerprint import Fingerprinter

    _WORKER_FINGERPRINTER = Fingerprinter(**kwargs)
    _WORKER_FINGERPRINTER.settings  # noqa: B018 - initialises the tokenizer and its dictionary


def _worker_fingerprint(html: str, url: str) -> tuple[int, float]:
    started = time.perf_counter()
    fp = _WORKER_FINGERPRINTER.fingerprint_html(html, url=url)
    return fp, time.perf_counter() - started
