"""Every store of the FingerprintStore contract, as a factory ``make(path)`` and the source of the
same factory for a worker process (``conftest.kind`` runs a test against each)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scrapy_simhash.store.base import FingerprintStore, TableLayout
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.memory import MemoryStore
from scrapy_simhash.store.redisstore import RedisStore

if TYPE_CHECKING:
    from collections.abc import Callable


class StoreKind(NamedTuple):
    make: Callable[[Path], FingerprintStore]
    #: Python source of ``make(path)`` for a worker process; None: the store lives in one process.
    worker_make: str | None


STORES: dict[str, StoreKind] = {
    "memory": StoreKind(lambda path: MemoryStore(), None),
    "lmdb": StoreKind(
        lambda path: LmdbStore(path, map_size=1 << 20),
        "from scrapy_simhash.store.lmdbstore import LmdbStore\nmake = lambda path: LmdbStore(path, map_size=1 << 16)",
    ),
}


# Redis: a real server (standalone, and a three-node cluster) from the conftest fixtures, its URL
# in an environment variable that worker processes inherit; each test's prefix is its own path.
_REDIS_MAKE = (
    "import os\nfrom scrapy_simhash.store.redisstore import RedisStore\n"
    "make = lambda path: RedisStore(os.environ['SIMHASH_TEST_REDIS_URL'], prefix=str(path))"
)


REDIS_SERVERS = {"redis": "redis_server", "redis-cluster": "redis_cluster"}
for _name in REDIS_SERVERS:
    STORES[_name] = StoreKind(
        lambda path: RedisStore(os.environ["SIMHASH_TEST_REDIS_URL"], prefix=str(path)), _REDIS_MAKE
    )


LAYOUT = TableLayout(64, 3, 4)


def fp_bytes(v: int) -> bytes:
    return v.to_bytes(8, "big")


def open_store(make: Callable[[Path], FingerprintStore], path: Path, layout: TableLayout = LAYOUT) -> FingerprintStore:
    store = make(path)
    store.open()
    store.configure(layout)
    store.create_meta(meta(0))
    return store


def meta(n: int) -> bytes:
    return b'{"format": "scrapy-simhash-index", "n": %d}' % n


def group_fps(seed: int = 11) -> list[list[int]]:
    """Per group, one variant per worker: pairwise within 2 bits (a near-duplicate group)."""
    rng = random.Random(seed)
    groups = []
    for _ in range(GROUPS):
        base = rng.getrandbits(64)
        bits = rng.sample(range(64), WORKERS)
        groups.append([base ^ (1 << b) for b in bits])
    return groups


def work(store: FingerprintStore, worker: int, groups: list[list[int]]) -> list[tuple[int, bool, bytes | None]]:
    order = list(range(len(groups)))
    random.Random(worker).shuffle(order)
    out = []
    for g in order:
        probe = store.check_and_add(b"g%02d-w%d" % (g, worker), fp_bytes(groups[g][worker]), 3, 0)
        out.append((g, not probe.hits, probe.hits[0].key if probe.hits else None))
    return out


GROUPS = 40


WORKERS = 4
