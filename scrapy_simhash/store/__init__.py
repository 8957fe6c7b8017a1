"""Storage backends of the simhash index: the interface, in-memory and LMDB stores.

:class:`~scrapy_simhash.store.base.FingerprintStore` is the contract; ``MemoryStore`` keeps
everything in dicts, ``LmdbStore`` (the default, through ``SimhashIndex.open``) in an LMDB
environment on disk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_simhash.store.base import FingerprintStore, StoreFullError
from scrapy_simhash.store.memory import MemoryStore

if TYPE_CHECKING:
    from scrapy_simhash.store.lmdbstore import LmdbStore

__all__ = ["FingerprintStore", "LmdbStore", "MemoryStore", "StoreFullError"]


def __getattr__(name: str) -> Any:
    # lmdbstore imports the index module, which imports this package: load it on first use.
    if name == "LmdbStore":
        from scrapy_simhash.store.lmdbstore import LmdbStore

        return LmdbStore
    raise AttributeError(f"module 'scrapy_simhash.store' has no attribute {name!r}")
