"""Incremental crawls, with an injected clock: the schedule kept in each record by ChangeTracker,
request plans, the crawl's selection (the budget spent due or not, unit-free sizes, the default
interval that follows from the budget) and the due list, SimhashRecrawlMiddleware (the gate,
priorities, conditional requests, gone and moved pages, the line saying why no known URL was
fetched), the selected URLs put before any spider's start requests, records of non-text and empty
responses, with the spider helper and the settings."""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pytest
from helpers.pages import (
    EN_ARTICLES,
    SimhashTestSpider,
    article_html,
    build_from_crawler,
    html_page,
    make_response,
    run,
)
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.settings import Settings
from scrapy.spiders import CrawlSpider, Rule

from scrapy_simhash import IncrementalSpiderMixin, SimhashIndex, SimhashRecrawlMiddleware, due_report, due_requests
from scrapy_simhash.decision.selection import run_period
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.decision.verdicts import CHANGED, NEW, UNCHANGED
from scrapy_simhash.fingerprint import PageFingerprint
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.schedule import (
    DAY,
    HOUR,
    FreshnessPolicy,
    NutchAdaptivePolicy,
    ScheduleColumns,
    plan_run,
    run_priorities,
    size_scale,
)
from scrapy_simhash.scrapy.recrawl import ignore_in_signal
from scrapy_simhash.scrapy.state import CrawlState
from scrapy_simhash.store.record import PageRecord

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue

T0 = 1_700_000_000.0
FAR = [0x0000_0000_0000_0000, 0xFFFF_FFFF_0000_0000, 0x0000_FFFF_FFFF_0000, 0xFFFF_0000_FFFF_FFFF]


