"""Storage backends of the simhash index: the interface, in-memory and LMDB stores.

:class:`~scrapy_simhash.store.base.FingerprintStore` is the contract; ``MemoryStore`` keeps
everything in dicts, ``LmdbStore`` (the default ``SIMHASH_STORE``) in an LMDB environment on disk.
"""

from __future__ import annotations

from scrapy_simhash.errors import StoreError
from scrapy_simhash.store.base import FingerprintStore, TableLayout
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.memory import MemoryStore

__all__ = ["FingerprintStore", "LmdbStore", "MemoryStore", "StoreError", "TableLayout"]
