"""CrawlState: one per crawler, holding what its components share (the settings, the spider
middleware's index, the crawl's selection)."""

from __future__ import annotations

import pytest
from helpers.pages import article_html, build_from_crawler, make_response, run
from scrapy import Request
from scrapy.exceptions import IgnoreRequest

from scrapy_simhash import SimhashRecrawlMiddleware, due_requests
from scrapy_simhash.scrapy.state import CrawlState, get_config

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue

URL = "https://a.example/harbour"


def test_two_crawlers_in_one_process_have_two_states_and_each_gate_reads_its_own_index(make_mw, tmp_path):
    first = make_mw(SIMHASH_INCREMENTAL=True, SIMHASH_DIR=str(tmp_path / "one"))
    second = make_mw(SIMHASH_INCREMENTAL=True, SIMHASH_DIR=str(tmp_path / "two"))
    states = CrawlState.of(first.crawler), CrawlState.of(second.crawler)
    assert states[0] is not states[1]
    assert CrawlState.of(first.crawler) is states[0]  # kept on the crawler
    assert [state.page for state in states] == [first, second]
    assert get_config(first.crawler) is states[0].config is first.config

    gates = [build_from_crawler(SimhashRecrawlMiddleware, mw.crawler) for mw in (first, second)]
    assert [gate.state.tracker() for gate in gates] == [first.tracker, second.tracker]
    run(first, make_response(URL, article_html("harbour")))  # known to the first crawl only
    with pytest.raises(IgnoreRequest):  # fetched a moment ago: not due
        gates[0].process_request(Request(URL))
    request = Request(URL)
    gates[1].process_request(request)  # new to the second crawl's index: it passes
    assert request.meta["simhash_plan"][0] == "new"


def test_a_crawler_without_the_spider_middleware_has_no_index_in_its_state(make_crawler, caplog):
    crawler = make_crawler(SIMHASH_INCREMENTAL=True)
    gate = build_from_crawler(SimhashRecrawlMiddleware, crawler)
    state = CrawlState.of(crawler)
    assert gate.state is state and state.page is None and state.tracker() is None
    assert due_requests(crawler.spider) == [] and state.selection is None
    assert not state.store_error("https://a.example/", OSError("disk"))  # nothing to count it
    gate.process_request(Request(URL))  # passes, with the warning
    assert "needs the index of SimhashSpiderMiddleware" in caplog.text


def test_the_selection_belongs_to_the_tracker_that_made_it(make_mw):
    mw = make_mw(SIMHASH_INCREMENTAL=True)
    state = CrawlState.of(mw.crawler)
    assert due_requests(mw.crawler.spider) == []  # an empty index: an empty selection, made now
    selection = state.selection
    assert selection is not None and selection.made_by(mw.tracker) and not selection.rows
    assert state.selection_of(mw.tracker) is selection
    mw.spider_closed(mw.crawler.spider)
    mw.spider_opened(mw.crawler.spider)  # the index opened again: a new tracker, no selection yet
    assert state.selection_of(mw.tracker) is None
