"""Addon: one ADDONS entry inserts the components and switches scrapy-simhash on."""

from __future__ import annotations

import pytest
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.test import get_crawler

from scrapy_simhash.scrapy.addon import MIDDLEWARE_PRIORITY, PIPELINE_PRIORITY, Addon

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue

MW = "scrapy_simhash.SimhashSpiderMiddleware"
PIPE = "scrapy_simhash.SimhashDedupPipeline"


def crawler_with(**settings):
    return get_crawler(settings_dict={"ADDONS": {"scrapy_simhash.Addon": 0}, **settings})


def test_addon_is_exported_at_the_package_top():
    import scrapy_simhash

    assert scrapy_simhash.Addon is Addon


def test_addon_inserts_the_middleware_and_enables():
    settings = crawler_with().settings
    assert settings["SPIDER_MIDDLEWARES"][MW] == MIDDLEWARE_PRIORITY
    assert settings.getbool("SIMHASH_ENABLED") is True
    assert settings.getpriority("SIMHASH_ENABLED") == SETTINGS_PRIORITIES["addon"]
    assert PIPE not in settings["ITEM_PIPELINES"]  # no SIMHASH_ITEM_FIELDS: no pipeline


def test_addon_inserts_the_pipeline_when_item_fields_are_set():
    settings = crawler_with(SIMHASH_ITEM_FIELDS=["title", "body"]).settings
    assert settings["ITEM_PIPELINES"][PIPE] == PIPELINE_PRIORITY


def test_addon_keeps_components_the_user_listed():
    settings = crawler_with(
        SPIDER_MIDDLEWARES={"scrapy_simhash.SimhashSpiderMiddleware": 543},
        ITEM_PIPELINES={PIPE: None},
        SIMHASH_ITEM_FIELDS=["body"],
    ).settings
    assert dict(settings["SPIDER_MIDDLEWARES"]) == {"scrapy_simhash.SimhashSpiderMiddleware": 543}
    assert dict(settings["ITEM_PIPELINES"]) == {PIPE: None}


def test_project_setting_wins_over_the_addon():
    settings = crawler_with(SIMHASH_ENABLED=False).settings
    assert settings.getbool("SIMHASH_ENABLED") is False


def test_addon_middleware_builds_in_scrapy(tmp_path):
    from helpers.pages import SimhashTestSpider
    from scrapy.core.spidermw import SpiderMiddlewareManager

    from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware

    crawler = get_crawler(
        SimhashTestSpider,
        {"ADDONS": {"scrapy_simhash.Addon": 0}, "SIMHASH_DIR": str(tmp_path), "SIMHASH_LMDB_MAP_SIZE": 1 << 24},
    )
    crawler.spider = SimhashTestSpider.from_crawler(crawler)
    manager = SpiderMiddlewareManager.from_crawler(crawler)
    ours = [mw for mw in manager.middlewares if isinstance(mw, SimhashSpiderMiddleware)]
    assert len(ours) == 1
    ours[0].spider_closed(crawler.spider, "finished")


def test_addon_reads_simhash_incremental_as_the_components_do():
    recrawl = "scrapy_simhash.SimhashRecrawlMiddleware"
    for value, inserted in [("1", True), ("true", True), ("0", False), ("False", False)]:
        settings = crawler_with(SIMHASH_INCREMENTAL=value).settings
        assert (recrawl in settings["DOWNLOADER_MIDDLEWARES"]) is inserted, value
    with pytest.raises(ValueError, match=r"SIMHASH_INCREMENTAL \('maybe'\) is invalid: it must be True or False"):
        crawler_with(SIMHASH_INCREMENTAL="maybe")


def test_addon_inserts_the_url_rules_middleware_only_with_simhash_url_rules():
    from scrapy_simhash.scrapy.addon import URL_RULES_MIDDLEWARE_PRIORITY

    rules = "scrapy_simhash.SimhashUrlRulesMiddleware"
    assert rules not in crawler_with().settings["DOWNLOADER_MIDDLEWARES"]
    for value, inserted in [("1", True), ("False", False)]:
        settings = crawler_with(SIMHASH_URL_RULES=value).settings
        assert (settings["DOWNLOADER_MIDDLEWARES"].get(rules) == URL_RULES_MIDDLEWARE_PRIORITY) is inserted, value
    with pytest.raises(ValueError, match=r"SIMHASH_URL_RULES \('maybe'\) is invalid"):
        crawler_with(SIMHASH_URL_RULES="maybe")


def test_the_addon_is_named_in_scrapys_enabled_addons_line():
    from scrapy_simhash import Addon

    assert repr(Addon()) == "scrapy_simhash.Addon"
