"""The public API and every path users name in settings: ``scrapy_simhash``'s ``__all__``, the
component paths of ``SPIDER_MIDDLEWARES`` / ``ITEM_PIPELINES`` / ``DOWNLOADER_MIDDLEWARES`` /
``ADDONS``, the store and policy paths of ``SIMHASH_STORE`` / ``SIMHASH_RECRAWL_POLICY``, and the
entry points; no alias module is left."""

from __future__ import annotations

import importlib

import pytest
from scrapy.utils.misc import load_object

import scrapy_simhash

SETTING_PATHS = [
    "scrapy_simhash.SimhashSpiderMiddleware",
    "scrapy_simhash.SimhashDedupPipeline",
    "scrapy_simhash.SimhashRecrawlMiddleware",
    "scrapy_simhash.Addon",
    "scrapy_simhash.store.LmdbStore",
    "scrapy_simhash.store.MemoryStore",
    "scrapy_simhash.store.RedisStore",
    "scrapy_simhash.store.lmdbstore.LmdbStore",
    "scrapy_simhash.store.redisstore.RedisStore",
    "scrapy_simhash.schedule.FreshnessPolicy",
    "scrapy_simhash.schedule.NutchAdaptivePolicy",
    "scrapy_simhash.schedule.FixedIntervalPolicy",
    "scrapy_simhash.commands.simhash.Command",
    "scrapy_simhash.commands.cli.console_script",
]


def test_every_public_name_resolves() -> None:
    for name in scrapy_simhash.__all__:
        assert getattr(scrapy_simhash, name) is not None, name
    assert isinstance(scrapy_simhash.__version__, str)


@pytest.mark.parametrize("path", SETTING_PATHS)
def test_the_paths_users_put_in_settings_load(path: str) -> None:
    assert callable(load_object(path))


def test_the_addon_recognises_a_component_listed_by_its_class() -> None:
    from scrapy.settings import Settings

    settings = Settings({"SPIDER_MIDDLEWARES": {scrapy_simhash.SimhashSpiderMiddleware: 100}})
    scrapy_simhash.Addon().update_settings(settings)
    assert dict(settings["SPIDER_MIDDLEWARES"]) == {scrapy_simhash.SimhashSpiderMiddleware: 100}


@pytest.mark.parametrize("module", ["middleware", "pipeline", "incremental", "addon"])
def test_no_alias_module_is_left(module: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"scrapy_simhash.{module}")
