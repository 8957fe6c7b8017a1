"""SimhashSpiderMiddleware: verdicts, held-back items, opt-outs, stats, logs and bad responses."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import Any, cast

import pytest
import scrapy
from helpers.pages import (
    EN_ARTICLES,
    SimhashTestSpider,
    article_html,
    build_from_crawler,
    make_response,
    run,
)
from scrapy import Request
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse

from scrapy_simhash.decision.verdicts import VERDICTS
from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware
from scrapy_simhash.scrapy.state import get_config
from scrapy_simhash.store.record import PageRecord

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue

URL_A = "https://news.example.com/2024/harbour-cranes"
URL_B = "https://mirror.example.org/print/harbour-cranes?utm_source=feed"


def stat(mw: Any, key: str) -> Any:
    return mw.crawler.stats.get_value(key)


def verdict_counts(mw: Any) -> dict[str, int]:
    return {v: stat(mw, f"simhash/{v}") or 0 for v in VERDICTS}


def assert_stats_add_up(mw: Any) -> None:
    assert (stat(mw, "simhash/fingerprinted") or 0) == sum(verdict_counts(mw).values())


# -- one test per verdict -----------------------------------------------------------------------


def test_first_page_is_new_and_items_pass(make_mw):
    mw = make_mw()
    response = make_response(URL_A, article_html("harbour"))
    item = {"title": "x"}
    request = Request("https://news.example.com/next")
    out = run(mw, response, [item, request])
    assert out == [item, request]
    assert response.meta["simhash_verdict"] == "new"
    assert isinstance(response.meta["simhash_fp"], int) and response.meta["simhash_fp"] > 0
    assert response.meta["simhash_distance"] is None
    assert response.meta["simhash_duplicate_of"] is None
    assert verdict_counts(mw) == {"new": 1, "near_duplicate": 0, "unchanged": 0, "changed": 0}
    assert stat(mw, "simhash/fingerprinted") == 1
    assert stat(mw, "simhash/items_dropped") is None


def test_near_duplicate_holds_back_items_and_follows_requests(make_mw, caplog):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    # The same article in a mirror's template, under a tracking-parameter URL.
    mirror = article_html("harbour", site="Mirror Daily", sidebar="<p>Most read: weather, sport, markets</p>")
    response = make_response(URL_B, mirror)
    item = {"title": "copy"}
    request = Request("https://mirror.example.org/other")
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.middleware"):
        out = run(mw, response, [item, request])
    assert out == [request]
    meta = response.meta
    assert meta["simhash_verdict"] == "near_duplicate"
    assert meta["simhash_duplicate_of"] == URL_A
    assert 0 <= meta["simhash_distance"] <= 3
    assert stat(mw, "simhash/near_duplicate") == 1
    assert stat(mw, "simhash/items_dropped") == 1
    assert URL_A in caplog.text and URL_B in caplog.text
    assert f"distance {meta['simhash_distance']}" in caplog.text
    assert_stats_add_up(mw)


def test_unchanged_page_items_held_back_by_default(make_mw):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    response = make_response(URL_A, article_html("harbour"))
    request = Request("https://news.example.com/next")
    out = run(mw, response, [{"a": 1}, request])
    assert out == [request]
    assert response.meta["simhash_verdict"] == "unchanged"
    assert response.meta["simhash_distance"] == 0
    assert stat(mw, "simhash/unchanged") == 1
    assert stat(mw, "simhash/items_dropped") == 1


def _start_response(url: str, body: str) -> Response:
    """A response to a start request (``dont_filter``: Scrapy's duplicate filter never sees it)."""
    return HtmlResponse(url=url, body=body.encode(), request=Request(url, dont_filter=True))


def test_a_start_page_fetched_again_in_its_crawl_gives_its_items(make_mw):
    mw = make_mw()
    link = Request("https://news.example.com/next")
    assert run(mw, _start_response(URL_A, article_html("harbour")), [link]) == [link]  # parse_start_url
    item = {"a": 1}
    response = make_response(URL_A, article_html("harbour"))  # its link, to the rule's callback
    assert run(mw, response, [item]) == [item]
    assert response.meta["simhash_verdict"] == "unchanged" and not stat(mw, "simhash/items_dropped")
    again = make_response(URL_A, article_html("harbour"))  # its items given once: a third fetch is held
    assert run(mw, again, [{"a": 1}]) == [] and stat(mw, "simhash/items_dropped") == 1


def test_a_start_page_that_gave_its_items_or_was_known_holds_them_back(make_mw):
    mw = make_mw()
    assert run(mw, _start_response(URL_A, article_html("harbour")), [{"a": 1}]) == [{"a": 1}]
    assert run(mw, make_response(URL_A, article_html("harbour")), [{"a": 1}]) == []
    run(mw, make_response(URL_B, article_html("orchard")))  # known before this fetch (a former run)
    assert run(mw, _start_response(URL_B, article_html("orchard")), []) == []  # unchanged start page
    assert run(mw, make_response(URL_B, article_html("orchard")), [{"b": 1}]) == []
    assert stat(mw, "simhash/items_dropped") == 2


def test_unchanged_page_items_pass_without_drop_unchanged(make_mw):
    mw = make_mw(SIMHASH_DROP_UNCHANGED=False)
    run(mw, make_response(URL_A, article_html("harbour")))
    item = {"a": 1}
    response = make_response(URL_A, article_html("harbour"))
    assert run(mw, response, [item]) == [item]
    assert response.meta["simhash_verdict"] == "unchanged"


def test_changed_page(make_mw):
    mw = make_mw()
    first = make_response(URL_A, article_html("harbour"))
    run(mw, first)
    response = make_response(URL_A, article_html("telescope"))
    item = {"a": 1}
    assert run(mw, response, [item]) == [item]
    assert response.meta["simhash_verdict"] == "changed"
    assert response.meta["simhash_distance"] > 3
    assert stat(mw, "simhash/changed") == 1
    record = PageRecord.from_bytes(mw.index.get_record(URL_A))
    assert record.fetch_count == 2 and record.change_count == 1
    assert record.last_fp == response.meta["simhash_fp"]
    assert record.history[1][0] == first.meta["simhash_fp"]
    # The index holds the new content: a copy of the old one elsewhere is new now.
    assert mw.index.get(URL_A) == response.meta["simhash_fp"]
    other = make_response("https://elsewhere.example.net/a", article_html("harbour"))
    run(mw, other)
    assert other.meta["simhash_verdict"] == "new"


@pytest.mark.parametrize("keep_adds", [0, 100])
def test_change_threshold_decides_changed(make_mw, keep_adds):
    mw = make_mw(SIMHASH_CHANGE_THRESHOLD=64, SIMHASH_CHANGE_SIMILARITY=0, SIMHASH_KEEP_ADDS=keep_adds)
    run(mw, make_response(URL_A, article_html("harbour")))
    response = make_response(URL_A, article_html("telescope"))
    run(mw, response)
    # Another article adds all its text: changed by what it adds, whatever the threshold.
    assert response.meta["simhash_verdict"] == ("changed" if keep_adds else "unchanged")
    assert stat(mw, "simhash/changed/adds") == (1 if keep_adds else None)


def test_changed_page_that_now_copies_another_url_is_near_duplicate(make_mw):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    run(mw, make_response("https://news.example.com/orchard", article_html("orchard")))
    response = make_response("https://news.example.com/orchard", article_html("harbour", site="Other"))
    assert run(mw, response, [{"a": 1}]) == []
    assert response.meta["simhash_verdict"] == "near_duplicate"
    assert response.meta["simhash_duplicate_of"] == URL_A
    # Its old content no longer stands for the URL in the index.
    assert mw.index.get("https://news.example.com/orchard") is None
    assert_stats_add_up(mw)


def test_index_and_records_persist_across_crawls(make_mw):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    mw.spider_closed(mw.crawler.spider, "finished")
    second = make_mw()
    response = make_response(URL_A, article_html("harbour"))
    run(second, response)
    assert response.meta["simhash_verdict"] == "unchanged"


@pytest.mark.parametrize("how", ["setting", "spider_attribute"])
def test_reset_starts_from_an_empty_index(make_mw, how):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    mw.spider_closed(mw.crawler.spider, "finished")

    class ResetSpider(SimhashTestSpider):
        simhash_reset = True

    second = make_mw(SIMHASH_RESET=True) if how == "setting" else make_mw(ResetSpider)
    response = make_response(URL_A, article_html("harbour"))
    run(second, response)
    assert response.meta["simhash_verdict"] == "new"


def test_simhash_key_meta_names_the_page(make_mw):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour"), meta={"simhash_key": "story-1"}))
    response = make_response(URL_B, article_html("harbour"), meta={"simhash_key": "story-1"})
    run(mw, response)
    assert response.meta["simhash_verdict"] == "unchanged"
    assert mw.index.get("story-1") is not None


def test_url_is_canonicalized(make_mw):
    mw = make_mw()
    run(mw, make_response("https://news.example.com/a?b=2&a=1", article_html("harbour")))
    response = make_response("https://news.example.com/a?a=1&b=2", article_html("harbour"))
    run(mw, response)
    assert response.meta["simhash_verdict"] == "unchanged"


def test_generator_callback_sees_the_verdict(make_mw):
    mw = make_mw()
    response = make_response(URL_A, article_html("harbour"))

    def callback():
        yield {"verdict": response.meta.get("simhash_verdict")}

    assert run(mw, response, callback()) == [{"verdict": "new"}]


# -- items and requests --------------------------------------------------------------------------


def test_follow_duplicates_false_drops_requests_of_duplicate_pages(make_mw):
    mw = make_mw(SIMHASH_FOLLOW_DUPLICATES=False)
    request = Request("https://news.example.com/next")
    assert run(mw, make_response(URL_A, article_html("harbour")), [request]) == [request]
    assert run(mw, make_response(URL_B, article_html("harbour")), [request, {"a": 1}]) == []
    assert stat(mw, "simhash/requests_dropped") == 1
    assert stat(mw, "simhash/items_dropped") == 1


@dataclasses.dataclass
class ArticleData:
    title: str
    simhash: dict | None = None


class ArticleItem(scrapy.Item):
    title = scrapy.Field()
    simhash = scrapy.Field()


class BareItem(scrapy.Item):
    title = scrapy.Field()


def test_item_field_receives_fingerprint_info(make_mw):
    mw = make_mw(SIMHASH_ITEM_FIELD="simhash")
    items = [{"title": "d"}, ArticleData("dc"), ArticleItem(title="i")]
    response = make_response(URL_A, article_html("harbour"))
    out = run(mw, response, items)
    assert len(out) == 3
    expected = {
        "fp": format(response.meta["simhash_fp"], "016x"),
        "verdict": "new",
        "distance": None,
        "duplicate_of": None,
    }
    assert out[0]["simhash"] == expected
    assert out[1].simhash == expected
    assert out[2]["simhash"] == expected


def test_item_field_missing_on_item_class_is_counted_not_raised(make_mw, caplog):
    mw = make_mw(SIMHASH_ITEM_FIELD="simhash")
    item = BareItem(title="x")
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.scrapy.middleware"):
        out = run(mw, make_response(URL_A, article_html("harbour")), [item])
    assert out == [item]
    assert stat(mw, "simhash/item_field_error") == 1
    assert "SIMHASH_ITEM_FIELD" in caplog.text


# -- opt-outs ---------------------------------------------------------------------------------------


def test_dont_simhash_meta_skips_the_response(make_mw):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    item = {"a": 1}
    response = make_response(URL_B, article_html("harbour"), meta={"dont_simhash": True})
    assert run(mw, response, [item]) == [item]
    assert stat(mw, "simhash/skipped/dont_simhash") == 1
    assert "simhash_verdict" not in response.meta
    assert stat(mw, "simhash/fingerprinted") == 1


def test_spider_attribute_opts_out(make_mw):
    class QuietSpider(SimhashTestSpider):
        simhash_enabled = False

    mw = make_mw(QuietSpider)
    item = {"a": 1}
    for _ in range(2):
        response = make_response(URL_A, article_html("harbour"))
        assert run(mw, response, [item]) == [item]
    assert mw.index is None
    assert stat(mw, "simhash/fingerprinted") is None
    assert "simhash_verdict" not in response.meta


def test_disabled_by_default(make_crawler):
    from scrapy.exceptions import NotConfigured

    crawler = make_crawler(SIMHASH_ENABLED=False)
    with pytest.raises(NotConfigured, match="SIMHASH_ENABLED = True"):
        build_from_crawler(SimhashSpiderMiddleware, crawler)


def test_stale_meta_from_an_earlier_response_is_cleared(make_mw):
    mw = make_mw()
    first = make_response(URL_A, article_html("harbour"))
    run(mw, first)
    # A spider that passes response.meta on to the next request.
    image = make_response("https://news.example.com/logo.png", b"\x89PNG\r\n", cls=Response, meta=dict(first.meta))
    run(mw, image)
    assert "simhash_verdict" not in image.meta


# -- stats and logs -------------------------------------------------------------------------------


def test_stats_add_up_and_summary_line(make_mw, caplog):
    mw = make_mw(SIMHASH_STATS_VERBOSE=True)
    pages = [
        (URL_A, "harbour"),
        (URL_B, "harbour"),
        ("https://news.example.com/orchard", "orchard"),
        ("https://news.example.com/orchard", "orchard"),
        (URL_A, "telescope"),
        ("https://zh.example.com/metro", "metro"),
        ("https://zh.example.com/metro-copy", "metro"),
        ("https://zh.example.com/tea", "tea"),
    ]
    for url, name in pages:
        run(mw, make_response(url, article_html(name)), [{"u": url}])
    run(mw, make_response("https://news.example.com/a.png", b"\x89PNG", cls=Response))
    counts = verdict_counts(mw)
    assert counts == {"new": 4, "near_duplicate": 2, "unchanged": 1, "changed": 1}
    assert stat(mw, "simhash/fingerprinted") == 8
    assert stat(mw, "simhash/items_dropped") == 3
    assert stat(mw, "simhash/skipped/non_text") == 1
    assert stat(mw, "simhash/time_ms_max") > 0
    assert stat(mw, "simhash/candidates_max") is not None
    distances = {k: v for k, v in mw.crawler.stats.get_stats().items() if k.startswith("simhash/distance/")}
    assert sum(distances.values()) == 4  # every verdict but "new" has a distance
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.middleware"):
        mw.spider_closed(mw.crawler.spider, "finished")
    summary = [r.getMessage() for r in caplog.records if r.getMessage().startswith("simhash: ")]
    assert len(summary) == 1
    assert "8 pages fingerprinted (4 new, 2 near-duplicate, 1 unchanged, 1 changed)" in summary[0]
    assert mw.index is None


def _near_duplicate_logs(caplog: Any) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith("Near-duplicate")]


