"""A Redis server switched to an evicting policy during a crawl: what is lost before the store
says so, and whether the index says so at its next open (issue 38).

    nice .venv/bin/python benchmarks/scale/eviction.py [--urls 3000] [--switch 1000] [--maxmemory 5mb]

The crawl: the real pages of ``../shared/data`` through the real ``ChangeTracker.observe`` with
the default settings, as ``bytes_per_url.py`` makes them (75% kept pages, 25% near-duplicates of
kept ones), on a redis-server of its own with ``maxmemory`` (``noeviction``); before page
``--switch`` another client runs ``CONFIG SET maxmemory-policy allkeys-lru``. Printed: the pages
answered after the server's first eviction (``INFO stats`` ``evicted_keys``, read after each page),
the first error and its kind, the fingerprints and records of answered pages that are gone at the
end, the near-duplicates of answered kept pages that were kept again, and what opening the index
says once the policy is back to ``noeviction``. Runs against any checkout (``PYTHONPATH=<checkout>``).

``--cost``: what the check costs instead: the same pages (no maxmemory) with the check on every
call, on every 8th (the default) and never, each on a server of its own; printed: the server's
microseconds per script call (``INFO commandstats``, ``evalsha``) and decisions per second.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import zlib
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve()
if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(_HERE.parents[2]))
sys.path.insert(0, str(_HERE.parents[2] / "tests"))
sys.path.insert(0, str(_HERE.parent))

import redis
from bytes_per_url import KEPT_SHARE, base_pages, variant
from redis_bench import evalsha_stats, evicted_keys, fresh_server
from scrapy.settings import Settings

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.errors import SimhashIndexError, StoreError
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.redisstore import RedisStore

SHARDS = 1024


def crawl(url: str, pages: list[Any], urls: int, switch: int, seed: int = 7) -> dict[str, Any]:
    """The crawl of ``urls`` pages, the policy switched before page ``switch``; what it saw."""
    admin = redis.Redis.from_url(url)
    store = RedisStore(url, prefix="evict")
    index = SimhashIndex(store)
    tracker = ChangeTracker(index, **load_config(Settings()).tracker_kwargs())
    rng = random.Random(seed)
    kept: list[tuple[int, Any, str]] = []
    acked_new: list[str] = []  # answered new: its fingerprint is in the index
    acked: list[str] = []  # answered: its record is in the index
    out: dict[str, Any] = {"first_eviction": None, "first_error": None, "errors": {}, "kept_again": 0}
    answered_after = 0
    for i in range(urls):
        if i == switch:
            admin.config_set("maxmemory-policy", "allkeys-lru")
        source = None
        if kept and rng.random() >= KEPT_SHARE:
            fp, page, source = kept[rng.randrange(len(kept))]
            for bit in rng.sample(range(64), rng.choice((1, 2))):
                fp ^= 1 << bit
            observed = variant(page, fp, None)
        else:
            observed = variant(pages[rng.randrange(len(pages))], rng.getrandbits(64), f"Page {i} of the crawl")
        key = f"https://site{i % 97}.example/{i:08d}"
        try:
            verdict = tracker.observe(key, observed, now=1.7e9 + i)
        except StoreError as exc:
            out["errors"][exc.kind] = out["errors"].get(exc.kind, 0) + 1
            if out["first_error"] is None:
                out["first_error"] = (i, exc.kind, str(exc))
        else:
            acked.append(key)
            if out["first_eviction"] is not None:
                answered_after += 1
            if verdict.verdict == "new":
                acked_new.append(key)
                if source is None:
                    kept.append((observed.fp, observed, key))
                elif source in acked_new:  # a near-duplicate of an answered kept page, kept again
                    out["kept_again"] += 1
        if out["first_eviction"] is None and evicted_keys(admin) > 0:
            out["first_eviction"] = i
    index.close()
    prefix = store.prefix.encode()
    pipe = admin.pipeline(transaction=False)
    for key in acked:  # a URL's entry (layout 2): a flags byte, 1: a fingerprint, 2: a record
        pipe.hget(prefix + b"r%d" % (zlib.crc32(key.encode()) % SHARDS), key)
    entries = dict(zip(acked, pipe.execute()))
    out["answered_after_eviction"] = answered_after
    out["lost_fps"] = (sum(1 for key in acked_new if not (entries[key] or b"\0")[0] & 1), len(acked_new))
    out["lost_records"] = (sum(1 for key in acked if not (entries[key] or b"\0")[0] & 2), len(acked))
    out["evicted_keys"] = evicted_keys(admin)
    admin.config_set("maxmemory-policy", "noeviction")
    try:
        SimhashIndex(RedisStore(url, prefix="evict")).close()
        out["reopen"] = "opened, nothing said"
    except SimhashIndexError as exc:
        out["reopen"] = f"{type(exc).__name__}({getattr(exc, 'kind', '')}): {exc}"
    admin.close()
    return out


def cost(pages: list[Any], urls: int) -> None:
    """Server time per script call with the eviction check every call, every 8th call and never."""
    import time

    from scrapy_simhash.store import redisstore

    for every in (1, 8, 0):
        with fresh_server("evict-cost") as server:
            admin = redis.Redis.from_url(server.url)
            store = RedisStore(server.url, prefix="cost")
            index = SimhashIndex(store)
            if every:
                redisstore.EVICTION_CHECK_CALLS = every
            else:
                store._evicted_base = None  # as where INFO is refused: never checked
            tracker = ChangeTracker(index, **load_config(Settings()).tracker_kwargs())
            rng = random.Random(7)
            admin.config_resetstat()
            start = time.perf_counter()
            for i in range(urls):
                page = variant(pages[rng.randrange(len(pages))], rng.getrandbits(64), f"Page {i}")
                tracker.observe(f"https://site{i % 97}.example/{i:08d}", page, now=1.7e9 + i)
            seconds = time.perf_counter() - start
            stats = evalsha_stats(admin)
            index.close()
            admin.close()
        label = f"every {every} calls" if every else "never"
        print(
            f"  check {label:15} {stats['usec_per_call']:6.1f} us of server time a call, "
            f"{stats['calls'] / urls:.1f} calls a page, {urls / seconds:,.0f} decisions/s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=3000)
    parser.add_argument("--switch", type=int, default=1000)
    parser.add_argument("--maxmemory", default="5mb")
    parser.add_argument("--cost", action="store_true")
    args = parser.parse_args()
    pages = base_pages()
    if args.cost:
        print(f"{args.urls:,} new pages, no maxmemory: the eviction check's cost")
        cost(pages, args.urls)
        return
    with fresh_server("evict") as server:
        redis.Redis.from_url(server.url).config_set("maxmemory", args.maxmemory)
        out = crawl(server.url, pages, args.urls, args.switch)
    print(f"{args.urls:,} pages, maxmemory {args.maxmemory}, allkeys-lru from page {args.switch:,}")
    print(f"  first eviction after page      {out['first_eviction']}")
    print(f"  pages answered after it        {out['answered_after_eviction']:,}")
    print(f"  first error                    {out['first_error']}")
    print(f"  errors by kind                 {out['errors']}")
    print(f"  answered new, fingerprint gone {out['lost_fps'][0]:,} of {out['lost_fps'][1]:,}")
    print(f"  answered, record gone          {out['lost_records'][0]:,} of {out['lost_records'][1]:,}")
    print(f"  near-duplicates kept again     {out['kept_again']:,}")
    print(f"  keys the server evicted        {out['evicted_keys']:,}")
    print(f"  the index at its next open     {out['reopen']}")


if __name__ == "__main__":
    main()