class Clock:
    """An injected clock: ``clock()`` is ``clock.now``."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def tracker(policy: Any = None, clock: Clock | None = None) -> ChangeTracker:
    policy = policy or FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=4 * DAY)
    return ChangeTracker(SimhashIndex(), policy=policy, clock=clock or Clock())


def fetch_when_due(t: ChangeTracker, clock: Clock, key: str, fps: Callable[[int], int], fetches: int) -> PageRecord:
    """Fetch ``key`` ``fetches`` times, each time when its record says it is due."""
    record = t.observe(key, PageFingerprint.of(fps(0))).record
    for i in range(1, fetches + 1):
        assert record is not None and record.next_due is not None
        clock.now = record.next_due
        record = t.observe(key, PageFingerprint.of(fps(i))).record
    assert record is not None
    return record


# -- the schedule in the record ---------------------------------------------------------------------


def test_every_fetch_writes_the_schedule_and_the_due_index():
    clock = Clock()
    t = tracker(clock=clock)
    verdict = t.observe("https://a.example/", PageFingerprint.of(FAR[0]))
    assert verdict.verdict == NEW
    record = verdict.record
    assert record is not None and record.schedule is not None and record.next_due is not None
    assert record.next_due == pytest.approx(record.schedule["next_due"]) and record.next_due > T0
    due = pytest.approx(record.next_due, abs=1e-3)
    assert t.index.records_due(record.next_due) == [("https://a.example/", due)]  # type: ignore[comparison-overlap]  # approx equals the float
    assert t.index.records_due(record.next_due - 1) == []
    back = PageRecord.from_bytes(t.index.get_record("https://a.example/") or b"")
    assert back.schedule == record.schedule


def test_page_changing_on_every_fetch_converges_to_the_minimum_interval():
    clock = Clock()
    t = tracker(NutchAdaptivePolicy(default_interval=DAY, min_interval=HOUR, max_interval=30 * DAY), clock)
    record = fetch_when_due(t, clock, "https://news.example/", lambda i: FAR[i % 4], 30)
    assert record.change_count == 30
    assert record.schedule is not None and record.schedule["interval"] == HOUR
    assert record.next_due == pytest.approx(record.last_fetched + HOUR)


def test_static_page_converges_to_the_maximum_interval():
    clock = Clock()
    t = tracker(clock=clock)
    record = fetch_when_due(t, clock, "https://static.example/", lambda i: FAR[0], 30)
    assert record.change_count == 0
    assert record.schedule is not None and record.schedule["interval"] == 4 * DAY


def test_noise_only_edits_are_unchanged_and_back_off():
    title, paragraphs = EN_ARTICLES["harbour"]
    fingerprinter = Fingerprinter()

    def html(i: int) -> str:  # a view counter and a date in the article change on every fetch
        noisy = f"This story was read {1000 + 37 * i} times. Updated on 2024-03-{1 + i % 28:02d}."
        return html_page(title, [*paragraphs, noisy])

    def fp(i: int) -> int:
        return fingerprinter.fingerprint_html(html(i))

    clock = Clock()
    t = tracker(clock=clock)
    record = fetch_when_due(t, clock, "https://noise.example/", fp, 24)
    assert record.change_count == 0 and record.fetch_count == 25
    assert html(1) != html(2)  # the bytes changed at every fetch (an MD5 signature would say so)
    assert all(distance is not None and distance <= 3 for _, distance in record.history[:-1])
    intervals = [r[0] for r in record.schedule["recent"]] if record.schedule else []
    assert intervals[0] > intervals[-1]  # fetched less and less often
    assert record.schedule is not None and record.schedule["interval"] == 4 * DAY


def test_schedule_weighs_a_change_by_its_change_distance_even_when_it_is_now_a_duplicate():
    clock = Clock()
    t = tracker(clock=clock)
    t.observe("https://a.example/", PageFingerprint.of(FAR[0]))
    t.observe("https://b.example/", PageFingerprint.of(FAR[1]))
    clock.now = T0 + 2 * DAY
    verdict = t.observe(
        "https://a.example/", PageFingerprint.of(FAR[1] ^ 1)
    )  # rewritten as a copy of b (1 bit from it)
    assert verdict.verdict == "near_duplicate" and verdict.distance == 1
    assert verdict.record is not None and verdict.record.schedule is not None
    assert verdict.record.schedule["size"] == (FAR[0] ^ FAR[1] ^ 1).bit_count()  # the change, not the 1 bit


def test_plan_new_due_not_due_with_the_clock():
    clock = Clock()
    t = tracker(clock=clock)
    assert t.plan("https://a.example/").status == "new"
    record = t.observe("https://a.example/", PageFingerprint.of(FAR[0])).record
    assert record is not None and record.next_due is not None
    clock.now = record.next_due - 60
    plan = t.plan("https://a.example/")
    assert plan.status == "not_due" and plan.due == record.next_due and plan.priority == 0
    clock.now = record.next_due + 3 * HOUR
    later = t.plan("https://a.example/")
    assert later.status == "due" and later.priority > 1
    clock.now += DAY
    assert t.plan("https://a.example/").priority > later.priority  # more overdue, more valuable


def test_record_without_a_schedule_is_always_due():
    t = tracker()
    t.index.put_record("https://old.example/", PageRecord.first(FAR[0], now=T0).to_bytes())
    plan = t.plan("https://old.example/")
    assert (plan.status, plan.priority, plan.due) == ("due", 1.0, None)
    # Its next fetch starts a schedule.
    record = t.observe("https://old.example/", PageFingerprint.of(FAR[0])).record
    assert record is not None and record.schedule is not None and record.next_due is not None


def test_due_list_is_ordered_by_value_and_limited():
    clock = Clock()
    t = tracker(clock=clock)
    # "hot" changed at its second fetch (a short probe interval); "cold" did not.
    for key in ("https://hot.example/", "https://cold.example/", "https://later.example/"):
        t.observe(key, PageFingerprint.of(FAR[0]))
    clock.now = T0 + 2 * DAY
    t.observe("https://hot.example/", PageFingerprint.of(FAR[1]))
    t.observe("https://cold.example/", PageFingerprint.of(FAR[0]))
    clock.now = T0 + 6 * DAY
    rows = t.due()
    keys = [row.key for row in rows]
    assert keys[0] == "https://hot.example/"
    assert "https://later.example/" in keys
    assert all(a.priority >= b.priority for a, b in itertools.pairwise(rows))
    assert all(row.priority >= 1 and row.due <= clock.now for row in rows)
    assert [row.key for row in t.due(limit=1)] == keys[:1]


def test_not_modified_is_an_unchanged_fetch_without_a_fingerprint():
    clock = Clock()
    t = tracker(clock=clock)
    assert t.not_modified("https://a.example/") is None  # unknown: nothing to be unchanged from
    t.observe("https://a.example/", PageFingerprint.of(FAR[2]), validators=('"v1"', "Tue, 01 Oct 2024 10:00:00 GMT"))
    clock.now = T0 + 2 * DAY
    verdict = t.not_modified("https://a.example/", validators=('"v2"', None))
    assert verdict is not None and verdict.verdict == UNCHANGED and verdict.fp == FAR[2]
    record = verdict.record
    assert record is not None
    assert (record.fetch_count, record.change_count, record.last_fetched) == (2, 0, T0 + 2 * DAY)
    assert (record.etag, record.last_modified) == ('"v2"', "Tue, 01 Oct 2024 10:00:00 GMT")
    assert record.schedule is not None and record.schedule["fetches"] == 2
    assert PageRecord.from_bytes(t.index.get_record("https://a.example/") or b"") == record


@pytest.mark.parametrize("remove", [False, True])
def test_gone_page_leaves_the_near_duplicate_index(remove):
    clock = Clock()
    t = tracker(clock=clock)
    assert not t.gone("https://gone.example/")  # unknown
    t.observe("https://gone.example/", PageFingerprint.of(FAR[1]))
    assert t.index.near(FAR[1])
    clock.now = T0 + DAY
    assert t.gone("https://gone.example/", remove=remove)
    assert t.index.near(FAR[1]) == []
    # A page of the same content elsewhere is new, not a duplicate of the gone one.
    assert t.observe("https://copy.example/", PageFingerprint.of(FAR[1])).verdict == NEW
    raw = t.index.get_record("https://gone.example/")
    if remove:
        assert raw is None
        assert t.plan("https://gone.example/").status == "new"
    else:
        record = PageRecord.from_bytes(raw or b"")
        assert record.gone and record.next_due == T0 + DAY + 4 * DAY
        assert t.plan("https://gone.example/").status == "not_due"
        clock.now = T0 + 40 * DAY  # it came back, with other content
        back = t.observe("https://gone.example/", PageFingerprint.of(FAR[3]))
        assert back.verdict == CHANGED and back.record is not None and not back.record.gone


def test_moved_url_is_an_alias_planned_by_its_target():
    clock = Clock()
    t = tracker(clock=clock)
    t.observe("https://old.example/a", PageFingerprint.of(FAR[0]))
    final = t.observe("https://new.example/a", PageFingerprint.of(FAR[1])).record
    assert t.moved("https://old.example/a", "https://new.example/a")
    assert not t.moved("https://old.example/a", "https://new.example/a")  # already known
    alias = PageRecord.from_bytes(t.index.get_record("https://old.example/a") or b"")
    assert alias.moved_to == "https://new.example/a" and alias.history == () and alias.next_due is None
    assert t.index.get("https://old.example/a") is None
    plan = t.plan("https://old.example/a")
    assert final is not None and plan.key == "https://new.example/a" and plan.due == final.next_due
    assert [row.key for row in t.due(now=T0 + 90 * DAY)] == ["https://new.example/a"]


# -- SimhashRecrawlMiddleware ----------------------------------------------------------------------


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def crawl(make_mw, clock):
    """``crawl(**settings)``: (spider middleware, recrawl middleware) of one crawler, incremental."""

    def factory(spidercls: type[Spider] = SimhashTestSpider, **settings: Any) -> tuple[Any, SimhashRecrawlMiddleware]:
        # A function, not the Clock: Scrapy deep-copies settings, functions stay the same object.
        settings = {"SIMHASH_INCREMENTAL": True, "SIMHASH_CLOCK": lambda: clock.now, **settings}
        mw = make_mw(spidercls, **settings)
        return mw, build_from_crawler(SimhashRecrawlMiddleware, mw.crawler)

    return factory


def _stat(mw: Any, name: str) -> int:
    return int(mw.stats.get_value(f"simhash/{name}", 0))


def schedule(gate: SimhashRecrawlMiddleware, request: Request) -> None:
    """What the engine and the downloader do with a request: the ``request_scheduled`` signal (where
    Scrapy >= 2.11.2 drops it on IgnoreRequest), then the downloader middleware."""
    gate.request_scheduled(request, gate.crawler.spider)
    gate.process_request(request)


def _fetch(mw: Any, url: str, name: str = "harbour", **headers: str) -> None:
    run(mw, make_response(url, article_html(name), headers=headers))


def test_gate_drops_not_due_and_ranks_due_and_new_requests(crawl, clock):
    mw, gate = crawl(SIMHASH_NEW_PRIORITY=50)
    _fetch(mw, "https://a.example/1", "harbour")
    _fetch(mw, "https://a.example/2", "orchard")
    clock.now = T0 + HOUR
    not_due = Request("https://a.example/1")
    with pytest.raises(IgnoreRequest):
        schedule(gate, not_due)
    with pytest.raises(IgnoreRequest):  # the downloader side alone drops it too (another process's queue)
        gate.process_request(Request("https://a.example/2"))
    assert _stat(mw, "not_due") == 2
    new = Request("https://a.example/3", priority=7)
    gate.request_scheduled(new, mw.crawler.spider)
    assert new.priority == 57 and new.meta["simhash_plan"][0] == "new"
    forced = [
        Request("https://a.example/1", dont_filter=True),
        Request("https://a.example/2", meta={"simhash_force": True}),
    ]
    for request in forced:
        schedule(gate, request)
    assert _stat(mw, "forced") == 2 and _stat(mw, "not_due") == 2
    clock.now = T0 + 5 * DAY
    gate._passed.clear()  # a new crawl
    due = Request("https://a.example/1")
    schedule(gate, due)  # planned once: the downloader side does not drop or re-rank it
    status, priority = due.meta["simhash_plan"]
    assert status == "due" and priority > 1 and due.priority == round(100 * priority)
    assert _stat(mw, "due") == 1


@pytest.mark.skipif(not ignore_in_signal(), reason="IgnoreRequest in request_scheduled needs Scrapy >= 2.11.2")
def test_not_due_request_is_dropped_before_it_is_queued(crawl, clock):
    mw, gate = crawl()
    _fetch(mw, "https://a.example/1")
    with pytest.raises(IgnoreRequest):
        gate.request_scheduled(Request("https://a.example/1"), mw.crawler.spider)


def test_gate_lets_a_url_through_once_per_crawl_to_the_duplicate_filter(crawl, clock):
    mw, gate = crawl()
    _fetch(mw, "https://a.example/1")
    clock.now = T0 + 5 * DAY
    gate.request_scheduled(Request("https://a.example/1"), mw.crawler.spider)
    _fetch(mw, "https://a.example/1")  # fetched: not due any more
    again = Request("https://a.example/1")
    gate.request_scheduled(again, mw.crawler.spider)  # a link to it later in the same crawl
    assert again.meta["simhash_plan"][0] == "again" and _stat(mw, "not_due") == 0


def test_outside_incremental_mode_nothing_is_dropped(crawl, clock):
    mw, gate = crawl(SIMHASH_INCREMENTAL=False)
    _fetch(mw, "https://a.example/1")
    request = Request("https://a.example/1")
    gate.process_request(request)
    assert "simhash_plan" not in request.meta and _stat(mw, "not_due") == 0
    assert due_requests(mw.crawler.spider) == []


class _RulesSpider(CrawlSpider):
    name = "test"
    rules = (Rule(LinkExtractor(allow=r"/articles/"), callback="parse_item"),)

    def parse_item(self, response: Any) -> Any:
        yield {"url": response.url}


def test_a_crawlspiders_selected_urls_go_to_the_rule_that_matches_them(crawl, clock):
    mw, _gate = crawl(_RulesSpider, SIMHASH_RECRAWL_BUDGET=10)
    for url, name in (("https://a.example/articles/1", "harbour"), ("https://a.example/about", "orchard")):
        _fetch(mw, url, name)
    clock.now = T0 + 8 * DAY
    requests = {r.url: r for r in due_requests(mw.crawler.spider)}
    spider = mw.crawler.spider
    article, other = requests["https://a.example/articles/1"], requests["https://a.example/about"]
    assert article.callback == spider._callback and article.meta["rule"] == 0  # parse_item gives its items
    assert other.callback is None and "rule" not in other.meta  # no rule matches: the spider's parse


def test_budget_keeps_the_most_valuable_due_urls(crawl, clock):
    mw, gate = crawl(SIMHASH_RECRAWL_BUDGET=1)
    for url, name in (("https://a.example/hot", "harbour"), ("https://a.example/cold", "orchard")):
        _fetch(mw, url, name)
    clock.now = T0 + 2 * DAY
    _fetch(mw, "https://a.example/hot", "telescope")  # changed: due again soon
    _fetch(mw, "https://a.example/cold", "orchard")
    clock.now = T0 + 8 * DAY
    gate._passed.clear()
    assert [r.url for r in due_requests(mw.crawler.spider)] == ["https://a.example/hot"]
    hot, cold = Request("https://a.example/hot"), Request("https://a.example/cold")
    gate.request_scheduled(hot, mw.crawler.spider)
    with pytest.raises(IgnoreRequest):
        schedule(gate, cold)
    assert _stat(mw, "over_budget") == 1 and hot.meta["simhash_plan"][0] == "due"


def test_with_a_budget_the_summary_says_selected_not_due(crawl, clock, caplog):
    # A budget selects known URLs whose due time has not come: the log called them "due" while
    # the due command said that nothing was due.
    mw, gate = crawl(SIMHASH_RECRAWL_BUDGET=1)
    _fetch(mw, "https://a.example/hot", "harbour")
    clock.now = T0 + 60  # a minute later: nothing is due, the budget selects one all the same
    gate._passed.clear()
    request = Request("https://a.example/hot")
    schedule(gate, request)
    assert request.meta["simhash_plan"][0] == "due" and _stat(mw, "due") == 1
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.recrawl"):
        gate.spider_closed(mw.crawler.spider)
    assert "simhash recrawl: 1 selected by SIMHASH_RECRAWL_BUDGET (0 of them due), 0 not due, " in caplog.text


def test_conditional_request_and_304_is_not_modified(crawl, clock):
    mw, gate = crawl()
    _fetch(mw, "https://a.example/e", "harbour", ETag='"abc"', **{"Last-Modified": "Tue, 01 Oct 2024 10:00:00 GMT"})
    clock.now = T0 + 5 * DAY
    request = Request("https://a.example/e")
    gate.process_request(request)
    assert request.headers[b"If-None-Match"] == b'"abc"'
    assert request.headers[b"If-Modified-Since"] == b"Tue, 01 Oct 2024 10:00:00 GMT"
    response = HtmlResponse("https://a.example/e", status=304, request=request)
    with pytest.raises(IgnoreRequest, match="not modified"):  # ends here: counted, not logged per page
        gate.process_response(request, response)
    assert _stat(mw, "not_modified") == 1 and _stat(mw, "fingerprinted") == 1
    assert response.meta["simhash_verdict"] == UNCHANGED
    record = PageRecord.from_bytes(mw.index.get_record("https://a.example/e") or b"")
    assert record.fetch_count == 2 and record.last_fetched == T0 + 5 * DAY and record.next_due > clock.now
    # The user's own validators are left alone, and a 304 to them is not ours to record.
    own = Request("https://a.example/e", headers={"If-None-Match": '"mine"'})
    gate.process_request(own)
    assert own.headers[b"If-None-Match"] == b'"mine"'
    gate.process_response(own, HtmlResponse("https://a.example/e", status=304, request=own))
    assert _stat(mw, "not_modified") == 1


@pytest.mark.parametrize(
    ("meta", "spider_list", "settings"),
    [
        ({"handle_httpstatus_list": [304]}, None, {}),
        ({"handle_httpstatus_all": True}, None, {}),
        ({}, [304], {}),
        ({}, None, {"HTTPERROR_ALLOWED_CODES": [304]}),
        ({}, None, {"HTTPERROR_ALLOW_ALL": True}),
    ],
)
def test_a_304_reaches_a_spider_that_handles_304s(crawl, clock, meta, spider_list, settings):
    mw, gate = crawl(**settings)
    if spider_list is not None:
        mw.crawler.spider.handle_httpstatus_list = spider_list
    _fetch(mw, "https://a.example/e", "harbour", ETag='"abc"')
    clock.now = T0 + 5 * DAY
    request = Request("https://a.example/e", meta=meta)
    gate.process_request(request)
    response = HtmlResponse("https://a.example/e", status=304, request=request)
    assert gate.process_response(request, response) is response  # as HttpErrorMiddleware lets it through
    assert _stat(mw, "not_modified") == 1 and response.meta["simhash_verdict"] == UNCHANGED


def test_conditional_requests_can_be_switched_off(crawl, clock):
    mw, gate = crawl(SIMHASH_CONDITIONAL_REQUESTS=False, SIMHASH_INCREMENTAL=False)
    _fetch(mw, "https://a.example/e", ETag='"abc"')
    request = Request("https://a.example/e")
    gate.process_request(request)
    assert b"If-None-Match" not in request.headers


@pytest.mark.parametrize(("setting", "kept"), [("keep", True), ("remove", False)])
def test_404_and_410_mark_known_urls_gone(crawl, clock, setting, kept, caplog):
    mw, gate = crawl(SIMHASH_GONE=setting)
    _fetch(mw, "https://a.example/g", "harbour")
    _fetch(mw, "https://a.example/h", "orchard")
    for url, status in (("https://a.example/g", 404), ("https://a.example/h", 410), ("https://a.example/x", 404)):
        request = Request(url)
        gate.process_response(request, HtmlResponse(url, status=status, request=request))
    assert _stat(mw, "gone") == 2  # /x was never known
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.recrawl"):
        gate.spider_closed(mw.crawler.spider)
    assert "simhash recrawl: 0 due, 0 not due, 0 over budget, 0 forced, 0 not modified, 2 gone, 0 moved" in caplog.text
    assert mw.index.get("https://a.example/g") is None and mw.index.get("https://a.example/h") is None
    assert (mw.index.get_record("https://a.example/g") is not None) is kept


def test_redirect_keeps_one_record_for_the_final_url(crawl, clock):
    mw, gate = crawl()
    request = Request("https://a.example/final", meta={"redirect_urls": ["https://a.example/old"]})
    response = make_response("https://a.example/final", article_html("harbour"))
    assert gate.process_response(request, response) is response
    run(mw, response)
    assert _stat(mw, "moved") == 1
    alias = PageRecord.from_bytes(mw.index.get_record("https://a.example/old") or b"")
    assert alias.moved_to == "https://a.example/final" and alias.last_fp is None
    assert PageRecord.from_bytes(mw.index.get_record("https://a.example/final") or b"").last_fp is not None
    clock.now = T0 + HOUR
    with pytest.raises(IgnoreRequest):  # the old URL is known: planned by the final URL's record
        schedule(gate, Request("https://a.example/old"))


def test_store_failure_lets_requests_and_responses_through(crawl, clock, monkeypatch):
    from scrapy_simhash.errors import StoreError

    mw, gate = crawl()
    _fetch(mw, "https://a.example/1", ETag='"v1"')

    def broken(*args: Any) -> Any:
        raise StoreError(None, "io", "disk on fire", "read")

    monkeypatch.setattr(mw.index, "get_record", broken)
    request = Request("https://a.example/1")
    schedule(gate, request)  # not due, but its record cannot be read: it passes
    assert request.meta["simhash_plan"][0] == "new" and b"If-None-Match" not in request.headers
    response = HtmlResponse("https://a.example/1", status=404, request=request)
    assert gate.process_response(request, response) is response
    assert _stat(mw, "store_error") == 3 and _stat(mw, "store_error/io") == 3
    assert _stat(mw, "not_due") == 0 and _stat(mw, "gone") == 0


def test_without_the_spider_middleware_every_request_passes(make_crawler, caplog):
    crawler = make_crawler(SIMHASH_INCREMENTAL=True)
    gate = build_from_crawler(SimhashRecrawlMiddleware, crawler)
    request = Request("https://a.example/1")
    gate.process_request(request)
    assert "needs the index of SimhashSpiderMiddleware" in caplog.text


class DueSpider(IncrementalSpiderMixin, Spider):
    name = "test"
    start_urls = ("https://a.example/start",)  # type: ignore[assignment]  # a tuple: Scrapy reads any iterable


def test_spider_mixin_yields_due_requests_first_in_priority_order(crawl, clock):
    mw, _ = crawl(DueSpider)
    spider = mw.crawler.spider
    for url, name in (("https://a.example/hot", "harbour"), ("https://a.example/cold", "orchard")):
        _fetch(mw, url, name)
    clock.now = T0 + 2 * DAY
    _fetch(mw, "https://a.example/hot", "telescope")
    _fetch(mw, "https://a.example/cold", "orchard")
    clock.now = T0 + 8 * DAY

    async def collect() -> list[Any]:
        return [r async for r in spider.start()]

    urls = [r.url for r in asyncio.run(collect())]
    assert urls == ["https://a.example/hot", "https://a.example/cold", "https://a.example/start"]
    assert [r.url for r in spider.start_requests()] == ["https://a.example/start"]  # due ones only once
    spider._simhash_due_sent = False  # Scrapy < 2.13 calls start_requests
    assert [r.url for r in spider.start_requests()] == urls
    rows = due_report(mw.index, {"SIMHASH_INCREMENTAL": True}, now=clock.now)
    assert [row[0] for row in rows] == urls[:2] and rows[0][2] > rows[1][2] >= 1


def test_due_report_uses_the_settings_policy_and_clock(tmp_path):
    with SimhashIndex() as index:
        t = ChangeTracker(index, policy=NutchAdaptivePolicy(default_interval=DAY), clock=Clock())
        t.observe("https://a.example/", PageFingerprint.of(FAR[0]))
        assert due_report(index, Settings({"SIMHASH_CLOCK": Clock(T0 + DAY / 2)})) == []
        rows = due_report(index, {"SIMHASH_CLOCK": Clock(T0 + 2 * DAY)})
        assert [(url, due) for url, due, _ in rows] == [("https://a.example/", T0 + DAY)]


# -- settings and the add-on ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"SIMHASH_RECRAWL_POLICY": "no.such.Policy"}, "SIMHASH_RECRAWL_POLICY"),
        ({"SIMHASH_RECRAWL_POLICY": "scrapy_simhash.SimhashIndex"}, "must name a SchedulePolicy"),
        ({"SIMHASH_RECRAWL_MIN_INTERVAL": 2 * DAY}, "min_interval"),
        ({"SIMHASH_RECRAWL_INTERVAL": "soon"}, "SIMHASH_RECRAWL_INTERVAL"),
        ({"SIMHASH_RECRAWL_POLICY_OPTIONS": {"no_such_option": 1}}, "no_such_option"),
        ({"SIMHASH_GONE": "forget"}, "SIMHASH_GONE"),
        ({"SIMHASH_CLOCK": 12}, "SIMHASH_CLOCK"),
        ({"SIMHASH_RECRAWL_BUDGET": -1}, "SIMHASH_RECRAWL_BUDGET"),
    ],
)
def test_bad_settings_name_the_setting(settings, message):
    from scrapy_simhash.scrapy.settings import load_config

    with pytest.raises(ValueError, match=message):
        load_config(Settings(settings))


def test_policy_and_its_constants_come_from_settings():
    from scrapy_simhash.scrapy.settings import load_config

    config = load_config(
        Settings(
            {
                "SIMHASH_RECRAWL_POLICY": "scrapy_simhash.schedule.NutchAdaptivePolicy",
                "SIMHASH_RECRAWL_INTERVAL": "7200",
                "SIMHASH_RECRAWL_MAX_INTERVAL": 10 * DAY,
                "SIMHASH_RECRAWL_POLICY_OPTIONS": {"inc_rate": 0.5},
            }
        )
    )
    policy = config.policy
    assert isinstance(policy, NutchAdaptivePolicy)
    assert (policy.default_interval, policy.min_interval, policy.max_interval, policy.inc_rate) == (
        7200,
        HOUR,
        10 * DAY,
        0.5,
    )


def test_addon_inserts_the_recrawl_middleware_in_incremental_mode():
    from scrapy_simhash.scrapy.addon import Addon

    for incremental in (False, True):
        settings = Settings({"SIMHASH_INCREMENTAL": incremental})
        Addon().update_settings(settings)
        middlewares = dict(settings["DOWNLOADER_MIDDLEWARES"])
        assert middlewares.get("scrapy_simhash.SimhashRecrawlMiddleware") == (580 if incremental else None)


# -- the crawl's selection, any spider, non-text responses ------------------------------------------


def _history(t: ChangeTracker, clock: Clock) -> None:
    """Three known URLs, none due at ``T0 + 2 DAY + HOUR``: ``hot`` changed at its refetch, the
    others did not."""
    for key in ("https://a.example/hot", "https://a.example/cold", "https://a.example/calm"):
        t.observe(key, PageFingerprint.of(FAR[0]))
    clock.now = T0 + 2 * DAY
    t.observe("https://a.example/hot", PageFingerprint.of(FAR[1]))
    t.observe("https://a.example/cold", PageFingerprint.of(FAR[0]))
    t.observe("https://a.example/calm", PageFingerprint.of(FAR[0]))
    clock.now = T0 + 2 * DAY + HOUR


def test_selection_with_a_budget_spends_it_on_the_most_valuable_known_urls_due_or_not():
    clock = Clock()
    t = tracker(clock=clock)
    _history(t, clock)
    assert t.selection() == [] == t.due()  # nothing due: without a budget the due times decide
    rows = t.selection(budget=2)
    assert len(rows) == 2 and rows[0].key == "https://a.example/hot"
    assert all(row.due > clock.now for row in rows)  # none due, the budget spent all the same
    assert rows[0].priority > rows[1].priority
    every = t.selection(budget=10)  # more budget than URLs: every known URL, in priority order
    assert [row.key for row in every[:2]] == [row.key for row in rows] and len(every) == 3
    clock.now = T0 + 30 * DAY  # all due: the budget takes the most valuable of them
    assert [row.key for row in t.selection(budget=1)] == [t.selection()[0].key]


def test_selection_ranks_change_sizes_whatever_their_unit():
    # The same URLs with change sizes in bits and as fractions (1 - similarity): the same order.
    policy = FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=30 * DAY)
    rng = np.random.default_rng(5)
    states = []
    for _ in range(40):
        state, t = policy.observe(None, 0.0, None), 0.0
        for _ in range(5):
            t += rng.uniform(0.5, 3) * DAY
            changed = bool(rng.random() < 0.5)
            state = policy.observe(state, t, changed, float(rng.uniform(4, 40)) if changed else None)
        states.append(state)
    now = max(s.last_fetch for s in states) + DAY / 2
    orders, unscaled = [], []
    for unit in (1.0, 1 / 64):
        columns = ScheduleColumns.of([s.evolve(size=s.size * unit) for s in states])
        due = columns.next_due <= now
        scale = size_scale(policy, columns.size)
        orders.append(plan_run(run_priorities(policy, columns, now, scale), due, 30).tolist())
        unscaled.append(plan_run(policy.priorities(columns, now), due, 30).tolist())
    assert orders[0] == orders[1] and len(orders[0]) == 30
    assert unscaled[0] != unscaled[1]  # the policy's own weights do depend on the unit


def test_budget_fetches_selected_urls_before_their_due_time_and_drops_the_others(crawl, clock):
    mw, gate = crawl(SIMHASH_RECRAWL_BUDGET=2)
    _history(mw.tracker, clock)
    selected = [row.key for row in mw.tracker.selection(budget=2)]
    requests = {
        url: Request(url) for url in ("https://a.example/hot", "https://a.example/cold", "https://a.example/calm")
    }
    for url in selected:
        schedule(gate, requests[url])
        assert requests[url].meta["simhash_plan"][0] == "due"
    (other,) = set(requests) - set(selected)
    with pytest.raises(IgnoreRequest):
        schedule(gate, requests[other])
    assert _stat(mw, "due") == 2 and _stat(mw, "not_due") == 1 and _stat(mw, "over_budget") == 0
    # the Scrapy priorities keep the selection's order
    assert requests[selected[0]].priority >= requests[selected[1]].priority


class PlainSpider(Spider):
    name = "test"
    start_urls = ("https://a.example/calm",)  # type: ignore[assignment]  # a tuple: Scrapy reads any iterable


class OwnDueSpider(Spider):
    """Yields the due requests itself, with a callback of its own."""

    name = "test"
    start_urls = ("https://a.example/start",)  # type: ignore[assignment]  # a tuple: Scrapy reads any iterable

    def start_requests(self):
        yield from due_requests(self, callback=self.parse_due)
        yield Request("https://a.example/start")

    async def start(self):
        for request in self.start_requests():
            yield request

    def parse_due(self, response):
        return []


def _start(mw: Any) -> list[Request]:
    """What the engine gets as start requests: the spider's, through the spider middleware."""
    spider = mw.crawler.spider
    if hasattr(mw, "process_start") and hasattr(spider, "start"):

        async def collect() -> list[Any]:
            return [r async for r in mw.process_start(spider.start())]

        return asyncio.run(collect())
    return list(mw.process_start_requests(spider.start_requests(), spider))


