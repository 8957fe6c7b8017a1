"""Storage backends of the simhash index: the interface, in-memory, LMDB and Redis stores.

:class:`~scrapy_simhash.store.base.FingerprintStore` is the contract; ``MemoryStore`` keeps
everything in dicts, ``LmdbStore`` (the default ``SIMHASH_STORE``) in an LMDB environment on disk,
``RedisStore`` (``pip install scrapy-simhash[redis]``; imported on first use) on a Redis server.
``index``: the banded index over a store; ``record``: the per-URL record and its byte format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_simhash.errors import StoreError
from scrapy_simhash.store.base import FingerprintStore, TableLayout
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.memory import MemoryStore

if TYPE_CHECKING:
    from scrapy_simhash.store.redisstore import RedisStore

__all__ = ["FingerprintStore", "LmdbStore", "MemoryStore", "RedisStore", "StoreError", "TableLayout"]


def __getattr__(name: str) -> Any:
    if name == "RedisStore":  # needs the optional package redis: a missing one is named at crawl start
        from scrapy_simhash.store.redisstore import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