def test_first_duplicate_at_info_then_debug(make_mw, caplog):
    mw = make_mw()
    with caplog.at_level(logging.DEBUG, logger="scrapy_simhash.scrapy.middleware"):
        run(mw, make_response(URL_A, article_html("harbour")))
        for i in range(3):
            run(mw, make_response(f"{URL_A}-copy{i}", article_html("harbour")))
    records = _near_duplicate_logs(caplog)
    assert [r.levelno for r in records] == [logging.INFO, logging.DEBUG, logging.DEBUG]
    assert "no more duplicates will be shown (see SIMHASH_DEBUG" in records[0].getMessage()


def test_simhash_debug_logs_every_duplicate_at_info(make_mw, caplog):
    mw = make_mw(SIMHASH_DEBUG=True)
    with caplog.at_level(logging.DEBUG, logger="scrapy_simhash.scrapy.middleware"):
        run(mw, make_response(URL_A, article_html("harbour")))
        for i in range(3):
            run(mw, make_response(f"{URL_A}-copy{i}", article_html("harbour")))
    assert [r.levelno for r in _near_duplicate_logs(caplog)] == [logging.INFO] * 3


def test_open_logs_the_store_path_and_layout(make_crawler, caplog):
    crawler = make_crawler()
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.middleware"):
        mw = build_from_crawler(SimhashSpiderMiddleware, crawler)
    try:
        assert "Using the simhash index on LMDB in" in caplog.text
        assert str(Path(get_config(crawler).dir) / "test" / "pages") in caplog.text
        assert "max_distance=3" in caplog.text
    finally:
        mw.spider_closed(crawler.spider, "finished")