def test_any_spider_gets_the_selected_urls_before_its_own_start_requests(crawl, clock):
    mw, gate = crawl(PlainSpider, SIMHASH_RECRAWL_BUDGET=3)
    _history(mw.tracker, clock)
    selected = [row.key for row in mw.tracker.selection(budget=3)]
    requests = _start(mw)
    # the selection in order, but not the start URL twice: the spider's own start request fetches it
    assert [r.url for r in requests] == [url for url in selected if url != PlainSpider.start_urls[0]] + [
        PlainSpider.start_urls[0]
    ]
    start = requests[-1]
    assert start.dont_filter
    schedule(gate, start)
    assert start.meta["simhash_plan"][0] == "due"  # selected: counted as due, not forced
    assert [r.url for r in list(mw.process_start_requests(iter(()), mw.crawler.spider))] == []  # once per crawl


def test_a_spider_that_yields_due_requests_itself_gets_them_once(crawl, clock):
    mw, _ = crawl(OwnDueSpider, SIMHASH_RECRAWL_BUDGET=3)
    _history(mw.tracker, clock)
    requests = _start(mw)
    assert [r.url for r in requests] == [row.key for row in mw.tracker.selection(budget=3)] + [
        "https://a.example/start"
    ]
    assert all(r.callback == mw.crawler.spider.parse_due for r in requests[:-1])


