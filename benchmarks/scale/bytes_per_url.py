"""What the store costs per URL, by part: the real pages of ``../shared/data`` through the real
``Fingerprinter`` and ``ChangeTracker.observe`` with the default settings, on LMDB (``data.mdb``)
and on Redis (``INFO memory`` ``used_memory``, before and after).

    nice .venv/bin/python benchmarks/scale/bytes_per_url.py [--urls 100000] [--store lmdb,redis]

The URLs: ``--urls`` synthetic URLs over the data's real pages (the AEB and zh-web-cee pages, each
fingerprinted once by the real ``Fingerprinter``). 75% are kept pages: a real page's own text (the
evidence) with one line of its own added (the URL's number), its change sketch, visible key and
validators, under a random 64-bit fingerprint (so that it duplicates no other URL); 25% are
near-duplicates: the fingerprint of a kept URL with one or two bits flipped, the same page (it adds
nothing), dropped. The decision is the product's: ``ChangeTracker`` with the settings' defaults
(``load_config``), each URL observed once, one second apart.

Printed: bytes per URL of each part (the tables, fingerprints and keys: the index; the records;
the due-time index; the evidence; the rest) as the store reports them (LMDB: pages of each
sub-database; Redis: ``MEMORY USAGE``), the file size (LMDB) or ``used_memory`` growth (Redis), and
decisions per second. Runs against any checkout (``PYTHONPATH=<checkout>``): a part a version does
not keep separately shows as 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve()
if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(_HERE.parents[2]))
sys.path.insert(0, str(_HERE.parents[2] / "tests"))

from helpers.data import load_pages
from scrapy.settings import Settings

from scrapy_simhash import Fingerprinter
from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint.novelty import OwnText
from scrapy_simhash.fingerprint.simhash import EmptyTextError
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store.index import SimhashIndex

KEPT_SHARE = 0.75
PARTS = {
    "index (tables, fps, ids)": ("tables_bytes", "fps_bytes", "ids_bytes"),
    "records": ("records_bytes",),
    "due index": ("due_index_bytes", "dues_bytes"),
    "evidence": ("evidence_bytes", "evidence_tail_bytes"),
    "change sketches": ("sketches_bytes",),
}
#: The cold parts: read by a decision only when its URL is known or has a candidate.
COLD = ("evidence", "change sketches")


def base_pages() -> list[Any]:
    """The data's real pages, fingerprinted (those with own text)."""
    fper = Fingerprinter()
    out = []
    for htmls in load_pages().values():
        for html in htmls:
            try:
                page = fper.fingerprint_page(html)
            except EmptyTextError:
                continue
            if page.own is not None and page.own.has_text and page.may_match:
                out.append(page)
    return out


def variant(page: Any, fp: int, line: str | None) -> Any:
    """``page`` under fingerprint ``fp``, its own text with ``line`` added (``None``: as it is)."""
    own = page.own
    lines = [*(own._lines or ()), *((line,) if line else ())]
    return dataclasses.replace(page, fp=fp, own=OwnText(lines, shown=[*lines, *(own._rest or ())]))


def run(index: SimhashIndex, pages: list[Any], urls: int, seed: int = 7) -> dict[str, Any]:
    config = load_config(Settings())
    tracker = ChangeTracker(index, **config.tracker_kwargs())
    rng = random.Random(seed)
    kept: list[tuple[int, Any]] = []
    verdicts: dict[str, int] = {}
    start = time.perf_counter()
    for i in range(urls):
        if kept and rng.random() >= KEPT_SHARE:  # a near-duplicate of a kept URL: the same text
            fp, page = kept[rng.randrange(len(kept))]
            for bit in rng.sample(range(64), rng.choice((1, 2))):
                fp ^= 1 << bit
            observed = variant(page, fp, None)
        else:
            observed = variant(
                pages[rng.randrange(len(pages))], rng.getrandbits(64), f"Page {i} of the synthetic crawl"
            )
            kept.append((observed.fp, observed))
        key = f"https://site{i % 97}.example/{i:08d}"
        verdict = tracker.observe(key, observed, now=1.7e9 + i, validators=('W/"abc"', None))
        verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
    return {"seconds": time.perf_counter() - start, "verdicts": verdicts}