def test_same_response_gets_one_verdict(make_mw):
    mw = make_mw()
    response = make_response(URL_A, article_html("harbour"))
    run(mw, response, [{"a": 1}])
    assert run(mw, response, [{"a": 2}]) == [{"a": 2}]
    assert stat(mw, "simhash/fingerprinted") == 1
    assert response.meta["simhash_verdict"] == "new"


# -- failures: counted, never raised ----------------------------------------------------------------


def test_store_error_fails_open(make_mw, caplog):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    mw.index.close()  # every later store call fails
    item = {"a": 1}
    response = make_response(URL_B, article_html("harbour"))
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.scrapy.middleware"):
        assert run(mw, response, [item]) == [item]
    assert response.meta["simhash_verdict"] == "new"
    assert stat(mw, "simhash/store_error") == 1
    assert "index error for" in caplog.text
    assert_stats_add_up(mw)
    mw.index = None  # already closed


def test_store_error_log_names_the_page(make_mw, caplog):
    mw = make_mw()
    mw.index.close()
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.scrapy.middleware"):
        run(mw, make_response(URL_A, article_html("harbour")))
    assert f"simhash index error for {URL_A}; the page is treated as new" in caplog.text
    mw.index = None  # already closed


def test_unreadable_record_is_a_store_error_and_replaced(make_mw, caplog):
    mw = make_mw()
    mw.index.put_record(URL_A, b"not json")
    response = make_response(URL_A, article_html("harbour"))
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.scrapy.middleware"):
        run(mw, response)
    assert response.meta["simhash_verdict"] == "new"
    assert stat(mw, "simhash/store_error") == 1
    assert f"Unreadable simhash record for {URL_A} is replaced" in caplog.text
    assert PageRecord.parse(mw.index.get_record(URL_A)) is not None