def test_outside_incremental_mode_no_request_is_added(crawl, clock):
    mw, _ = crawl(PlainSpider, SIMHASH_INCREMENTAL=False)
    _history(mw.tracker, clock)
    clock.now = T0 + 30 * DAY
    assert [r.url for r in _start(mw)] == list(PlainSpider.start_urls)


def test_a_crawl_that_fetches_no_known_url_says_why(crawl, clock, caplog):
    mw, gate = crawl()
    assert due_requests(mw.crawler.spider) == []  # the crawl's selection, made at its start
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.recrawl"):
        gate.spider_closed(mw.crawler.spider)
    assert (
        "no known URL was due in this crawl: the index held no known URL when the crawl started (every URL was new to it)"
        in caplog.text
    )
    _history(mw.tracker, clock)
    CrawlState.of(mw.crawler).selection = None  # the next crawl makes its own selection
    assert due_requests(mw.crawler.spider) == []
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.recrawl"):
        gate.spider_closed(mw.crawler.spider)
    first_due = min(when for _, when in mw.tracker.index.records_due(math.inf, limit=10))
    assert first_due > clock.now
    when = datetime.fromtimestamp(first_due, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert f"no known URL was due in this crawl: the next is due at {when}; set SIMHASH_RECRAWL_BUDGET" in caplog.text


@pytest.mark.parametrize(
    ("body", "other", "content_type"),
    [
        (b"%PDF-1.4\n1 0 obj<<>>endobj\n", b"%PDF-1.4\n1 0 obj<<>>endobj\n%%EOF\n", "application/pdf"),
        (b"", b"<html><body><p> </p></body></html>", "text/html; charset=utf-8"),  # empty, then no text
    ],
)
def test_non_text_and_empty_responses_get_a_record_and_a_schedule(crawl, clock, body, other, content_type):
    from scrapy.http import Response

    mw, gate = crawl()
    url = "https://a.example/file"
    cls = Response if content_type == "application/pdf" else HtmlResponse
    headers = {"Content-Type": content_type, "ETag": '"v1"'}
    run(mw, make_response(url, body, headers=headers, cls=cls))
    record = PageRecord.parse(mw.index.get_record(url))
    assert record is not None and record.next_due is not None and record.etag == '"v1"'
    assert mw.index.get(url) is None and len(mw.index) == 0  # never in the near-duplicate index
    assert _stat(mw, "body_hash/new") == 1 and _stat(mw, "fingerprinted") == 0
    clock.now = T0 + HOUR
    with pytest.raises(IgnoreRequest):  # scheduled like a page: not due an hour later
        schedule(gate, Request(url))
    clock.now = record.next_due
    gate._passed.clear()
    request = Request(url)
    schedule(gate, request)
    assert request.meta["simhash_plan"][0] == "due" and request.headers[b"If-None-Match"] == b'"v1"'
    run(mw, make_response(url, body, headers=headers, cls=cls))
    run(mw, make_response(url, other, headers=headers, cls=cls))
    assert (_stat(mw, "body_hash/unchanged"), _stat(mw, "body_hash/changed")) == (1, 1)
    record = PageRecord.parse(mw.index.get_record(url))
    assert record is not None and (record.fetch_count, record.change_count) == (3, 1)


def test_with_a_budget_the_default_interval_follows_from_it_and_the_time_between_runs(crawl, clock):
    mw, _ = crawl(SIMHASH_RECRAWL_BUDGET=2)
    _history(mw.tracker, clock)  # three known URLs
    index = mw.tracker.index
    assert run_period(index, clock.now - 6 * HOUR, record=True) is None  # the first run: none before
    assert run_period(index, clock.now) == 6 * HOUR  # read only: the last start stays
    rows = due_requests(mw.crawler.spider)  # the crawl's selection, made now: it records its start
    assert len(rows) == 2 and run_period(index, clock.now + HOUR) == 3.5 * HOUR  # the median of 6 h and 1 h
    # 3 known URLs, 2 per run, runs 6 hours apart: each URL every 9 hours
    assert mw.tracker.policy.default_interval == 3 / 2 * 6 * HOUR
    assert mw.tracker.policy.probe_interval == 9 * HOUR / 8  # its probes follow (an eighth of it)
    # a crawl restarted a minute later does not make the period a minute: the median of the gaps
    run_period(index, clock.now + 7 * HOUR, record=True)
    assert run_period(index, clock.now + 7 * HOUR + 60) == 6 * HOUR
    # without a budget the configured interval stays
    t = tracker(clock=clock)
    _history(t, clock)
    t.selection(budget=0, run_period=6 * HOUR)
    assert t.policy is not None and t.policy.default_interval == DAY


def test_a_selection_the_index_could_not_make_is_not_called_an_empty_index(crawl, clock, caplog, monkeypatch):
    # A damaged index once gave an empty selection and the line "the index held no known URL".
    from scrapy_simhash.errors import StoreError

    mw, gate = crawl()
    _fetch(mw, "https://a.example/1")

    def damaged(*args: Any, **kwargs: Any) -> Any:
        raise StoreError(str(mw.index.path), "corrupt", "MDB_CORRUPTED: Located page was wrong type", "read")

    monkeypatch.setattr(mw.tracker.index, "records_due", damaged)
    with caplog.at_level(logging.INFO):
        assert due_requests(mw.crawler.spider) == []
        gate.spider_closed(mw.crawler.spider)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "(recrawl selection)" in errors[0].getMessage()  # a damaged index: ERROR
    assert "the index could not be read to select them (the store error above)" in caplog.text
    assert "the index held no known URL" not in caplog.text
