"""SimhashUrlRulesMiddleware's hooks called directly: the priority of a request that tests an
undecided rule, and a request that waits for the verdict on another URL of its page in flight."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.pages import article_html, make_response, run
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from twisted.internet.task import Clock

from scrapy_simhash.scrapy.urlrules import TEST_PRIORITY, WAIT_SECONDS, SimhashUrlRulesMiddleware
from scrapy_simhash.urlrules.learner import DISABLED, PINNED
from scrapy_simhash.urlrules.rules import Rule, hypotheses

HOST = "https://docs.example.com"
PAGE = f"{HOST}/guide/harbour"


@pytest.fixture
def mws(make_mw: Any) -> tuple[Any, SimhashUrlRulesMiddleware]:
    """(the spider middleware, the URL rules middleware registered with it), no request explored."""
    page = make_mw(SIMHASH_URL_RULES=True, SIMHASH_URL_RULES_EXPLORE=0)
    rules = SimhashUrlRulesMiddleware.from_crawler(page.crawler)
    assert rules._rulebook() is not None
    rules.clock = Clock()  # type: ignore[assignment]  # a Clock is an IReactorTime (zope.interface, unread by mypy)
    return page, rules


def test_a_request_that_tests_an_undecided_rule_is_scheduled_first(mws: Any) -> None:
    page, rules = mws
    run(page, make_response(PAGE, article_html("harbour")))
    copy = Request(f"{PAGE}?utm_source=feed", priority=3)
    # its rule (param:utm_source) rewrites it into a page fetched before, and is not decided yet
    assert rules.schedule(copy).priority == 3 + TEST_PRIORITY
    assert rules.crawler.stats.get_value("simhash/url_rules/tests_first") == 1
    # no rule joins it to a fetched page; a request never skipped
    assert rules.schedule(Request(f"{HOST}/guide/telescope?utm_source=feed")).priority == 0
    assert rules.schedule(Request(f"{PAGE}?utm_source=feed", dont_filter=True)).priority == 0
    # once its rules are decided (here set by hand: param:utm_source, value:utm_source=mail), it
    # comes in its turn
    later = f"{PAGE}?utm_source=mail"
    assert rules.book is not None
    for rule, _ in hypotheses(later):
        rules.book.set_override("docs.example.com", rule, DISABLED)
    assert rules.schedule(Request(later)).priority == 0
    assert rules.crawler.stats.get_value("simhash/url_rules/tests_first") == 1


def test_a_request_that_tests_a_rule_with_a_url_still_in_flight_is_scheduled_first(mws: Any) -> None:
    """A copy found before its page's verdict (the spider's verdicts lag the downloads) tests the
    rule all the same: scheduled first, not left to a depth-first walk to fetch at the end."""
    _, rules = mws
    asyncio.run(rules.process_request(Request(PAGE)))  # handed to the downloader, no verdict yet
    assert rules.schedule(Request(f"{PAGE}?utm_source=feed")).priority == TEST_PRIORITY
    assert rules.schedule(Request(f"{HOST}/guide/telescope?utm_source=feed")).priority == 0
    rules.process_exception(Request(PAGE), ConnectionRefusedError())  # no verdict will come
    assert rules.schedule(Request(f"{PAGE}?utm_source=mail")).priority == 0


async def _turns() -> None:
    """Let the event loop run what is ready (a fixed number of turns: no clock involved)."""
    for _ in range(5):
        await asyncio.sleep(0)


def _pinned(rules: SimhashUrlRulesMiddleware) -> None:
    assert rules.book is not None
    rules.book.set_override("docs.example.com", Rule.parse("param:utm_source"), PINNED)


def test_a_request_joined_to_a_url_in_flight_waits_for_its_verdict_then_is_skipped(mws: Any) -> None:
    page, rules = mws
    _pinned(rules)
    first, second = f"{PAGE}?utm_source=feed", f"{PAGE}?utm_source=mail"

    async def crawl() -> None:
        assert await rules.process_request(Request(first)) is None  # fetched: its page is unknown
        waiting = asyncio.ensure_future(rules.process_request(Request(second)))
        await _turns()
        assert not waiting.done()  # the fetch of first, the same page by the rule, is in flight
        run(page, make_response(first, article_html("harbour")))  # first's verdict
        await _turns()
        assert waiting.done()
        with pytest.raises(IgnoreRequest, match="is a copy of"):
            waiting.result()

    asyncio.run(crawl())
    assert rules.crawler.stats.get_value("simhash/url_rules/skipped") == 1


@pytest.mark.parametrize("end", ["failed", "timeout"])
def test_a_request_waiting_for_a_fetch_that_fails_or_takes_too_long_is_fetched(mws: Any, end: str) -> None:
    _, rules = mws
    _pinned(rules)
    first, second = Request(f"{PAGE}?utm_source=feed"), Request(f"{PAGE}?utm_source=mail")

    async def crawl() -> None:
        assert await rules.process_request(first) is None
        waiting = asyncio.ensure_future(rules.process_request(second))
        await _turns()
        assert not waiting.done()
        if end == "failed":
            rules.process_exception(first, ConnectionRefusedError())
        else:
            rules.clock.advance(WAIT_SECONDS)
        await _turns()
        assert waiting.done()
        assert waiting.result() is None  # no verdict to join it to: fetched

    asyncio.run(crawl())
    assert not rules.crawler.stats.get_value("simhash/url_rules/skipped")