def test_index_that_cannot_open_turns_deduplication_off(make_crawler, tmp_path, caplog):
    from scrapy_simhash.scrapy.settings import build_fingerprinter

    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    crawler = make_crawler(SIMHASH_DIR=str(not_a_dir))
    config = get_config(crawler)
    mw = SimhashSpiderMiddleware(config, build_fingerprinter(config), crawler.stats, crawler)
    item = {"a": 1}
    with caplog.at_level(logging.ERROR, logger="scrapy_simhash.scrapy.middleware"):
        for _ in range(2):
            assert run(mw, make_response(URL_A, article_html("harbour")), [item]) == [item]
    assert crawler.stats.get_value("simhash/store_error") == 1
    assert caplog.text.count("Could not open the simhash index: deduplication is off for this crawl") == 1
    assert mw.index is None


class _Unclosable:
    stats: dict[str, int] = {}  # noqa: RUF012 - read only

    def close(self) -> None:
        raise OSError("disk gone")


def test_close_error_is_logged_not_raised(make_mw, caplog):
    mw = make_mw()
    mw.index.close()
    mw.index = _Unclosable()
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.scrapy.middleware"):
        mw.spider_closed(mw.crawler.spider, "finished")
    assert f"Could not close the simhash index in {mw.path}" in caplog.text
    assert mw.index is None


