"""SimhashDedupPipeline: near-duplicate items dropped with a message naming the earlier item."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import scrapy
from helpers.pages import EN_ARTICLES, ZH_ARTICLES, SimhashTestSpider, build_from_crawler
from scrapy.exceptions import DropItem, NotConfigured

from scrapy_simhash.scrapy.pipeline import NearDuplicateItem, SimhashDedupPipeline

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue


@pytest.fixture
def make_pipeline(make_crawler: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    built: list[Any] = []

    def factory(spidercls: type = SimhashTestSpider, **settings: Any) -> Any:
        settings.setdefault("SIMHASH_ITEM_FIELDS", ["title", "body"])
        crawler = make_crawler(spidercls, **settings)
        pipeline = build_from_crawler(SimhashDedupPipeline, crawler)
        pipeline.open_spider(crawler.spider)
        built.append(pipeline)
        return pipeline

    yield factory
    for pipeline in built:
        pipeline.close_spider(pipeline.crawler.spider)


def story(name: str, url: str | None = None, **extra: Any) -> dict[str, Any]:
    title, paragraphs = {**EN_ARTICLES, **ZH_ARTICLES}[name]
    item: dict[str, Any] = {"title": title, "body": "\n\n".join(paragraphs), **extra}
    if url is not None:
        item["url"] = url
    return item


def stat(pipeline: Any, key: str) -> Any:
    return pipeline.crawler.stats.get_value(key)


def test_distinct_items_pass(make_pipeline):
    pipeline = make_pipeline()
    for name in ("harbour", "orchard", "telescope", "metro", "tea"):
        item = story(name, f"https://news.example.com/{name}")
        assert pipeline.process_item(item) is item
    assert stat(pipeline, "simhash/items/new") == 5
    assert stat(pipeline, "simhash/items/fingerprinted") == 5


def test_near_duplicate_item_is_dropped_with_a_message_naming_the_earlier_item(make_pipeline, caplog):
    pipeline = make_pipeline()
    pipeline.process_item(story("harbour", "https://news.example.com/harbour"))
    copy = story("harbour", "https://syndication.example.net/story/991", source="wire")
    with (
        caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.pipeline"),
        pytest.raises(NearDuplicateItem) as info,
    ):
        pipeline.process_item(copy)
    error = info.value
    assert isinstance(error, DropItem)
    assert str(error).startswith("Near-duplicate of https://news.example.com/harbour (distance ")
    assert "https://syndication.example.net/story/991" in str(error)
    assert error.duplicate_of == "https://news.example.com/harbour"
    assert 0 <= error.distance <= 3
    assert stat(pipeline, "simhash/items/near_duplicate") == 1
    assert "no more duplicates will be shown" in caplog.text
    assert stat(pipeline, "simhash/items/fingerprinted") == stat(pipeline, "simhash/items/new") + 1


def test_lightly_edited_chinese_copy_is_dropped(make_pipeline):
    pipeline = make_pipeline()
    pipeline.process_item(story("metro", "https://zh.example.com/metro"))
    title, paragraphs = ZH_ARTICLES["metro"]
    copy = {
        "title": title,
        "body": "\n".join(paragraphs) + "（来源：本报记者）",
        "url": "https://portal.example.cn/a/1",
    }
    with pytest.raises(NearDuplicateItem, match=r"Near-duplicate of https://zh.example.com/metro"):
        pipeline.process_item(copy)


def test_same_key_again_replaces_the_item(make_pipeline):
    pipeline = make_pipeline()
    url = "https://news.example.com/harbour"
    pipeline.process_item(story("harbour", url))
    again = story("harbour", url)
    assert pipeline.process_item(again) is again
    changed = story("orchard", url)
    assert pipeline.process_item(changed) is changed
    # The key now stands for the orchard story: the harbour story elsewhere is new.
    other = story("harbour", "https://other.example.org/x")
    assert pipeline.process_item(other) is other


def test_an_item_with_only_its_title_among_the_fields_is_never_dropped_by_its_title(make_pipeline, caplog):
    pipeline = make_pipeline()  # SIMHASH_ITEM_FIELDS = ["title", "body"]; these items keep their text in "text"
    title, paragraphs = EN_ARTICLES["harbour"]
    guide = {"url": "https://docs.example/guide", "title": title, "text": "\n".join(paragraphs)}
    contents = {"url": "https://docs.example/contents", "title": title, "text": paragraphs[0][:80]}
    assert pipeline.process_item(contents) is contents and pipeline.process_item(guide) is guide
    assert stat(pipeline, "simhash/items/skipped/no_fields") == 2
    assert caplog.text.count("has no text in SIMHASH_ITEM_FIELDS ['title', 'body']") == 1 and "'text'" in caplog.text
    only_title = make_pipeline(SIMHASH_ITEM_FIELDS=["title"])  # the title is what the user asked to compare
    assert only_title.process_item(dict(contents)) is not None
    with pytest.raises(NearDuplicateItem):
        only_title.process_item(dict(guide, url="https://docs.example/other"))


def test_item_lacking_the_fields_passes_and_is_counted(make_pipeline):
    pipeline = make_pipeline()
    item = {"url": "https://news.example.com/x", "price": 3}
    assert pipeline.process_item(item) is item
    assert stat(pipeline, "simhash/items/skipped/no_fields") == 1
    assert stat(pipeline, "simhash/items/fingerprinted") is None


def test_item_with_punctuation_only_is_an_empty_skip(make_pipeline):
    pipeline = make_pipeline()
    item = {"title": "...", "body": "!!! ---", "url": "https://news.example.com/x"}
    assert pipeline.process_item(item) is item
    assert stat(pipeline, "simhash/items/skipped/empty") == 1


def test_items_without_a_key_are_compared_by_content(make_pipeline):
    pipeline = make_pipeline()
    first = story("orchard")
    assert pipeline.process_item(first) is first
    with pytest.raises(NearDuplicateItem, match=r"Near-duplicate of \(no url\)"):
        pipeline.process_item(story("orchard"))
    assert stat(pipeline, "simhash/items/no_key") == 2


def test_key_field_setting_and_list_values(make_pipeline):
    pipeline = make_pipeline(SIMHASH_ITEM_FIELDS=["body"], SIMHASH_ITEM_KEY_FIELD="id")
    paragraphs = EN_ARTICLES["telescope"][1]
    pipeline.process_item({"id": "a-1", "body": paragraphs})
    with pytest.raises(NearDuplicateItem, match=r"Near-duplicate of a-1 \(distance \d+\): b-2"):
        pipeline.process_item({"id": "b-2", "body": list(paragraphs)})


@dataclasses.dataclass
class StoryData:
    title: str
    body: str
    url: str


class StoryItem(scrapy.Item):
    title = scrapy.Field()
    body = scrapy.Field()
    url = scrapy.Field()


def test_item_types_via_itemadapter(make_pipeline):
    pipeline = make_pipeline()
    title, paragraphs = EN_ARTICLES["harbour"]
    body = "\n".join(paragraphs)
    first = StoryItem(title=title, body=body, url="https://a.example.com/1")
    assert pipeline.process_item(first) is first
    with pytest.raises(NearDuplicateItem):
        pipeline.process_item(StoryData(title, body, "https://b.example.com/2"))


def test_duplicates_are_found_across_crawls(make_pipeline):
    pipeline = make_pipeline()
    pipeline.process_item(story("tea", "https://zh.example.com/tea"))
    pipeline.close_spider(pipeline.crawler.spider)
    second = make_pipeline()
    with pytest.raises(NearDuplicateItem, match=r"https://zh\.example\.com/tea"):
        second.process_item(story("tea", "https://copy.example.cn/tea"))


def test_store_error_fails_open(make_pipeline):
    pipeline = make_pipeline()
    pipeline.process_item(story("tea", "https://zh.example.com/tea"))
    pipeline.index.close()
    item = story("tea", "https://copy.example.cn/tea")
    assert pipeline.process_item(item) is item
    assert stat(pipeline, "simhash/items/store_error") == 1
    pipeline.index = None


def test_store_error_log_names_the_item(make_pipeline, caplog):
    pipeline = make_pipeline()
    pipeline.index.close()
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.scrapy.pipeline"):
        pipeline.process_item(story("tea", "https://copy.example.cn/tea"))
    assert "simhash item index error for https://copy.example.cn/tea; the item is treated as new" in caplog.text
    pipeline.index = None


def test_url_keys_are_canonicalised_and_other_keys_stripped(make_pipeline):
    pipeline = make_pipeline()
    pipeline.process_item(story("harbour", " https://news.example.com/harbour?b=2&a=1#top "))
    again = story("harbour", "https://news.example.com/harbour?a=1&b=2")
    assert pipeline.process_item(again) is again  # the same key: replaced, not a duplicate
    assert "https://news.example.com/harbour?a=1&b=2" in pipeline.index
    pipeline.process_item(story("tea", "  story-42 "))
    assert "story-42" in pipeline.index


def test_item_index_that_cannot_open_turns_item_deduplication_off(make_crawler, tmp_path, caplog):
    from scrapy_simhash.scrapy.settings import build_fingerprinter
    from scrapy_simhash.scrapy.state import get_config

    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    crawler = make_crawler(SIMHASH_DIR=str(not_a_dir), SIMHASH_ITEM_FIELDS=["title", "body"])
    config = get_config(crawler)
    pipeline = SimhashDedupPipeline(config, build_fingerprinter(config), crawler.stats, crawler)
    with caplog.at_level(logging.ERROR, logger="scrapy_simhash.scrapy.pipeline"):
        for _ in range(2):
            item = story("tea", "https://zh.example.com/tea")
            assert pipeline.process_item(item) is item
    assert crawler.stats.get_value("simhash/items/store_error") == 1
    message = "Could not open the simhash item index: item deduplication is off for this crawl"
    assert caplog.text.count(message) == 1


def test_close_logs_a_summary_and_a_close_error(make_pipeline, caplog):
    class Unclosable:
        def close(self) -> None:
            raise OSError("disk gone")

    pipeline = make_pipeline()
    pipeline.process_item(story("tea", "https://zh.example.com/tea"))
    pipeline.index.close()
    pipeline.index = Unclosable()
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.scrapy.pipeline"):
        pipeline.close_spider(pipeline.crawler.spider)
    assert "simhash items: 1 fingerprinted (1 new, 0 near-duplicates dropped), 0 skipped, 0 store errors" in caplog.text
    assert f"Could not close the simhash item index in {pipeline.path}" in caplog.text
    assert pipeline.index is None


def test_direct_construction_needs_item_fields(make_crawler):
    from scrapy_simhash.scrapy.settings import build_fingerprinter
    from scrapy_simhash.scrapy.state import get_config

    config = get_config(make_crawler())
    with pytest.raises(ValueError, match=r"SIMHASH_ITEM_FIELDS \(empty\) is invalid"):
        SimhashDedupPipeline(config, build_fingerprinter(config))


def test_spider_attribute_opts_out(make_pipeline):
    class QuietSpider(SimhashTestSpider):
        simhash_enabled = False

    pipeline = make_pipeline(QuietSpider)
    for _ in range(2):
        item = story("tea", "https://zh.example.com/tea")
        assert pipeline.process_item(item) is item
    assert pipeline.index is None


def test_disabled_without_item_fields(make_crawler):
    crawler = make_crawler()
    with pytest.raises(NotConfigured, match="SIMHASH_ITEM_FIELDS is not set"):
        build_from_crawler(SimhashDedupPipeline, crawler)


def test_item_index_is_separate_from_the_page_index(make_pipeline, make_mw):
    from helpers.pages import article_html, make_response, run

    mw = make_mw(SIMHASH_ITEM_FIELDS=["title", "body"])
    run(mw, make_response("https://news.example.com/harbour", article_html("harbour")))
    pipeline = make_pipeline()
    item = story("harbour", "https://syndication.example.net/1")
    assert pipeline.process_item(item) is item
    assert pipeline.path != mw.path and pipeline.path.parent == mw.path.parent


# -- no drop may lose content (SIMHASH_KEEP_ADDS) ----------------------------------------------------

#: A weekly digest: every English story; its issues differ by their date line and what they add.
WEEK = [paragraph for _, paragraphs in EN_ARTICLES.values() for paragraph in paragraphs]
FERRY = (
    "A ferry company has also asked to use the restored north berth for its summer crossings to the "
    "islands, and the council will decide in June."
)
TICKETS = (
    "Tickets for the reopening concert sold out within an hour; a second evening has been added for "
    "schools and families."
)


def digest(url: str, *extra: str, updated: str) -> dict[str, Any]:
    return {"title": "Week in review", "body": "\n\n".join([*WEEK, *extra, f"Updated {updated}."]), "url": url}


@pytest.fixture(params=["lmdb", "redis"])
def store_settings(request: pytest.FixtureRequest, tmp_path: Any) -> dict[str, Any]:
    """The item index on LMDB (the default) or on a real redis-server."""
    if request.param == "lmdb":
        return {}
    server = request.getfixturevalue("redis_server")
    return {
        "SIMHASH_STORE": "scrapy_simhash.store.RedisStore",
        "SIMHASH_REDIS_URL": server.url,
        "SIMHASH_REDIS_PREFIX": f"{tmp_path}:%(spider)s",
    }


@pytest.mark.parametrize("keep_adds", [100, 0])
def test_an_item_that_adds_to_a_kept_item_is_kept_and_a_dated_copy_dropped(make_pipeline, store_settings, keep_adds):
    from scrapy_simhash.fingerprint.simhash import Fingerprinter

    pipeline = make_pipeline(SIMHASH_MAX_DISTANCE=6, SIMHASH_KEEP_ADDS=keep_adds, **store_settings)
    kept = digest("https://news.example.com/week/1", updated="12 May 2025, 1,204 readers")
    superset = digest("https://news.example.com/week/2", FERRY, updated="19 May 2025, 2,311 readers")
    copy = digest("https://mirror.example.net/week/1", updated="26 May 2025, 3,020 readers")
    fp = Fingerprinter()
    distances = [
        (fp.fingerprint_text(kept["body"], kept["title"]) ^ fp.fingerprint_text(x["body"], x["title"])).bit_count()
        for x in (superset, copy)
    ]
    assert all(d <= 6 for d in distances)  # both resemble the kept item
    assert pipeline.process_item(kept) is kept
    if keep_adds:  # the superset adds a sentence: kept
        assert pipeline.process_item(superset) is superset
        assert stat(pipeline, "simhash/items/kept/adds") == 1
    else:  # resemblance alone: its sentence is lost
        with pytest.raises(NearDuplicateItem, match=r"Near-duplicate of https://news\.example\.com/week/1"):
            pipeline.process_item(superset)
        assert stat(pipeline, "simhash/items/kept/adds") is None
    with pytest.raises(NearDuplicateItem, match=r"Near-duplicate of https://news\.example\.com/week/1") as info:
        pipeline.process_item(copy)  # a date and a counter changed: it adds nothing
    assert info.value.adds == (0 if keep_adds else None)


def test_the_kept_items_texts_are_measured_across_crawls(make_pipeline, store_settings):
    settings = {"SIMHASH_MAX_DISTANCE": 6, **store_settings}
    pipeline = make_pipeline(**settings)
    superset = digest("https://news.example.com/week/2", FERRY, updated="19 May 2025, 2,311 readers")
    assert pipeline.process_item(superset) is superset
    pipeline.close_spider(pipeline.crawler.spider)
    second = make_pipeline(**settings)
    subset = digest("https://news.example.com/week/1", updated="12 May 2025, 1,204 readers")
    with pytest.raises(NearDuplicateItem, match=r"https://news\.example\.com/week/2") as info:
        second.process_item(subset)  # the superset first: the subset says nothing new, and goes
    assert info.value.adds == 0
    other = digest(
        "https://news.example.com/week/3", FERRY.replace("ferry", "cruise"), updated="26 May 2025, 3,020 readers"
    )
    with pytest.raises(NearDuplicateItem, match=r"https://news\.example\.com/week/2"):
        second.process_item(other)  # one word changed in the added sentence: little that is new
    bigger = digest("https://news.example.com/week/4", TICKETS, FERRY, updated="26 May 2025, 3,020 readers")
    assert second.process_item(bigger) is bigger  # a sentence more than the kept superset
    assert stat(second, "simhash/items/kept/adds") == 1


def test_short_items_that_differ_in_a_name_are_both_kept(make_pipeline):
    """The pipeline has no short-text rule (the ``dedup`` command's): two real short items of one
    template about two towns (CLUECorpusSmall) share all but the names, and both are kept; an item's
    exact copy is still dropped."""
    pipeline = make_pipeline(SIMHASH_ITEM_FIELDS=["body"])
    first = {"url": "https://a.example/1", "body": "麻榨镇，是下辖的一个乡镇级行政单位。麻榨镇下辖以下地区："}
    other = {"url": "https://a.example/2", "body": "湾岭镇，是下辖的一个乡镇级行政单位。湾岭镇下辖以下地区："}
    assert pipeline.process_item(first) is first
    assert pipeline.process_item(other) is other
    with pytest.raises(NearDuplicateItem) as exc:
        pipeline.process_item({"url": "https://a.example/3", "body": other["body"]})
    assert exc.value.duplicate_of == "https://a.example/2"
