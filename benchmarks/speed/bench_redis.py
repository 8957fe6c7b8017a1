"""Benchmark: check-and-add on a local Redis, ours (RedisStore) beside datasketch's MinHashLSH on Redis.

Run: ``.venv/bin/python benchmarks/speed/bench_redis.py [--docs 8000] [--rounds 3] [--synthetic 200000]``

Documents: real text from ``../shared/data`` (CLUECorpusSmall sample lines, and both versions of
each document of ``revisions``: many near-duplicate pairs), fingerprinted once before timing:

- ours: ``Fingerprinter().fingerprint_text`` (64-bit SimHash), then per document one
  ``SimhashIndex.check_and_add`` on a ``RedisStore`` (one Lua script call: atomic);
- datasketch: a 128-permutation ``MinHash`` of the same text (character 4-grams), then per
  document ``MinHashLSH.query`` and, when it finds nothing, ``insert`` (two or more round trips,
  not atomic), with ``storage_config={"type": "redis"}`` (threshold 0.8).

Both run against one redis-server that this script starts on a free loopback port (no persistence),
emptied before each run; ours and datasketch alternate, ``--rounds`` times, with 1 client (this
process) and 4 clients (4 processes, the documents dealt round-robin, all starting together).
Printed: median operations/s (all clients together), per-operation p50/p99 latency (all rounds),
and the Redis memory of the index over the documents kept (the ``MEMORY USAGE`` of every key). ``--synthetic`` adds a
memory figure for our store at a larger size (random fingerprints, URL-like keys of ~60 bytes).
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np
import redis

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from helpers.redis_servers import RedisServer, redis_server_binary

from scrapy_simhash.fingerprint.simhash import Fingerprinter
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.redisstore import RedisStore

NUM_PERM = 128
THRESHOLD = 0.8


def load_docs(n: int) -> list[str]:
    docs: list[str] = []
    with gzip.open(DATA / "revisions" / "pairs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            docs += [rec["text_a"], rec["text_b"]]
    seen: set[str] = set()
    with gzip.open(DATA / "zh-text" / "cluecorpussmall-sample" / "CLUECorpusSmall_sampled.txt.gz", "rt") as f:
        for raw in f:
            line = raw.strip()
            if len(line) >= 50 and line[:40] not in seen:
                seen.add(line[:40])
                docs.append(line)
    docs = [d for d in docs if len(d.strip()) >= 50]
    return docs[:n]


def minhashes(docs: list[str]) -> list[Any]:
    from datasketch import MinHash

    out = []
    for text in docs:
        t = " ".join(text.split())
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch([t[i : i + 4].encode("utf-8") for i in range(max(1, len(t) - 3))])
        out.append(m)
    return out


def _ours(url: str, work: list[tuple[str, int]], start_at: float) -> list[float]:
    index = SimhashIndex(RedisStore(url, "bench"))
    while time.time() < start_at:
        time.sleep(0.001)
    lat = []
    for key, fp in work:
        t0 = time.perf_counter()
        index.check_and_add(key, fp)
        lat.append(time.perf_counter() - t0)
    index.close()
    return lat


def _lsh(port: int) -> Any:
    from datasketch import MinHashLSH

    storage = {"type": "redis", "basename": b"bench-lsh", "redis": {"host": "127.0.0.1", "port": port}}
    return MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, storage_config=storage)


def _datasketch(port: int, work: list[tuple[str, Any]], start_at: float) -> list[float]:
    lsh = _lsh(port)
    while time.time() < start_at:
        time.sleep(0.001)
    lat = []
    for key, m in work:
        t0 = time.perf_counter()
        if not lsh.query(m):
            lsh.insert(key, m)
        lat.append(time.perf_counter() - t0)
    return lat


def _one(args: tuple[str, str, int, list[Any], float]) -> list[float]:
    which, url, port, work, start_at = args
    return _ours(url, work, start_at) if which == "ours" else _datasketch(port, work, start_at)


def run(which: str, server: RedisServer, work: list[Any], clients: int, pool: Any) -> tuple[float, list[float], float]:
    """One run on an emptied server: (ops/s, latencies, used_memory delta per stored document)."""
    client = redis.Redis(port=server.port)
    client.flushall()
    if which == "ours":
        SimhashIndex(RedisStore(server.url, "bench")).close()  # created (metadata) before the clock starts
    else:
        _lsh(server.port)
    start_at = time.time() + 0.3
    t0 = time.time()
    if clients == 1:
        lats = [_one((which, server.url, server.port, work, start_at))]
    else:
        shares = [work[i::clients] for i in range(clients)]
        lats = pool.map(_one, [(which, server.url, server.port, share, start_at) for share in shares])
    wall = time.time() - max(t0, start_at)
    used = keys_bytes(client)
    client.close()
    if which == "ours":
        with SimhashIndex(RedisStore(server.url, "bench")) as index:
            stored = len(index)
    else:
        stored = _lsh(server.port).keys.size()
    return len(work) / wall, [x for lat in lats for x in lat], used / stored


def keys_bytes(client: redis.Redis) -> int:
    """Memory of every key in the database (``MEMORY USAGE``: key, value and their overhead; not
    the server's buffers and scripts, which depend on the clients and not on what is stored)."""
    return sum(int(client.memory_usage(key, samples=0) or 0) for key in client.scan_iter(count=1000))


def synthetic_memory(server: RedisServer, n: int) -> float:
    client = redis.Redis(port=server.port)
    client.flushall()
    index = SimhashIndex(RedisStore(server.url, "synthetic"))
    rng = np.random.default_rng(1)
    fps = rng.integers(0, 2**63, size=n, dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(1)
    for start in range(0, n, 50_000):
        index.add_many(
            (f"https://www.example-news-site.com/articles/2026/{i:09d}.html", int(fps[i]))
            for i in range(start, min(n, start + 50_000))
        )
    used = keys_bytes(client)
    info = index.info()
    index.close()
    client.close()
    print(
        f"  store's own MEMORY USAGE figures at {n}: " + ", ".join(f"{k}={v}" for k, v in info.items() if "bytes" in k)
    )
    return used / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--synthetic", type=int, default=200_000)
    args = parser.parse_args()
    binary = redis_server_binary()
    if binary is None:
        sys.exit("redis-server not found (./dev bench installs it)")
    docs = load_docs(args.docs)
    fper = Fingerprinter()
    ours_work = [(f"doc/{i}", fper.fingerprint_text(d)) for i, d in enumerate(docs)]
    ds_work = list(zip((f"doc/{i}" for i in range(len(docs))), minhashes(docs)))
    print(
        f"{len(docs)} documents ({sum(len(d) for d in docs) / len(docs):.0f} characters on average), {args.rounds} rounds"
    )
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(binary, Path(tmp)).start()
        ctx = mp.get_context("fork")
        results: dict[tuple[str, int], list[tuple[float, list[float], int]]] = {}
        try:
            with ctx.Pool(4) as pool:
                for _ in range(args.rounds):
                    for clients in (1, 4):
                        for which, work in (("ours", ours_work), ("datasketch", ds_work)):
                            results.setdefault((which, clients), []).append(run(which, server, work, clients, pool))
            print(f"{'':12} {'clients':>7} {'ops/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'bytes/kept':>10}")
            for (which, clients), runs in results.items():
                ops = median(r[0] for r in runs)
                lat = np.array([x for r in runs for x in r[1]]) * 1000
                mem = median(r[2] for r in runs)
                print(
                    f"{which:12} {clients:7d} {ops:9.0f} {np.percentile(lat, 50):8.3f} {np.percentile(lat, 99):8.3f} {mem:10.0f}"
                )
            for clients in (1, 4):
                a = median(r[0] for r in results[("ours", clients)])
                b = median(r[0] for r in results[("datasketch", clients)])
                print(f"ops/s ours / datasketch, {clients} client(s): {a / b:.1f}x")
            if args.synthetic:
                per = synthetic_memory(server, args.synthetic)
                print(
                    f"ours at {args.synthetic} fingerprints (random, ~60-byte URL keys): {per:.0f} bytes per fingerprint"
                )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