def test_opt_out_and_reset_are_logged(make_mw, caplog):
    class QuietSpider(SimhashTestSpider):
        simhash_enabled = False

    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.middleware"):
        make_mw(QuietSpider)
        first = make_mw()
        first.spider_closed(first.crawler.spider, "finished")
        second = make_mw(SIMHASH_RESET=True)
    assert "scrapy-simhash is off for spider test (simhash_enabled = False)" in caplog.text
    assert f"Deleted the simhash page index in {second.path} (reset)" in caplog.text


class _BrokenFingerprinter:
    """A collaborator that fails, to check that the middleware contains the failure."""

    def __init__(self, real: Any) -> None:
        self.settings = real.settings

    def fingerprint_html(self, html: str, url: str | None = None) -> int:
        raise RuntimeError("tokenizer exploded")

    def fingerprint_page(self, html: str, url: str | None = None, **kwargs: Any) -> Any:
        raise RuntimeError("tokenizer exploded")


def test_fingerprint_error_is_counted_and_logged_once(make_crawler, caplog):
    crawler = make_crawler()
    config = get_config(crawler)
    from scrapy_simhash.scrapy.settings import build_fingerprinter

    broken = cast("Fingerprinter", _BrokenFingerprinter(build_fingerprinter(config)))  # a stand-in that fails
    mw = SimhashSpiderMiddleware(config, broken, crawler.stats, crawler)
    mw.open(crawler.spider)
    try:
        item = {"a": 1}
        with caplog.at_level(logging.DEBUG, logger="scrapy_simhash.scrapy.middleware"):
            for i in range(3):
                assert run(mw, make_response(f"{URL_A}/{i}", article_html("harbour")), [item]) == [item]
        assert crawler.stats.get_value("simhash/skipped/error") == 3
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "tokenizer exploded" in warnings[0].getMessage()
        assert warnings[0].exc_info is not None
        assert crawler.stats.get_value("simhash/fingerprinted") is None
    finally:
        mw.spider_closed(crawler.spider, "finished")


