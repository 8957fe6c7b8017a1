"""The public API and every path users name in settings survive the move: ``scrapy_simhash``'s
``__all__``, the component paths of ``SPIDER_MIDDLEWARES`` / ``ITEM_PIPELINES`` /
``DOWNLOADER_MIDDLEWARES`` / ``ADDONS`` (old module paths kept as aliases of the same classes), the
store and policy paths of ``SIMHASH_STORE`` / ``SIMHASH_RECRAWL_POLICY``, and the entry points."""

from __future__ import annotations

import importlib

import pytest
from scrapy.utils.misc import load_object

import scrapy_simhash

ALIASES = {
    "scrapy_simhash.middleware.SimhashSpiderMiddleware": scrapy_simhash.SimhashSpiderMiddleware,
    "scrapy_simhash.pipeline.SimhashDedupPipeline": scrapy_simhash.SimhashDedupPipeline,
    "scrapy_simhash.pipeline.NearDuplicateItem": scrapy_simhash.NearDuplicateItem,
    "scrapy_simhash.incremental.SimhashRecrawlMiddleware": scrapy_simhash.SimhashRecrawlMiddleware,
    "scrapy_simhash.incremental.IncrementalSpiderMixin": scrapy_simhash.IncrementalSpiderMixin,
    "scrapy_simhash.addon.Addon": scrapy_simhash.Addon,
}
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


@pytest.mark.parametrize("path", sorted(ALIASES))
def test_the_old_module_paths_are_the_same_classes(path: str) -> None:
    assert load_object(path) is ALIASES[path]


@pytest.mark.parametrize("path", SETTING_PATHS)
def test_the_paths_users_put_in_settings_load(path: str) -> None:
    assert callable(load_object(path))


def test_the_addon_recognises_a_component_listed_by_its_class() -> None:
    from scrapy.settings import Settings

    settings = Settings({"SPIDER_MIDDLEWARES": {scrapy_simhash.SimhashSpiderMiddleware: 100}})
    scrapy_simhash.Addon().update_settings(settings)
    assert dict(settings["SPIDER_MIDDLEWARES"]) == {scrapy_simhash.SimhashSpiderMiddleware: 100}


def test_the_aliases_say_why_they_exist() -> None:
    for module in ("middleware", "pipeline", "incremental", "addon"):
        doc = importlib.import_module(f"scrapy_simhash.{module}").__doc__ or ""
        assert "alias" in doc and "users name" in doc, module
