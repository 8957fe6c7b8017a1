"""SIMHASH_* settings: defaults, validation at start-up, unknown-name warnings, documentation."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from helpers.pages import build_from_crawler
from scrapy import Spider
from scrapy.settings import Settings

from scrapy_simhash import defaults
from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware
from scrapy_simhash.scrapy.pipeline import SimhashDedupPipeline
from scrapy_simhash.scrapy.settings import (
    SETTING_NAMES,
    build_fingerprinter,
    load_config,
    warn_unknown_settings,
)

# On the oldest supported Scrapy too (./dev test-min).
pytestmark = pytest.mark.glue

ROOT = Path(__file__).resolve().parents[2]


def config_of(**values):
    return load_config(Settings(values))


def test_defaults_load():
    config = config_of()
    assert config.enabled is False
    assert config.bits == 64 and config.max_distance == 3 and config.blocks is None
    assert config.drop_unchanged is True and config.follow_duplicates is True
    assert config.item_key_field == "url" and config.item_fields == ()
    assert config.fingerprinter_kwargs == {}
    assert set(SETTING_NAMES) == {name for name in vars(defaults) if name.startswith("SIMHASH_")}


def test_values_from_the_command_line_are_parsed():
    config = config_of(
        SIMHASH_ENABLED="1",
        SIMHASH_BITS="128",
        SIMHASH_MAX_DISTANCE="5",
        SIMHASH_BLOCKS="8",
        SIMHASH_ITEM_FIELDS="title, body",
        SIMHASH_MIN_FEATURES="5",
        SIMHASH_DROP_UNCHANGED="False",
    )
    assert config.enabled is True and config.bits == 128 and config.max_distance == 5 and config.blocks == 8
    assert config.item_fields == ("title", "body")
    assert config.fingerprinter_kwargs == {"min_features": 5}
    assert config.drop_unchanged is False
    assert config_of(SIMHASH_ITEM_FIELDS='["title", "body"]').item_fields == ("title", "body")  # -s NAME=[...]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("SIMHASH_BITS", 32, "must be 64 or 128"),
        ("SIMHASH_BITS", "many", "must be 64 or 128"),
        ("SIMHASH_MAX_DISTANCE", 70, "between 0 and SIMHASH_BITS - 1 (63)"),
        ("SIMHASH_MAX_DISTANCE", -1, "between 0 and"),
        ("SIMHASH_MAX_DISTANCE", "three", "integer"),
        ("SIMHASH_BLOCKS", 2, "SIMHASH_MAX_DISTANCE + 1 (4)"),
        ("SIMHASH_BLOCKS", 65, "SIMHASH_BITS (64)"),
        ("SIMHASH_CHANGE_THRESHOLD", 65, "between 0 and 64"),
        ("SIMHASH_MAX_BODY_SIZE", -5, ">= 0"),
        ("SIMHASH_MAX_CANDIDATES", 0, ">= 1"),
        ("SIMHASH_STORE", "scrapy_simhash.store.NoSuchStore", "cannot be imported"),
        ("SIMHASH_STORE", "scrapy_simhash.store.index.Match", "FingerprintStore class"),
        ("SIMHASH_HISTORY_SIZE", 0, "between 1 and 1000"),
        ("SIMHASH_ENABLED", "maybe", "True or False"),
        ("SIMHASH_DEBUG", "often", "True or False"),
        ("SIMHASH_ITEM_FIELD", "", "non-empty field name"),
        ("SIMHASH_ITEM_FIELDS", 42, "list of field names"),
        ("SIMHASH_ITEM_FIELDS", ["title", ""], "non-empty field names"),
        ("SIMHASH_ITEM_FIELDS", '["title", body]', "must be JSON"),
        ("SIMHASH_ITEM_FIELDS", '["title", 3]', "non-empty field names"),
        ("SIMHASH_ITEM_KEY_FIELD", "  ", "non-empty field name"),
        ("SIMHASH_DIR", "", "directory path"),
    ],
)
def test_bad_value_names_setting_value_and_range(name, value, expected):
    with pytest.raises(ValueError, match=name) as info:
        config_of(**{name: value})
    message = str(info.value)
    assert message.startswith(f"{name} ({value!r}) is invalid")
    assert expected in message


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SIMHASH_FEATURES", "paragraphs"),
        ("SIMHASH_WEIGHTING", "bm25-ish"),
        ("SIMHASH_TOKENIZER", "whitespace"),
        ("SIMHASH_MIN_FEATURES", -3),
        ("SIMHASH_SHINGLE_SIZE", 99),
    ],
)
def test_bad_fingerprinter_option_names_the_setting(name, value):
    config = config_of(**{name: value})
    with pytest.raises(ValueError, match=name) as info:
        build_fingerprinter(config)
    assert str(info.value).startswith(f"{name} ({value!r}) is invalid")


def test_fingerprinter_options_reach_the_fingerprinter():
    fingerprinter = build_fingerprinter(
        config_of(SIMHASH_FEATURES="shingles", SIMHASH_MIN_FEATURES=4, SIMHASH_BITS=128)
    )
    assert fingerprinter.features == "shingles"
    assert fingerprinter.min_features == 4
    assert fingerprinter.bits == 128


def test_bad_setting_fails_when_the_crawler_builds_the_middleware(make_crawler):
    crawler = make_crawler(SIMHASH_MAX_DISTANCE=99)
    with pytest.raises(ValueError, match=r"SIMHASH_MAX_DISTANCE \(99\) is invalid"):
        build_from_crawler(SimhashSpiderMiddleware, crawler)


def test_unknown_setting_warns_with_the_closest_name(caplog):
    settings = Settings({"SIMHASH_MAX_DISTANSE": 2, "SIMHASH_ENABLED": True, "SIMHASHING": 1})
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash._settings"):
        unknown = warn_unknown_settings(settings)
    assert unknown == ["SIMHASH_MAX_DISTANSE"]
    assert "SIMHASH_MAX_DISTANSE" in caplog.text
    assert "did you mean SIMHASH_MAX_DISTANCE?" in caplog.text


def test_unknown_setting_warned_once_per_crawler(make_crawler, caplog):
    crawler = make_crawler(SIMHASH_DROP_UNCHANGD=False, SIMHASH_ITEM_FIELDS=["title"])
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash._settings"):
        mw = build_from_crawler(SimhashSpiderMiddleware, crawler)
        pipeline = build_from_crawler(SimhashDedupPipeline, crawler)
    try:
        warnings = [r for r in caplog.records if "SIMHASH_DROP_UNCHANGD" in r.getMessage()]
        assert len(warnings) == 1
        assert "did you mean SIMHASH_DROP_UNCHANGED?" in warnings[0].getMessage()
    finally:
        mw.spider_closed(crawler.spider, "finished")
        pipeline.close_spider(crawler.spider)


def test_simhash_dir_goes_through_data_path_per_spider(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)

    class NewsSpider(Spider):
        name = "news"

    config = config_of()
    assert config.spider_dir(NewsSpider()) == Path(".scrapy") / "simhash" / "news"
    absolute = config_of(SIMHASH_DIR=str(tmp_path / "idx"))
    assert absolute.spider_dir(NewsSpider()) == tmp_path / "idx" / "news"


def test_every_setting_is_documented():
    # One row each, with its default: test_docs_reference.py; here, that every name is there at all.
    path = ROOT / "docs" / "reference" / "settings.rst"
    documented = set(re.findall(r"\bSIMHASH_[A-Z0-9_]+\b", path.read_text(encoding="utf-8")))
    missing = sorted(set(SETTING_NAMES) - documented)
    assert not missing, f"{path.name} does not document: {', '.join(missing)}"


def test_documented_stats_keys_include_the_verdicts():
    text = (ROOT / "docs" / "reference" / "stats.rst").read_text(encoding="utf-8")
    for key in (
        "simhash/fingerprinted",
        "simhash/new",
        "simhash/near_duplicate",
        "simhash/unchanged",
        "simhash/changed",
        "simhash/items_dropped",
        "simhash/store_error",
    ):
        assert f"``{key}``" in text


def test_simhash_store_memory_runs_a_crawl_without_files(make_mw, tmp_path):
    from helpers.pages import article_html, make_response, run

    mw = make_mw(SIMHASH_STORE="scrapy_simhash.store.MemoryStore", SIMHASH_DIR=str(tmp_path / "never"))
    first = make_response("https://news.example.com/a", article_html("harbour"))
    copy = make_response("https://mirror.example.org/a", article_html("harbour", site="Mirror"))
    run(mw, first)
    assert run(mw, copy, [{"item": 1}]) == []
    assert (first.meta["simhash_verdict"], copy.meta["simhash_verdict"]) == ("new", "near_duplicate")
    assert mw.index.path is None and type(mw.index.store).__name__ == "MemoryStore"
    assert not (tmp_path / "never").exists()


def test_simhash_store_with_a_missing_dependency_names_the_package(tmp_path, monkeypatch):
    (tmp_path / "shop_stores.py").write_text(
        "import simhash_test_missing_pkg\nfrom scrapy_simhash.store.memory import MemoryStore as Store\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # never NotConfigured: the crawl must not run without it
    with pytest.raises(ValueError, match="SIMHASH_STORE") as info:
        config_of(SIMHASH_STORE="shop_stores.Store")
    message = str(info.value)
    assert "SIMHASH_STORE" in message and "pip install simhash_test_missing_pkg" in message


def test_simhash_store_accepts_a_class():
    from scrapy_simhash.store import MemoryStore

    assert config_of(SIMHASH_STORE=MemoryStore).store_cls is MemoryStore
    assert config_of().store_cls.__name__ == "LmdbStore"