@pytest.mark.parametrize(
    ("body", "headers", "cls", "reason"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, {"Content-Type": "image/png"}, Response, "non_text"),
        (
            b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 8,
            {"Content-Type": "application/pdf"},
            Response,
            "non_text",
        ),
        (b"", {"Content-Type": "text/html"}, None, "empty"),
        (b"   \n\t  ", {"Content-Type": "text/html"}, None, "empty"),
    ],
    ids=["image", "pdf", "empty", "whitespace"],
)
def test_bad_responses_are_counted_skips(make_mw, body, headers, cls, reason):
    mw = make_mw()
    kwargs = {"cls": cls} if cls else {}
    item = {"a": 1}
    response = make_response("https://news.example.com/file", body, headers=headers, **kwargs)
    assert run(mw, response, [item]) == [item]
    assert stat(mw, f"simhash/skipped/{reason}") == 1
    assert stat(mw, "simhash/fingerprinted") is None


# A body with no control characters in its first bytes: Scrapy makes a TextResponse of it, whatever
# the Content-Type says (scrapy.responsetypes guesses from the body).
TEXTUAL_FILE = ("%PDF-1.4 Winter timetable. " + " ".join(EN_ARTICLES["harbour"][1])).encode()


@pytest.mark.parametrize(
    "content_type",
    [
        "application/pdf",
        "Application/PDF; name=timetable.pdf",
        "image/png",
        "image/svg+xml",
        "application/octet-stream",
        "application/zip",
        "font/woff2",
    ],
)
def test_textual_body_of_a_non_text_type_is_skipped(make_mw, content_type):
    from scrapy.http import Headers
    from scrapy.responsetypes import responsetypes

    headers = {"Content-Type": content_type}
    cls = responsetypes.from_args(headers=Headers(headers), url="https://news.example.com/file", body=TEXTUAL_FILE)
    assert issubclass(cls, TextResponse)  # what Scrapy's downloader would build
    mw = make_mw()
    item, request = {"title": "timetable", "n": [1, 2]}, Request("https://news.example.com/next")
    url = "https://news.example.com/file"
    response = TextResponse(url, body=TEXTUAL_FILE, headers=headers, request=Request(url))
    out = run(mw, response, [item, request])
    assert out == [item, request]
    assert out[0] == {"title": "timetable", "n": [1, 2]}  # unchanged: no SIMHASH_ITEM_FIELD written
    assert stat(mw, "simhash/skipped/non_text") == 1
    assert stat(mw, "simhash/fingerprinted") is None
    assert "simhash_verdict" not in response.meta
    # The same body again under another URL is not a near duplicate of anything: nothing was indexed.
    again = TextResponse("https://news.example.com/file2", body=TEXTUAL_FILE, headers=headers)
    assert run(mw, again, [item]) == [item]
    assert stat(mw, "simhash/skipped/non_text") == 2


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Content-Type": "text/html; charset=utf-8"},
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/xhtml+xml"},
        {"Content-Type": "application/xml"},
        {"Content-Type": "application/rss+xml"},
        {"Content-Type": "application/json"},
        {"Content-Type": "application/ld+json"},
        {"Content-Type": "html"},  # not a media type: treated as a page
    ],
    ids=["no-header", "html", "plain", "xhtml", "xml", "rss", "json", "ld-json", "junk"],
)
def test_text_types_and_no_content_type_are_fingerprinted(make_mw, headers):
    mw = make_mw()
    response = TextResponse(URL_A, body=article_html("harbour").encode(), headers=headers, request=Request(URL_A))
    item = {"a": 1}
    assert run(mw, response, [item]) == [item]
    assert response.meta["simhash_verdict"] == "new"
    assert stat(mw, "simhash/fingerprinted") == 1
    assert stat(mw, "simhash/skipped/non_text") is None


