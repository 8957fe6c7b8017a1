"""SimhashUrlRulesMiddleware: skips before download a request whose URL a learned rule rewrites into a page fetched before.

Scrapy glue only: the rules, their evidence and their state come from
:class:`~scrapy_simhash.urlrules.learner.RuleBook`, kept in the index of the
:class:`~scrapy_simhash.SimhashSpiderMiddleware` of the same crawler, which tells it every verdict.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer
from twisted.internet.defer import Deferred

from scrapy_simhash.scrapy.component import canonical_key
from scrapy_simhash.scrapy.state import CrawlState, get_config
from scrapy_simhash.urlrules.learner import EXPLORED, SKIPPED, IndexRuleStore, Plan, RuleBook, index_known
from scrapy_simhash.urlrules.rules import explored

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.internet.interfaces import IReactorTime
    from typing_extensions import Self

    from scrapy_simhash.urlrules.learner import Event

__all__ = ["SimhashUrlRulesMiddleware"]

logger = logging.getLogger(__name__)

#: ``request.meta`` key of an explored request: ``[rule ids, target URL, kept URL]`` of the plan
#: that would have skipped it, checked again when its verdict comes.
RULE_META = "simhash_url_rule"
#: The longest a request waits for the verdict on another URL of the same page, in flight.
WAIT_SECONDS = 20.0
#: How much the priority of a request that tests a rule not yet decided is raised.
TEST_PRIORITY = 1
#: The most URLs remembered as being fetched (their verdict to come).
MAX_IN_FLIGHT = 10_000
#: ``request.meta`` keys that keep a request from ever being skipped by a rule.
_NEVER_SKIP_META = ("simhash_force", "dont_simhash", "simhash_key", "redirect_urls")


class SimhashUrlRulesMiddleware:
    """Downloader middleware (`SIMHASH_URL_RULES`): skip a request to a URL never fetched that a
    learned rule of its host rewrites into a URL fetched before (``simhash/url_rules/skipped``),
    except for the `SIMHASH_URL_RULES_EXPLORE` share, which is fetched and checks the rule again
    (``simhash/url_rules/explored``). Rules are learned (``simhash/url_rules/learned``, one INFO
    line each) and vetoed (``simhash/url_rules/vetoed``) from the verdicts of the spider
    middleware, with `SIMHASH_URL_RULES_MIN_SUPPORT` and `SIMHASH_URL_RULES_CONFIDENCE`.

    Never skipped: redirect targets, ``dont_filter`` requests, requests with ``simhash_force``,
    ``dont_simhash`` or ``simhash_key`` in their meta, and those the spider's
    ``simhash_must_fetch(request)`` method returns true for. Store errors fail open.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.state = CrawlState.of(crawler)
        self.config = self.state.config
        self.stats = crawler.stats
        self.book: RuleBook | None = None
        #: The canonical form (:meth:`RuleBook.form`) of a URL in flight -> the requests waiting for it.
        self._fetching: dict[str, list[Deferred[None]]] = {}
        self._form_of: dict[str, str] = {}  # a URL in flight -> its form
        #: The URLs handed to the downloader whose verdict is still to come (oldest first).
        self._in_flight: dict[str, None] = {}
        self.clock: IReactorTime | None = None  # times the waits (None: the reactor)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = get_config(crawler)
        if not config.enabled:
            raise NotConfigured("scrapy-simhash is disabled; set SIMHASH_ENABLED = True")
        if not config.url_rules:
            raise NotConfigured("scrapy-simhash URL rules are off; set SIMHASH_URL_RULES = True")
        mw = cls(crawler)
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        return mw

    def spider_opened(self, spider: Spider) -> None:
        self._rulebook()

    # -- the rule book, in the page index ----------------------------------------------------

    def _rulebook(self) -> RuleBook | None:
        """The rule book over the spider middleware's index (``None``: it is not open), opened and
        registered for its verdicts on first use."""
        tracker = self.state.tracker()
        if tracker is None:
            return None
        index = tracker.index
        if self.book is None or self.book.store.index is not index:
            self.book = RuleBook(
                IndexRuleStore(index),
                index_known(index),
                min_support=self.config.url_rules_min_support,
                confidence=self.config.url_rules_confidence,
            )
            self.state.observe(self)
        return self.book

    def _inc(self, name: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(name)

    # -- skipping ----------------------------------------------------------------------------

    def _must_fetch(self, request: Request, spider: Spider | None) -> bool:
        meta = request.meta
        if request.dont_filter or request.method != "GET" or any(meta.get(name) for name in _NEVER_SKIP_META):
            return True
        if not request.url.startswith(("http://", "https://")):
            return True
        spider = spider or self.crawler.spider
        marked = getattr(spider, "simhash_must_fetch", None)
        return bool(marked is not None and marked(request))

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        """Skip ``request`` (IgnoreRequest) when a learned rule joins its URL to a page fetched
        before. A request that a rule joins to one being fetched waits for that one's verdict
        (at most :data:`WAIT_SECONDS`), then is skipped or fetched."""
        redirected = request.meta.get("redirect_urls")
        if redirected:  # the fetch of the first URL ended in a redirect: no page of its own
            self._release(canonical_key(redirected[0]))
        if self._must_fetch(request, spider):
            return
        book = self._rulebook()
        if book is None:
            return
        key = canonical_key(request.url)
        try:
            plan = book.plan(key)
            if plan is None:
                form = book.form(key)
                if form != key and form in self._fetching:  # another URL of the same page, in flight
                    await self._wait(form)
                    plan = book.plan(key)
                if plan is None:
                    if form != key and form not in self._fetching:
                        self._fetching[form] = []
                        self._form_of[key] = form
                    self._fetch(key)
                    return
            if explored(key, self.config.url_rules_explore):
                book.count(plan, EXPLORED)
                request.meta[RULE_META] = [list(plan.rules), plan.target, plan.kept]
                self._inc("simhash/url_rules/explored")
                self._fetch(key)
                return
            book.count(plan, SKIPPED)
        except Exception as exc:  # noqa: BLE001 - fail open: the request is fetched
            self._store_error(key, exc)
            return
        self._inc("simhash/url_rules/skipped")
        logger.debug(
            "Skipped %(url)s: URL rules %(rules)s make it %(target)s, fetched before (a copy of %(kept)s)",
            {"url": request.url, "rules": ", ".join(plan.rules), "target": plan.target, "kept": plan.kept},
            extra={"spider": spider},
        )
        raise IgnoreRequest(f"simhash: {request.url} is a copy of {plan.kept} by URL rule {', '.join(plan.rules)}")

    async def _wait(self, form: str) -> None:
        """Wait until the fetch in flight whose URL rewrites into ``form`` is decided, or it failed,
        or :data:`WAIT_SECONDS` passed."""
        clock = self.clock
        if clock is None:
            from twisted.internet import reactor

            clock = reactor
        waiter: Deferred[None] = Deferred()
        waiter.addTimeout(WAIT_SECONDS, clock)
        self._fetching[form].append(waiter)
        with contextlib.suppress(defer.TimeoutError):
            await maybe_deferred_to_future(waiter)

    def _fetch(self, key: str) -> None:
        """``key`` goes to the downloader: a request that a rule would join to it tests the rule
        (see :meth:`schedule`) once its verdict comes."""
        self._in_flight[key] = None
        while len(self._in_flight) > MAX_IN_FLIGHT:  # verdicts that never came: the oldest forgotten
            del self._in_flight[next(iter(self._in_flight))]

    def _release(self, key: str) -> None:
        """The fetch of ``key`` is decided (or failed): wake the requests waiting for it."""
        self._in_flight.pop(key, None)
        form = self._form_of.pop(key, None)
        if form is None:
            return
        for waiter in self._fetching.pop(form, []):
            if not waiter.called:
                waiter.callback(None)

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        """Wake the requests waiting for ``request`` when its response will get no verdict (not a
        200 text page)."""
        if response.status != 200 or not isinstance(response, TextResponse):
            self._release(canonical_key(request.url))
        return response

    def process_exception(self, request: Request, exception: BaseException, spider: Spider | None = None) -> None:
        """Wake the requests waiting for ``request``: its fetch failed."""
        self._release(canonical_key(request.url))

    # -- learning (called by SimhashSpiderMiddleware) ----------------------------------------

    def schedule(self, request: Request) -> Request:
        """``request`` with its priority raised by :data:`TEST_PRIORITY` when its fetch would test
        a rule not yet decided, with a URL fetched before or still being fetched (so that the
        evidence comes before the copies it would skip); otherwise ``request`` as it is."""
        if self._must_fetch(request, None):
            return request
        book = self._rulebook()
        if book is None:
            return request
        try:
            tests = book.tests(canonical_key(request.url), self._in_flight)
        except Exception as exc:  # noqa: BLE001 - fail open: scheduled as it is
            self._store_error(request.url, exc)
            return request
        if not tests:
            return request
        self._inc("simhash/url_rules/tests_first")
        return request.replace(priority=request.priority + TEST_PRIORITY)

    def observe(self, key: str, response: Response, verdict: str | None, duplicate_of: str | None) -> None:
        """Learn from one verdict, then wake the requests waiting for it; never raises (a store
        error is counted and the page let be)."""
        try:
            self._learn(key, response, verdict, duplicate_of)
        finally:
            self._release(key)

    def _learn(self, key: str, response: Response, verdict: str | None, duplicate_of: str | None) -> None:
        book = self.book
        if book is None or verdict is None:
            return
        meta = getattr(response, "meta", None) or {}
        if meta.get("redirect_urls") or meta.get("simhash_key"):
            return  # a redirect's target, or a key that is no URL: no evidence about URLs
        tried = meta.get(RULE_META)
        plan = Plan(tuple(tried[0]), tried[1], tried[2]) if tried else None
        try:
            events = book.observe(key, verdict, duplicate_of, plan)
        except Exception as exc:  # noqa: BLE001 - fail open
            self._store_error(key, exc)
            return
        for event in events:
            self._report(event)

    def _report(self, event: Event) -> None:
        if event.kind == "learned":
            self._inc("simhash/url_rules/learned")
            logger.info(
                "Learned a URL rule for %(host)s: %(rule)s (%(id)s; %(support)d copies, confidence %(confidence).3f): "
                "requests it rewrites into a page fetched before are skipped",
                {
                    "host": event.host,
                    "rule": event.rule.describe(),
                    "id": event.rule.id,
                    "support": event.support,
                    "confidence": event.confidence,
                },
                extra={"spider": self.crawler.spider},
            )
            return
        self._inc("simhash/url_rules/vetoed")
        logger.log(
            logging.INFO if event.support else logging.DEBUG,
            "Vetoed the URL rule %(id)s for %(host)s (%(support)d copies): %(url)s differs from %(target)s",
            {
                "id": event.rule.id,
                "host": event.host,
                "support": event.support,
                "url": event.url,
                "target": event.target,
            },
            extra={"spider": self.crawler.spider},
        )

    def flush(self) -> None:
        """Write the counts not yet stored (before the index closes)."""
        if self.book is not None:
            self.book.flush()

    def _store_error(self, key: str, exc: BaseException) -> None:
        if not self.state.store_error(key, exc):
            self._inc("simhash/store_error")