def record_fields(index: SimhashIndex, sample: int = 5000) -> dict[str, float]:
    """Mean bytes of a stored record, and what each of its parts adds to it (the record's bytes
    less those of the record without that part), over the first ``sample`` records."""
    from scrapy_simhash.store.record import PageRecord

    removals = {
        "change sketch": {"sketch": None},
        "schedule": {"schedule": None},
        "visible key": {"visible_key": None},
        "validators": {"etag": None, "last_modified": None},
        "due time": {"next_due": None},
    }
    out = dict.fromkeys(["record", *removals], 0.0)
    n = 0
    for _, raw in index.iter_records():
        record = PageRecord.from_bytes(raw)
        out["record"] += len(raw)
        for name, changes in removals.items():
            out[name] += len(raw) - len(dataclasses.replace(record, **changes).to_bytes())
        n += 1
        if n >= sample:
            break
    return {name: value / max(n, 1) for name, value in out.items()}


def parts(info: dict[str, Any], urls: int) -> dict[str, float]:
    out = {name: sum(info.get(k, 0) for k in keys) / urls for name, keys in PARTS.items()}
    known = {k for keys in PARTS.values() for k in keys}
    out["rest"] = (
        sum(v for k, v in info.items() if k.endswith("_bytes") and k not in known and k not in ("redis_bytes",)) / urls
    )
    return out


def lmdb_run(pages: list[Any], urls: int) -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="simhash-scale-"))
    try:
        with SimhashIndex.open(directory / "idx", map_size=1 << 30) as index:
            result = run(index, pages, urls)
            info = index.info()
            result["record_fields"] = record_fields(index)
        result["parts"] = parts(info, urls)
        result["total"] = os.path.getsize(directory / "idx" / "data.mdb") / urls
        return result
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def redis_run(pages: list[Any], urls: int) -> dict[str, Any]:
    import redis
    from helpers.redis_servers import RedisServer, redis_server_binary

    from scrapy_simhash.store.redisstore import RedisStore

    binary = redis_server_binary()
    if binary is None:
        sys.exit("no redis-server binary")
    directory = Path(tempfile.mkdtemp(prefix="simhash-scale-redis-"))
    server = RedisServer(binary, directory).start()
    try:
        client = redis.Redis.from_url(server.url)
        before = client.info("memory")["used_memory"]
        store = RedisStore(server.url, prefix="scale")
        index_prefix = store.prefix
        index = SimhashIndex(store)
        result = run(index, pages, urls)
        info = index.info()
        index.close()
        result["total"] = (client.info("memory")["used_memory"] - before) / urls
        # What the store's figures leave out: the due-time index, and the evidence keys (outside
        # the index's prefix: every key of the server but the index's).
        info["dues_bytes"] = client.memory_usage(index_prefix + "due", samples=0) or 0
        info["evidence_bytes"] = sum(
            client.memory_usage(name, samples=0) or 0
            for name in client.scan_iter(count=1000)
            if not name.startswith(index_prefix.encode())
        )
        result["parts"] = parts(info, urls)
        client.close()
        return result
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--store", default="lmdb,redis")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    pages = base_pages()
    print(f"{len(pages)} real pages with own text; {args.urls:,} URLs, {KEPT_SHARE:.0%} kept")
    results = {}
    for store in args.store.split(","):
        result = (lmdb_run if store == "lmdb" else redis_run)(pages, args.urls)
        results[store] = result
        total = "data.mdb" if store == "lmdb" else "used_memory"
        print(f"\n{store}: {result['verdicts']}, {args.urls / result['seconds']:,.0f} decisions/s")
        for name, value in result["parts"].items():
            print(f"  {name:28} {value:>8,.0f} B/URL")
        hot = sum(v for k, v in result["parts"].items() if k not in COLD)
        print(f"  {'hot (all but the cold parts)':28} {hot:>8,.0f} B/URL")
        hot += result["parts"].get("change sketches", 0.0)
        print(f"  {'hot and the change sketches':28} {hot:>8,.0f} B/URL")
        print(f"  {total:28} {result['total']:>8,.0f} B/URL")
        if "record_fields" in result:
            fields = result["record_fields"]
            print(
                f"  a record: {fields.pop('record'):,.0f} B, of which "
                + ", ".join(f"{k} {v:,.0f}" for k, v in fields.items())
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