def test_binary_bytes_declared_as_html_never_raise(make_mw):
    mw = make_mw()
    body = bytes((i * 7919 + 13) % 256 for i in range(20000))
    item = {"a": 1}
    response = make_response("https://news.example.com/bin.html", body, headers={"Content-Type": "text/html"})
    assert run(mw, response, [item]) in ([item], [])
    skipped = sum(v for k, v in mw.crawler.stats.get_stats().items() if k.startswith("simhash/skipped/"))
    assert skipped + (stat(mw, "simhash/fingerprinted") or 0) == 1
    assert stat(mw, "simhash/skipped/error") is None


def test_broken_encoding_is_fingerprinted(make_mw):
    mw = make_mw()
    html = article_html("harbour").encode("utf-8")
    broken = html.replace(b"morning", b"morn\xff\xfeing")  # invalid UTF-8 in a page declared UTF-8
    response = make_response(URL_A, broken, headers={"Content-Type": "text/html; charset=utf-8"})
    run(mw, response)
    assert response.meta["simhash_verdict"] == "new"


def test_http_error_page_is_skipped(make_mw):
    mw = make_mw()
    response = make_response(URL_A, article_html("harbour"))
    response = response.replace(status=404)
    run(mw, response)
    assert stat(mw, "simhash/skipped/http_status") == 1


