"""Redis RAM per URL by key family, and the server's time per script call by op, at a size.

    PYTHONPATH=<checkout> nice .venv/bin/python benchmarks/scale/redis_families.py [--size 200000] [--decisions 1000]

A fresh ``redis-server`` (127.0.0.1, no persistence). First ``--decisions`` URLs go through the real
``ChangeTracker.observe`` with the default settings (``bytes_per_url.py``'s pages and mix: 75% kept
pages, 25% near-duplicates): their records and evidence are real. Then the index is filled to
``--size`` URLs with copies of those records under new keys (``https://siteN.example/NNNNNNNN``,
as ``bytes_per_url.py`` names them) and random fingerprints, in the store's own bulk calls (so that
the hashes have the sizes, and the encodings, a crawl of that size leaves them), and
``--decisions`` more pages are decided at that size with ``SLOWLOG`` on every call.

Printed: each key family's ``MEMORY USAGE`` per URL (a family: the key's name without its
trailing digits, or ``evidence``), with the Redis encodings of its keys and their entries; the
hot part (every family but the evidence) and ``used_memory``; then, of the decisions at ``--size``,
each op's calls and the server's microseconds per call (``SLOWLOG``: the script's own time).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve()
if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(_HERE.parents[2]))
sys.path.insert(0, str(_HERE.parents[2] / "tests"))
sys.path.insert(0, str(_HERE.parent))

import redis
from bytes_per_url import KEPT_SHARE, base_pages, run, variant
from helpers.redis_servers import RedisServer, redis_server_binary
from scrapy.settings import Settings

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.redisstore import RedisStore

CHUNK = 500


def families(client: Any, store: RedisStore) -> dict[str, dict[str, Any]]:
    """``MEMORY USAGE`` and encodings of every key of the server, by family."""
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {"bytes": 0, "keys": 0, "encodings": Counter()})
    prefix = store.prefix.encode()
    for name in client.scan_iter(count=2000):
        if name.startswith(prefix):
            family = name[len(prefix) :].rstrip(b"0123456789").decode() or "?"
        elif name.startswith(store.evidence_prefix):
            family = "evidence"
        else:
            family = "other"
        part = out[family]
        part["bytes"] += client.memory_usage(name, samples=0) or 0
        part["keys"] += 1
        part["encodings"][client.object("encoding", name).decode()] += 1
    return dict(out)


def fill(
    store: RedisStore, records: list[tuple[bytes, bytes | None]], first: int, size: int, rng: random.Random
) -> None:
    """URLs ``first`` .. ``size - 1``: a copy of a real record (and its evidence) each, a random fingerprint."""
    now = 1.7e9
    for start in range(first, size, CHUNK):
        keys = [f"https://site{i % 97}.example/{i:08d}".encode() for i in range(start, min(size, start + CHUNK))]
        picks = [records[rng.randrange(len(records))] for _ in keys]
        store.put([(key, rng.getrandbits(64).to_bytes(8, "big")) for key in keys])
        evidence = {key: ev for key, (_, ev) in zip(keys, picks) if ev}
        store.put_records([(key, rec, now + 86400 + i) for i, (key, (rec, _)) in enumerate(zip(keys, picks))], evidence)


def decide(index: SimhashIndex, pages: list[Any], decisions: int, seed: int = 11) -> None:
    """``decisions`` pages of new URLs, ``bytes_per_url.py``'s mix (75% kept, 25% near-duplicates)."""
    tracker = ChangeTracker(index, **load_config(Settings()).tracker_kwargs())
    rng = random.Random(seed)
    kept: list[tuple[int, Any]] = []
    for i in range(decisions):
        if kept and rng.random() >= KEPT_SHARE:
            fp, page = kept[rng.randrange(len(kept))]
            for bit in rng.sample(range(64), rng.choice((1, 2))):
                fp ^= 1 << bit
            observed = variant(page, fp, None)
        else:
            observed = variant(pages[rng.randrange(len(pages))], rng.getrandbits(64), f"Page {i} of the benchmark")
            kept.append((observed.fp, observed))
        tracker.observe(f"https://new{i % 97}.example/{i:08d}", observed, now=1.8e9 + i)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=200_000)
    parser.add_argument("--decisions", type=int, default=1000)
    args = parser.parse_args()
    binary = redis_server_binary()
    if binary is None:
        sys.exit("no redis-server binary")
    pages = base_pages()
    directory = Path(tempfile.mkdtemp(prefix="simhash-redis-families-"))
    server = RedisServer(binary, directory).start()
    try:
        client = redis.Redis.from_url(server.url)
        before = client.info("memory")["used_memory"]
        store = RedisStore(server.url, prefix="fam", client=redis.Redis.from_url(server.url, socket_timeout=120))
        index = SimhashIndex(store)
        run(index, pages, args.decisions)
        records = [(raw, store.get_evidence([key.encode()])[0]) for key, raw in index.iter_records()]
        start = time.perf_counter()
        fill(store, records, args.decisions, args.size, random.Random(5))
        filled = time.perf_counter() - start
        used = client.info("memory")["used_memory"] - before
        fams = families(client, store)
        print(
            f"{args.size:,} URLs ({args.decisions:,} decided, the rest copies of their records; filled in {filled:.0f} s)"
        )
        print(f"{'family':<10} {'B/URL':>8} {'keys':>7}  encodings")
        hot = 0.0
        for name, part in sorted(fams.items(), key=lambda kv: -kv[1]["bytes"]):
            per = part["bytes"] / args.size
            if name not in ("evidence", "other"):
                hot += per
            encodings = ", ".join(f"{e} {n}" for e, n in part["encodings"].most_common())
            print(f"{name:<10} {per:>8,.1f} {part['keys']:>7,}  {encodings}")
        print(f"{'hot':<10} {hot:>8,.1f}   (every family but the evidence)")
        print(f"{'used_memory':<10} {used / args.size:>8,.1f}")
        client.config_set("slowlog-log-slower-than", 0)
        client.config_set("slowlog-max-len", 100_000)
        client.slowlog_reset()
        start = time.perf_counter()
        decide(index, pages, args.decisions)
        wall = time.perf_counter() - start
        ops: dict[str, list[int]] = defaultdict(list)
        for entry in client.slowlog_get(100_000):
            command = entry["command"]
            words = command.split() if isinstance(command, bytes) else []
            if words[:1] == [b"EVALSHA"] and len(words) > 4:  # EVALSHA sha 1 <meta key> <op> ...
                ops["script " + words[4].decode(errors="replace")].append(int(entry["duration"]))
            elif words:  # a command of a script (logged apart, its time inside the script's)
                ops["  in scripts: " + words[0].decode(errors="replace")].append(int(entry["duration"]))
        print(
            f"\n{args.decisions:,} decisions at {args.size:,}: {args.decisions / wall:,.0f}/s wall; server time by op (SLOWLOG)"
        )
        total = sum(sum(v) for op, v in ops.items() if op.startswith("script"))
        for op, durations in sorted(ops.items(), key=lambda kv: (not kv[0].startswith("script"), -sum(kv[1]))):
            durations.sort()
            print(
                f"  {op:<22} {len(durations):>6} calls  {sum(durations) / len(durations):>8,.1f} us mean  "
                f"median {durations[len(durations) // 2]:>6,} us  {sum(durations) / args.decisions:>8,.1f} us/decision"
            )
        print(f"  in all {total / args.decisions:,.1f} us of script time per decision")
        index.close()
        client.close()
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
