"""scrapy-simhash: SimHash near-duplicate detection and change tracking for Scrapy crawls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_simhash.extract import Document, extract
from scrapy_simhash.fingerprint import EmptyTextError, Fingerprinter, hamming, similarity
from scrapy_simhash.index import (
    Match,
    NotAnIndexError,
    SettingsMismatchError,
    SimhashIndex,
    SimhashIndexError,
)

if TYPE_CHECKING:
    from scrapy_simhash.addon import Addon
    from scrapy_simhash.incremental import IncrementalSpiderMixin, SimhashRecrawlMiddleware, due_report, due_requests
    from scrapy_simhash.middleware import SimhashSpiderMiddleware
    from scrapy_simhash.pipeline import NearDuplicateItem, SimhashDedupPipeline

__version__ = "0.1.0"

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
    "due_report",
    "due_requests",
    "extract",
    "hamming",
    "similarity",
]

# The Scrapy glue is imported on first use, so that the pure parts (Fingerprinter,
# SimhashIndex) load without importing Scrapy and Twisted.
_LAZY = {
    "Addon": "scrapy_simhash.addon",
    "SimhashSpiderMiddleware": "scrapy_simhash.middleware",
    "SimhashDedupPipeline": "scrapy_simhash.pipeline",
    "SimhashRecrawlMiddleware": "scrapy_simhash.incremental",
    "IncrementalSpiderMixin": "scrapy_simhash.incremental",
    "due_report": "scrapy_simhash.incremental",
    "due_requests": "scrapy_simhash.incremental",
    "NearDuplicateItem": "scrapy_simhash.pipeline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrapy_simhash' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
