"""Addon: switches scrapy-simhash on with one ``ADDONS`` entry (Scrapy >= 2.10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: Where the add-on inserts the spider middleware: closer to the spider than Scrapy's built-in
#: spider middlewares (<= 900), so it sees the callback's output first and held-back items never
#: reach the other middlewares.
MIDDLEWARE_PRIORITY = 950

#: Where the add-on inserts the item pipeline: late (pipelines that clean or complete the item
#: text run first), before typical storage pipelines at 800+.
PIPELINE_PRIORITY = 700

#: Where the add-on inserts the downloader middleware of incremental crawls: after RetryMiddleware
#: (550) and before RedirectMiddleware (600), so that it sees the final response of a redirect, and
#: before HttpCacheMiddleware (900), which answers the 304s of the pages it has cached.
RECRAWL_MIDDLEWARE_PRIORITY = 580

#: Where the add-on inserts the URL rules' downloader middleware: after the recrawl middleware (a
#: request that is not due is counted as such first); redirect targets are never skipped wherever it is.
URL_RULES_MIDDLEWARE_PRIORITY = 590

_MIDDLEWARE = "scrapy_simhash.SimhashSpiderMiddleware"
_RECRAWL = "scrapy_simhash.SimhashRecrawlMiddleware"
_PIPELINE = "scrapy_simhash.SimhashDedupPipeline"
_URL_RULES = "scrapy_simhash.SimhashUrlRulesMiddleware"
# Where the classes live (their ``__module__``): a component listed by that path, or as a class
# object, is recognised by it.
_ALIASES = {
    _MIDDLEWARE: ("scrapy_simhash.scrapy.middleware.SimhashSpiderMiddleware",),
    _PIPELINE: ("scrapy_simhash.scrapy.pipeline.SimhashDedupPipeline",),
    _RECRAWL: ("scrapy_simhash.scrapy.recrawl.SimhashRecrawlMiddleware",),
    _URL_RULES: ("scrapy_simhash.scrapy.urlrules.SimhashUrlRulesMiddleware",),
}


class Addon:
    """``ADDONS = {"scrapy_simhash.Addon": 0}`` enables scrapy-simhash.

    It sets `SIMHASH_ENABLED` (priority ``"addon"``) and inserts the spider middleware, and the
    pipeline, recrawl and URL-rules middlewares their settings ask for, at this module's
    ``*_PRIORITY``; a component already listed (any import path or priority, or ``None``) is left.
    """

    def __repr__(self) -> str:
        return "scrapy_simhash.Addon"  # Scrapy's "Enabled addons" line

    def update_settings(self, settings: BaseSettings) -> None:
        settings.set("SIMHASH_ENABLED", True, priority="addon")
        _insert(settings, "SPIDER_MIDDLEWARES", _MIDDLEWARE, MIDDLEWARE_PRIORITY)
        if settings.get("SIMHASH_ITEM_FIELDS"):
            _insert(settings, "ITEM_PIPELINES", _PIPELINE, PIPELINE_PRIORITY)
        if _flag(settings, "SIMHASH_INCREMENTAL"):
            _insert(settings, "DOWNLOADER_MIDDLEWARES", _RECRAWL, RECRAWL_MIDDLEWARE_PRIORITY)
        if _flag(settings, "SIMHASH_URL_RULES"):
            _insert(settings, "DOWNLOADER_MIDDLEWARES", _URL_RULES, URL_RULES_MIDDLEWARE_PRIORITY)


def _flag(settings: BaseSettings, name: str) -> bool:
    """The boolean setting ``name``, read as the components read it (a bad value: one line, the crawl stops)."""
    from scrapy_simhash import defaults
    from scrapy_simhash.scrapy.settings import reported_at_startup
    from scrapy_simhash.setting_values import read_bool

    with reported_at_startup():
        return read_bool(name, settings.get(name, getattr(defaults, name)))


def _insert(settings: BaseSettings, name: str, path: str, priority: int) -> None:
    components = settings[name]  # a BaseSettings of component -> priority (Scrapy >= 2.10)
    known = {path, *_ALIASES[path]}
    for component in components:
        if component in known or (not isinstance(component, str) and _path_of(component) in known):
            return
    components[path] = priority


def _path_of(component: object) -> str:
    return f"{getattr(component, '__module__', '')}.{getattr(component, '__qualname__', '')}"
