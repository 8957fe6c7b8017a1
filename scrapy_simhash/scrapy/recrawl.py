"""Incremental crawls: the request gate, conditional requests, gone and moved pages, due requests.

:class:`SimhashRecrawlMiddleware` is a *downloader* middleware, for three reasons: it sees every
request that is downloaded, whatever its source (the spider's callbacks, its start requests, a
scrapy-redis queue filled by another process); it sees 304, 404 and 410 answers, which Scrapy's
``HttpErrorMiddleware`` stops before any spider middleware; and it can answer a 304 before the
HTTP cache's copy is needed. It also listens to the ``request_scheduled`` signal, which is the only
place where a request's priority can still change its place in the scheduler's queue, and where a
request that is not due can be dropped before it takes a slot in the queue and the duplicate
filter (raising ``IgnoreRequest`` there needs Scrapy >= 2.11.2; on older versions the downloader
middleware drops it).

It reads the index of the :class:`~scrapy_simhash.SimhashSpiderMiddleware` of the same crawler,
which must be enabled too. Each crawl makes one selection of the known URLs it fetches again
(:meth:`~scrapy_simhash.decision.tracker.ChangeTracker.selection`, at its start): the gate lets those
through, the spider middleware puts them before any spider's start requests
(:func:`start_with_due`), :func:`due_requests` (or :class:`IncrementalSpiderMixin`) hands them to
a spider that yields them itself, and :func:`due_report` lists them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured

from scrapy_simhash.decision.tracker import PLAN_DUE, PLAN_NEW, PLAN_NOT_DUE, Plan
from scrapy_simhash.scrapy.component import canonical_key
from scrapy_simhash.scrapy.middleware import validators
from scrapy_simhash.scrapy.selection import crawl_selection
from scrapy_simhash.scrapy.state import CrawlState, get_config

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

    from scrapy_simhash.decision.tracker import ChangeTracker


__all__ = ["SimhashRecrawlMiddleware"]

# The logger keeps the module's former name: it is in every log line users filter on.
logger = logging.getLogger(__name__)

#: ``request.meta`` key that forces a fetch in incremental mode (like ``dont_filter``).
FORCE_META = "simhash_force"
#: ``request.meta`` key where the gate keeps its plan for the request: ``[status, priority]``.
PLAN_META = "simhash_plan"
#: Scrapy priority of a request whose policy priority is 1 (just due).
PRIORITY_SCALE = 100
_MAX_PRIORITY = 10**6
_DROP = (PLAN_NOT_DUE, "over_budget")
_SUMMARY = ("due", "not_due", "over_budget", "forced", "not_modified", "gone", "moved")


def ignore_in_signal() -> bool:
    """Whether the engine drops a request when a ``request_scheduled`` handler raises IgnoreRequest."""
    import scrapy

    return tuple(int(p) for p in scrapy.__version__.split(".")[:3] if p.isdigit()) >= (2, 11, 2)


class SimhashRecrawlMiddleware:
    """Downloader middleware for incremental crawls: drop known URLs that are not due, send the stored
    validators back, and record 304, gone and moved URLs.

    What it does with each request and response, and the stats it counts, is in
    ``docs/usage/incremental.rst``; store errors fail open (``simhash/store_error``).
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.state = CrawlState.of(crawler)
        self.config = self.state.config
        self.stats = crawler.stats
        self._passed: set[str] = set()  # keys let through in this crawl
        self._due_now = 0  # of those counted simhash/due, the ones whose due time had come
        self._warned = False
        self._ignore_in_signal = ignore_in_signal()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = get_config(crawler)
        if not config.enabled:
            raise NotConfigured("scrapy-simhash is disabled; set SIMHASH_ENABLED = True")
        mw = cls(crawler)
        if config.incremental:
            crawler.signals.connect(mw.request_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_closed(self, spider: Spider) -> None:
        """One summary line; in incremental mode, one more when no known URL was fetched, saying why."""
        if self.stats is None:
            return
        counts = {name: self.stats.get_value(f"simhash/{name}", 0) for name in _SUMMARY}
        labels = {name: f"%({name})d {name.replace('_', ' ')}" for name in _SUMMARY}
        if self.config.recrawl_budget:  # the budget's selection holds URLs not due yet: not "due"
            counts["due_now"] = self._due_now
            labels["due"] = "%(due)d selected by SIMHASH_RECRAWL_BUDGET (%(due_now)d of them due)"
        logger.info("simhash recrawl: " + ", ".join(labels.values()), counts, extra={"spider": spider})
        if self.config.incremental and not counts["due"]:
            why = self._why_nothing_known()
            if why:
                logger.info("simhash recrawl: no known URL was due in this crawl: %s", why, extra={"spider": spider})

    def _why_nothing_known(self) -> str | None:
        """Why a crawl fetched no known URL as due, as its selection found the index (``None``: no
        selection was made, or the index could not say)."""
        from scrapy_simhash.schedule import iso

        tracker = self._tracker()
        selection = None if tracker is None else self.state.selection_of(tracker)
        if selection is None:
            return None
        if selection.failed:
            return "the index could not be read to select them (the store error above)"
        if selection.rows:
            return f"{len(selection.rows)} were selected and none was fetched (the crawl ended before them)"
        if selection.next_due is None:
            return "the index held no known URL when the crawl started (every URL was new to it)"
        if self.config.recrawl_budget:
            return f"every known URL is gone; the next check is due at {iso(selection.next_due)}"
        return (
            f"the next is due at {iso(selection.next_due)}; set SIMHASH_RECRAWL_BUDGET (pages per run) to fetch "
            "the most valuable known URLs at every run, due or not"
        )

    # -- the index ---------------------------------------------------------------------------

    def _tracker(self) -> ChangeTracker | None:
        """The tracker over the spider middleware's index (``None``: none; warned about once)."""
        tracker = self.state.tracker()
        if tracker is not None:
            return tracker
        if not self._warned and not self.state.page_disabled:
            self._warned = True
            logger.warning(
                "SimhashRecrawlMiddleware needs the index of SimhashSpiderMiddleware, which is not enabled "
                "or could not open it: every request passes (add 'scrapy_simhash.SimhashSpiderMiddleware' to "
                "SPIDER_MIDDLEWARES, or use ADDONS = {'scrapy_simhash.Addon': 0})"
            )
        return None

    def _inc(self, name: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"simhash/{name}")

    # -- the gate ----------------------------------------------------------------------------

    def _gate(self, request: Request) -> bool:
        """Plan ``request`` once (priority set, plan kept in its meta); whether to drop it."""
        known = request.meta.get(PLAN_META)
        if known is not None:
            return known[0] in _DROP
        tracker = self._tracker()
        if tracker is None:
            return False
        key = _key(request)
        if key in self._passed:  # let through earlier in this crawl: the duplicate filter's call
            request.meta[PLAN_META] = ["again", 0.0]
            return False
        try:
            plan = tracker.plan(key)
            status, priority = self._decide(plan, tracker)
        except Exception as exc:  # noqa: BLE001 - fail open: the request passes
            self.state.store_error(key, exc)
            request.meta[PLAN_META] = [PLAN_NEW, 0.0]
            return False
        if status in _DROP and (request.dont_filter or request.meta.get(FORCE_META)):
            status = "forced"
            self._inc(status)
        request.meta[PLAN_META] = [status, round(priority, 4)]
        if status not in _DROP:
            self._passed.add(key)
        if status == PLAN_DUE:
            self._inc("due")
            self._due_now += plan.status == PLAN_DUE
            request.priority += min(round(PRIORITY_SCALE * priority), _MAX_PRIORITY)
        elif status == PLAN_NEW:
            request.priority += self.config.new_priority
        elif status in _DROP:
            self._inc(status)
            logger.debug(
                "Dropped %(url)s: %(status)s (due at %(due)s)",
                {"url": request.url, "status": status, "due": plan.due},
                extra={"spider": self.state.spider},
            )
            return True
        return False

    def _decide(self, plan: Plan, tracker: ChangeTracker) -> tuple[str, float]:
        """The status and priority of a request planned as ``plan``: a known URL in the crawl's
        selection (:func:`crawl_selection`) is ``due`` whether or not its due time came; with a
        budget the others are ``over_budget`` when due, else ``not_due``; without one, a URL that
        became due since the crawl began is ``due`` too."""
        if plan.status == PLAN_NEW:
            return plan.status, plan.priority
        priority = crawl_selection(self.state, tracker).get(plan.key)
        if priority is not None:
            return PLAN_DUE, priority
        if not self.config.recrawl_budget:
            return plan.status, plan.priority
        return ("over_budget" if plan.status == PLAN_DUE else PLAN_NOT_DUE), 0.0

    def request_scheduled(self, request: Request, spider: Spider | None = None) -> None:
        """Plan the request before it is queued: set its priority; drop it if it is not due."""
        if self._gate(request) and self._ignore_in_signal:
            raise IgnoreRequest(f"simhash: {request.url} is not due")

    # -- downloader middleware hooks -------------------------------------------------------

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if self.config.incremental and self._gate(request):
            raise IgnoreRequest(f"simhash: {request.url} is not due")
        if self.config.conditional_requests:
            self._add_validators(request)

    def _add_validators(self, request: Request) -> None:
        headers = request.headers
        if b"If-None-Match" in headers or b"If-Modified-Since" in headers:
            return  # the user's own (or the HTTP cache's): theirs to handle
        tracker = self._tracker()
        if tracker is None:
            return
        from scrapy_simhash.store.record import PageRecord

        key = _key(request)
        if self.state.itemless(key):  # a start page this crawl found new whose fetch gave no item: fetched whole
            return
        try:
            record = PageRecord.parse(tracker.index.get_record(key))
        except Exception as exc:  # noqa: BLE001 - fail open
            self.state.store_error(key, exc)
            return
        if record is None or record.last_fp is None or record.gone:
            return
        if record.etag:
            headers[b"If-None-Match"] = record.etag
        if record.last_modified:
            headers[b"If-Modified-Since"] = record.last_modified
        if record.etag or record.last_modified:
            request.meta["simhash_conditional"] = True

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        status = response.status
        if status not in (304, 404, 410) and not request.meta.get("redirect_urls"):
            return response
        tracker = self._tracker()
        if tracker is None:
            return response
        key = _key(request, response.url)
        answered = False  # a 304 to our own conditional request, recorded as an unchanged fetch
        try:
            for url in request.meta.get("redirect_urls") or ():
                if tracker.moved(canonical_key(url), key):
                    self._inc("moved")
            if status == 304 and request.meta.get("simhash_conditional"):
                verdict = tracker.not_modified(key, validators=validators(response))
                if verdict is not None:
                    answered = True
                    self._inc("not_modified")
                    request.meta.update(  # response.meta once the response is tied to the request
                        simhash_fp=verdict.fp,
                        simhash_verdict=verdict.verdict,
                        simhash_distance=0,
                        simhash_duplicate_of=verdict.duplicate_of,
                    )
            elif status in (404, 410) and tracker.gone(key, remove=self.config.remove_gone):
                self._inc("gone")
        except Exception as exc:  # noqa: BLE001 - fail open: the response passes
            self.state.store_error(key, exc)
        if answered and not _spider_handles(request, 304, self.crawler):
            # Scrapy's HttpErrorMiddleware would drop it with one INFO line per page; it is counted
            # (simhash/not_modified) and ends here, unlogged (an IgnoreRequest reaches only an errback).
            raise IgnoreRequest(f"simhash: {request.url} is not modified (304)")
        return response


def _spider_handles(request: Request, status: int, crawler: Crawler) -> bool:
    """Whether the spider is given responses of ``status`` (HttpErrorMiddleware's rule: the
    request's ``handle_httpstatus_all`` / ``handle_httpstatus_list`` meta, else
    ``HTTPERROR_ALLOW_ALL``, else the spider's ``handle_httpstatus_list`` or ``HTTPERROR_ALLOWED_CODES``)."""
    meta = request.meta
    if meta.get("handle_httpstatus_all", False):
        return True
    if "handle_httpstatus_list" in meta:
        return status in meta["handle_httpstatus_list"]
    settings = crawler.settings
    if settings.getbool("HTTPERROR_ALLOW_ALL"):
        return True
    allowed = getattr(crawler.spider, "handle_httpstatus_list", None)
    return status in (settings.getlist("HTTPERROR_ALLOWED_CODES") if allowed is None else allowed)


def _key(request: Request, url: str | None = None) -> str:
    return str(request.meta.get("simhash_key") or canonical_key(url or request.url))