def test_large_page_is_skipped_and_recorded_by_its_bytes(make_mw):
    # Not fingerprinted, but recorded like a PDF (a hash of its bytes), so that a recrawl knows it:
    # it once got no record, was new at every crawl and its items were exported every time.
    mw = make_mw()
    paragraph = "<p>" + " ".join(EN_ARTICLES["harbour"][1]) + "</p>\n"
    body = ("<html><body>" + paragraph * (10 * 1024 * 1024 // len(paragraph) + 1) + "</body></html>").encode()
    assert len(body) > 10 * 1024 * 1024
    item = {"a": 1}
    response = make_response(URL_A, body)
    assert run(mw, response, [item]) == [item]
    assert stat(mw, "simhash/skipped/too_large") == 1 and stat(mw, "simhash/body_hash/new") == 1
    assert "simhash_verdict" not in response.meta and not stat(mw, "simhash/fingerprinted")
    record = PageRecord.parse(mw.index.get_record(URL_A))
    assert record is not None and record.next_due is not None and record.fetch_count == 1
    assert mw.index.get(URL_A) is None  # never in the near-duplicate index
    assert run(mw, make_response(URL_A, body), [item]) == []  # the same bytes again: unchanged, held back
    assert stat(mw, "simhash/body_hash/unchanged") == 1 and stat(mw, "simhash/items_dropped") == 1
    assert run(mw, make_response(URL_A, body + b"<!-- -->"), [item]) == [item]  # other bytes: changed
    assert stat(mw, "simhash/body_hash/changed") == 1


def test_max_body_size_zero_means_no_limit(make_mw):
    mw = make_mw(SIMHASH_MAX_BODY_SIZE=0)
    body = article_html("harbour", sidebar="<!-- " + "x" * (5 * 1024 * 1024) + " -->")
    response = make_response(URL_A, body)
    run(mw, response)
    assert response.meta["simhash_verdict"] == "new"


def test_gbk_page_without_charset_header_decodes_right(make_mw):
    mw = make_mw()
    html = article_html("metro", charset=None)
    utf8 = make_response(
        "https://zh.example.com/metro", html.encode("utf-8"), headers={"Content-Type": "text/html; charset=utf-8"}
    )
    run(mw, utf8)
    gbk = make_response("https://mirror.example.cn/metro", html.encode("gbk"), headers={"Content-Type": "text/html"})
    run(mw, gbk)
    assert gbk.meta["simhash_verdict"] == "near_duplicate"
    assert gbk.meta["simhash_distance"] == 0
    assert gbk.meta["simhash_fp"] == utf8.meta["simhash_fp"]


def test_xml_and_plain_text_responses_are_fingerprinted(make_mw):
    mw = make_mw()
    title, paragraphs = EN_ARTICLES["orchard"]
    xml = (
        '<?xml version="1.0" encoding="utf-8"?><rss><channel><item><title>'
        + title
        + "</title><description>"
        + " ".join(paragraphs)
        + "</description></item></channel></rss>"
    )
    for url, body, cls in [
        ("https://news.example.com/feed.xml", xml, XmlResponse),
        ("https://news.example.com/orchard.txt", title + "\n\n" + "\n\n".join(paragraphs), TextResponse),
    ]:
        response = make_response(url, body, cls=cls)
        run(mw, response)
        assert response.meta["simhash_verdict"] in ("new", "near_duplicate")
    assert stat(mw, "simhash/fingerprinted") == 2


def test_response_without_request_is_fingerprinted(make_mw):
    from scrapy.http import HtmlResponse

    mw = make_mw()
    response = HtmlResponse(URL_A, body=article_html("harbour").encode())
    item = {"a": 1}
    assert run(mw, response, [item]) == [item]
    assert stat(mw, "simhash/new") == 1


def test_store_mismatch_fails_at_start_up(make_mw):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    mw.spider_closed(mw.crawler.spider, "finished")
    with pytest.raises(ValueError, match=r"128|bits"):
        make_mw(SIMHASH_BITS=128)


# -- the asynchronous path --------------------------------------------------------------------------


def test_async_output(make_mw):
    mw = make_mw()
    run(mw, make_response(URL_A, article_html("harbour")))
    response = make_response(URL_B, article_html("harbour"))
    request = Request("https://mirror.example.org/next")

    async def spider_output():
        yield {"a": 1}
        yield request

    async def collect():
        return [o async for o in mw.process_spider_output_async(response, spider_output())]

    assert asyncio.run(collect()) == [request]
    assert response.meta["simhash_verdict"] == "near_duplicate"


def test_start_up_is_frozen_when_the_spider_opens_and_thawed_when_the_last_middleware_closes(make_mw: Any) -> None:
    """gc.freeze when the spider opens (what start-up made is no longer walked by each full
    collection); the last open middleware to close unfreezes, so that the crawl's leftovers can
    be collected."""
    import gc

    def tracked(obj: object) -> bool:  # in a generation of the collector: not frozen
        return any(o is obj for o in gc.get_objects())

    assert gc.get_freeze_count() == 0
    first, second = make_mw(), make_mw()
    start_up: list[list[object]] = [[]]
    first.spider_opened(first.crawler.spider)
    assert gc.get_freeze_count() > 0 and not tracked(start_up)
    later: list[list[object]] = [[]]
    second.spider_opened(second.crawler.spider)
    assert tracked(later)  # the second joins the freeze: no second collection and freeze
    run(second, make_response("https://example.com/b", article_html("harbour")))
    first.spider_closed(first.crawler.spider, "finished")
    assert gc.get_freeze_count() > 0 and not tracked(start_up)
    second.spider_closed(second.crawler.spider, "finished")
    assert gc.get_freeze_count() == 0 and tracked(start_up)


def test_no_freeze_with_simhash_gc_freeze_false(make_mw: Any) -> None:
    """SIMHASH_GC_FREEZE = False: the collector is left as it is (nothing frozen, nothing thawed)."""
    import gc

    mw = make_mw(SIMHASH_GC_FREEZE=False)
    later: list[list[object]] = [[]]
    mw.spider_opened(mw.crawler.spider)
    run(mw, make_response("https://example.com/a", article_html("harbour")))
    assert gc.get_freeze_count() == 0 and any(o is later for o in gc.get_objects())
    mw.spider_closed(mw.crawler.spider, "finished")
    assert gc.get_freeze_count() == 0


def test_a_freeze_of_the_process_is_left_alone(make_mw: Any) -> None:
    """A process that froze objects itself (a pre-fork server) keeps its freeze: the middleware
    neither adds to it nor undoes it."""
    import gc

    def tracked(obj: object) -> bool:  # in a generation of the collector: not frozen
        return any(o is obj for o in gc.get_objects())

    mine: list[list[object]] = [[]]
    gc.freeze()
    try:
        mw = make_mw()
        later: list[list[object]] = [[]]
        mw.spider_opened(mw.crawler.spider)
        run(mw, make_response("https://example.com/a", article_html("harbour")))
        assert tracked(later)
        mw.spider_closed(mw.crawler.spider, "finished")
        assert gc.get_freeze_count() > 0 and not tracked(mine)
    finally:
        gc.unfreeze()
