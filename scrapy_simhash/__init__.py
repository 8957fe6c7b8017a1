"""scrapy-simhash: SimHash near-duplicate detection and change tracking for Scrapy crawls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_simhash._version import __version__ as __version__
from scrapy_simhash.fingerprint.simhash import EmptyTextError, Fingerprinter, hamming, hamming_similarity
from scrapy_simhash.store.index import (
    Match,
    NotAnIndexError,
    SettingsMismatchError,
    SimhashIndex,
    SimhashIndexError,
)
from scrapy_simhash.text.extract import Document, extract

if TYPE_CHECKING:
    from scrapy_simhash.scrapy.addon import Addon
    from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware
    from scrapy_simhash.scrapy.pipeline import NearDuplicateItem, SimhashDedupPipeline
    from scrapy_simhash.scrapy.recrawl import SimhashRecrawlMiddleware
    from scrapy_simhash.scrapy.selection import IncrementalSpiderMixin, due_report, due_requests
    from scrapy_simhash.scrapy.urlrules import SimhashUrlRulesMiddleware


__all__ = [
    "Addon",
    "Document",
    "EmptyTextError",
    "Fingerprinter",
    "IncrementalSpiderMixin",
    "Match",
    "NearDuplicateItem",
    "NotAnIndexError",
    "SettingsMismatchError",
    "SimhashDedupPipeline",
    "SimhashIndex",
    "SimhashIndexError",
    "SimhashRecrawlMiddleware",
    "SimhashSpiderMiddleware",
    "SimhashUrlRulesMiddleware",
    "due_report",
    "due_requests",
    "extract",
    "hamming",
    "hamming_similarity",
]

# The Scrapy glue is imported on first use, so that the pure parts (Fingerprinter,
# SimhashIndex) load without importing Scrapy and Twisted.
_LAZY = {
    "Addon": "scrapy_simhash.scrapy.addon",
    "SimhashSpiderMiddleware": "scrapy_simhash.scrapy.middleware",
    "SimhashDedupPipeline": "scrapy_simhash.scrapy.pipeline",
    "SimhashRecrawlMiddleware": "scrapy_simhash.scrapy.recrawl",
    "SimhashUrlRulesMiddleware": "scrapy_simhash.scrapy.urlrules",
    "IncrementalSpiderMixin": "scrapy_simhash.scrapy.selection",
    "due_report": "scrapy_simhash.scrapy.selection",
    "due_requests": "scrapy_simhash.scrapy.selection",
    "NearDuplicateItem": "scrapy_simhash.scrapy.pipeline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrapy_simhash' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
