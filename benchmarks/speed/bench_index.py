"""Benchmark: SimhashIndex on LMDB vs the ``simhash`` package's SimhashIndex and numpy brute force.

Run: ``.venv/bin/python benchmarks/speed/bench_index.py [--sizes 1e6,1e7] [--out benchmarks/results/index.txt]``

Random uniform 64-bit fingerprints (seeded), keys ``"%x" % i`` (short: the key maps then show the
cost of the index itself; URL keys add their length twice, see "bytes per fp"). For each size:

- bulk load (``add_many``) time, and bytes on disk per fingerprint (``data.mdb`` / n), split into
  the tables and the two key maps;
- ``near()`` latency, p50 / p99 / mean, for random queries (almost never a match, the common case
  in a crawl) and for planted near-duplicates (an indexed fingerprint with 1-3 bits flipped);
- numpy brute force (XOR + popcount over every fingerprint), the floor for a scan;
- ``check_and_add`` per second with durable commits (fsync per commit), without, and in
  ``batch()`` groups;
- at ``--peer-sizes``: queries per second of ``simhash.SimhashIndex`` (k = 3, same 4 x 16-bit
  layout, pure Python) against ours on the same fingerprints and queries, after checking that both
  return the same keys;
- with ``--before COMMIT``: ``near()`` of that commit's code on the same fingerprints, in
  alternating blocks of queries with ours (``benchmarks/speed/bench_decision.py`` loads it from git);
- at ``--wide-size``: the 20-table layout (6 blocks, k = 3): candidates per lookup and latency.

Timings on a shared 2-core machine are noisy: medians and ratios measured in one process.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scrapy_simhash.store.index import SimhashIndex

LINES: list[str] = []


def out(line: str = "") -> None:
    print(line, flush=True)
    LINES.append(line)


def _size(text: str) -> int:
    return int(float(text))


def _fps(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**64, size=n, dtype=np.uint64)


def _flip(rng: np.random.Generator, fp: int, d: int) -> int:
    for b in rng.choice(64, size=d, replace=False).tolist():
        fp ^= 1 << b
    return fp


def _lat(fn, queries: list[int]) -> np.ndarray:
    ts = np.empty(len(queries))
    clock = time.perf_counter_ns
    for i, q in enumerate(queries):
        t0 = clock()
        fn(q)
        ts[i] = clock() - t0
    return ts / 1000.0  # microseconds


def _fmt(ts: np.ndarray) -> str:
    return (
        f"p50 {np.median(ts):7.1f} us  p99 {np.percentile(ts, 99):7.1f} us  mean {ts.mean():7.1f} us"
        f"  ({1e6 / ts.mean():,.0f} q/s)"
    )


def load(path: Path, fps: np.ndarray, **kwargs) -> tuple[SimhashIndex, float]:
    idx = SimhashIndex.open(path, durable=False, **kwargs)
    t = time.perf_counter()
    idx.add_many(zip((f"{i:x}" for i in range(len(fps))), fps.tolist()))
    return idx, time.perf_counter() - t


def sizes_line(idx: SimhashIndex, n: int) -> str:
    info = idx.info()
    return (
        f"{info['file_size'] / n:6.1f} B/fp on disk (data.mdb {info['file_size'] / 2**20:,.0f} MiB): "
        f"tables {info['tables_bytes'] / n:.1f}, fp->keys {info['fps_bytes'] / n:.1f}, "
        f"key->fp {info['keys_bytes'] / n:.1f} B/fp"
    )


def bench_size(n: int, base: Path, args: argparse.Namespace) -> SimhashIndex:
    out(f"== n = {n:,} random 64-bit fingerprints, default layout (k=3, 4 blocks, 4 tables x 16-bit keys)")
    fps = _fps(n)
    idx, secs = load(base / f"default-{n}", fps)
    out(f"bulk load (add_many): {secs:.1f} s ({n / secs:,.0f} fps/s)")
    out(sizes_line(idx, n))
    rng = np.random.default_rng(7)
    random_q = rng.integers(0, 2**64, size=args.queries, dtype=np.uint64).tolist()
    picks = rng.integers(0, n, size=args.queries // 4).tolist()
    near_q = [_flip(rng, int(fps[i]), 1 + j % 3) for j, i in enumerate(picks)]
    for q in random_q[:2000]:  # warm up
        idx.near(q)
    idx.stats.update(probes=0, candidates=0, candidates_max=0)
    ts = _lat(idx.near, random_q)
    out(f"near(), random queries ({len(random_q):,}):   {_fmt(ts)}")
    cands = idx.stats["candidates"] / max(idx.stats["probes"], 1)
    out(f"  candidates per lookup: mean {cands:.0f}, max {idx.stats['candidates_max']}, capped {idx.stats['capped']}")
    ts_near = _lat(idx.near, near_q)
    assert all(idx.near(q) for q in near_q[:200]), "planted neighbours must be found"
    out(f"near(), planted neighbours ({len(near_q):,}): {_fmt(ts_near)}")
    if args.before:
        bench_before(n, fps, idx, random_q, base, args)
    # numpy brute force over all fingerprints: the floor for a scan
    bf = []
    for q in random_q[:20]:
        t0 = time.perf_counter()
        np.flatnonzero(np.bitwise_count(fps ^ np.uint64(q)) <= 3)
        bf.append(time.perf_counter() - t0)
    bf_us = float(np.median(bf)) * 1e6
    out(
        f"numpy brute force XOR+popcount over {n:,}: median {bf_us:,.0f} us/query -> index is {bf_us / np.median(ts):,.0f}x faster (p50)"
    )
    return idx


def bench_before(n: int, fps: np.ndarray, ours: SimhashIndex, queries: list[int], base: Path, args) -> None:
    """near() of the code of commit ``--before`` on the same fingerprints, in alternating blocks
    of queries with ours (both see the same machine load)."""
    from bench_decision import load_before

    old_index, _ = load_before(args.before, Path(args.before_src) if args.before_src else base / "before-src")
    old = old_index.SimhashIndex.open(base / f"before-{n}", durable=False)
    t = time.perf_counter()
    old.add_many(zip((f"{i:x}" for i in range(len(fps))), fps.tolist()))
    out(f"{args.before}: bulk load {time.perf_counter() - t:.1f} s")
    for q in queries[:2000]:
        old.near(q)
    lat: dict[str, list[np.ndarray]] = {"ours": [], args.before: []}
    for start in range(0, len(queries), 1000):
        block = queries[start : start + 1000]
        pair = [("ours", ours), (args.before, old)]
        for label, index in pair if (start // 1000) % 2 == 0 else reversed(pair):
            lat[label].append(_lat(index.near, block))
    old.close()
    shutil.rmtree(base / f"before-{n}", ignore_errors=True)
    a, b = np.concatenate(lat["ours"]), np.concatenate(lat[args.before])
    out(f"near(), random queries, alternating blocks: ours        {_fmt(a)}")
    out(f"near(), random queries, alternating blocks: {args.before:<11} {_fmt(b)}")
    out(
        f"  ours / {args.before}: p50 {np.median(a) / np.median(b):.2f}, "
        f"p99 {np.percentile(a, 99) / np.percentile(b, 99):.2f}"
    )


def bench_writes(path: Path, n: int, args: argparse.Namespace) -> None:
    out(f"-- check_and_add on the {n:,} index (new random fingerprints, new keys)")
    rng = np.random.default_rng(11)
    for durable, count in ((True, args.durable_ops), (False, args.durable_ops * 10)):
        with SimhashIndex.open(path, durable=durable) as idx:
            qs = rng.integers(0, 2**64, size=count, dtype=np.uint64).tolist()
            t0 = time.perf_counter()
            for i, q in enumerate(qs):
                idx.check_and_add(f"w{durable}-{i}", q)
            secs = time.perf_counter() - t0
            out(
                f"check_and_add durable={durable!s:5}, one commit each: {count / secs:10,.0f} /s ({secs / count * 1e6:,.0f} us each)"
            )
    for size in (10, 100, 1000):
        with SimhashIndex.open(path, durable=True) as idx:
            count = args.durable_ops * 5
            qs = rng.integers(0, 2**64, size=count, dtype=np.uint64).tolist()
            t0 = time.perf_counter()
            for start in range(0, count, size):
                with idx.batch():
                    for i in range(start, min(start + size, count)):
                        idx.check_and_add(f"b{size}-{i}", qs[i])
            secs = time.perf_counter() - t0
            out(f"check_and_add durable=True, batch() of {size:4}:      {count / secs:10,.0f} /s")


def bench_peer(n: int, base: Path, ours: SimhashIndex | None, args: argparse.Namespace) -> None:
    from simhash import Simhash
    from simhash import SimhashIndex as PeerIndex

    logging.getLogger("simhash").setLevel(logging.ERROR)
    out(f"-- vs simhash.SimhashIndex (pip simhash 2.1.2, k=3, pure Python) at n = {n:,}")
    fps = _fps(n)
    if ours is None:
        ours, _ = load(base / f"default-{n}", fps)
    t0 = time.perf_counter()
    peer = PeerIndex([(f"{i:x}", Simhash(int(v))) for i, v in enumerate(fps.tolist())], k=3)
    out(f"peer build: {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(3)
    qs = rng.integers(0, 2**64, size=args.peer_queries, dtype=np.uint64).tolist()
    picks = rng.integers(0, n, size=args.peer_queries // 2).tolist()
    qs[: len(picks)] = [_flip(rng, int(fps[i]), 1 + j % 3) for j, i in enumerate(picks)]
    for q in qs[:200]:
        assert sorted(peer.get_near_dups(Simhash(q))) == sorted(m.key for m in ours.near(q)), q
    peer_q = [Simhash(q) for q in qs]
    # Interleaved, query by query, so that load from other processes hits both alike.
    t_peer = np.empty(len(qs))
    t_ours = np.empty(len(qs))
    get_near_dups, near, clock = peer.get_near_dups, ours.near, time.perf_counter_ns
    for i, q in enumerate(qs):
        t0 = clock()
        get_near_dups(peer_q[i])
        t1 = clock()
        near(q)
        t_ours[i] = clock() - t1
        t_peer[i] = t1 - t0
    t_peer /= 1000.0
    t_ours /= 1000.0
    out(f"peer get_near_dups: {_fmt(t_peer)}")
    out(f"ours near() (LMDB): {_fmt(t_ours)}")
    out(
        f"queries/s ratio ours/peer: {t_peer.mean() / t_ours.mean():.1f}x (mean), {np.median(t_peer) / np.median(t_ours):.1f}x (p50)"
    )
    peer = None  # free it before the next measurement
    gc.collect()


def bench_wide(n: int, base: Path, default: SimhashIndex | None, args: argparse.Namespace) -> None:
    out(f"-- 20-table layout (6 blocks of 11/10 bits, 3 blocks per key, k=3) at n = {n:,}")
    fps = _fps(n)
    idx, secs = load(base / f"wide-{n}", fps, blocks=6)
    out(f"bulk load: {secs:.1f} s; {sizes_line(idx, n)}")
    rng = np.random.default_rng(7)
    qs = rng.integers(0, 2**64, size=args.queries, dtype=np.uint64).tolist()
    for q in qs[:2000]:
        idx.near(q)
    idx.stats.update(probes=0, candidates=0, candidates_max=0)
    ts = _lat(idx.near, qs)
    out(f"near(), random queries: {_fmt(ts)}")
    out(
        f"  candidates per lookup: mean {idx.stats['candidates'] / idx.stats['probes']:.2f}, max {idx.stats['candidates_max']}"
    )
    if default is not None:
        default.stats.update(probes=0, candidates=0, candidates_max=0)
        ts_d = _lat(default.near, qs)
        out(
            f"  same queries, default layout: {_fmt(ts_d)}; candidates per lookup "
            f"{default.stats['candidates'] / default.stats['probes']:.0f}"
        )
    idx.close()
    shutil.rmtree(base / f"wide-{n}", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        default="1e6,1e7",
        help="index sizes, comma-separated (default 1e6,1e7)",
    )
    parser.add_argument("--queries", type=_size, default=20000)
    parser.add_argument(
        "--peer-sizes",
        default="1e5,1e6",
        help="sizes for the simhash package comparison ('' to skip)",
    )
    parser.add_argument("--peer-queries", type=_size, default=2000)
    parser.add_argument(
        "--wide-size",
        type=_size,
        default=None,
        help="n for the 20-table layout (default: largest size; 0 skips)",
    )
    parser.add_argument("--durable-ops", type=_size, default=1000)
    parser.add_argument(
        "--dir",
        default=None,
        help="where to build the indexes (default: a temporary directory)",
    )
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "index.txt"))
    parser.add_argument("--before", default=None, help="also time near() of this commit's code (e.g. b237202)")
    parser.add_argument("--before-src", default=None, help="where the --before code is (or goes)")
    args = parser.parse_args()
    sizes = [_size(s) for s in args.sizes.split(",") if s]
    peer_sizes = [_size(s) for s in args.peer_sizes.split(",") if s]
    wide = max(sizes) if args.wide_size is None else args.wide_size
    base = Path(args.dir or tempfile.mkdtemp(prefix="bench-index-"))
    base.mkdir(parents=True, exist_ok=True)
    out(f"bench_index.py  {time.strftime('%Y-%m-%d %H:%M:%S')}  cpus={os.cpu_count()}  numpy {np.__version__}")
    out("(shared 2-core machine: other jobs run at the same time; compare ratios)")
    try:
        kept: dict[int, SimhashIndex] = {}
        for n in sizes:
            idx = bench_size(n, base, args)
            idx.close()
            if n == min(sizes):
                bench_writes(base / f"default-{n}", n, args)
            if n in peer_sizes or n == wide:
                kept[n] = SimhashIndex.open(base / f"default-{n}", durable=False)
            else:
                shutil.rmtree(base / f"default-{n}", ignore_errors=True)
            out()
        for n in peer_sizes:
            bench_peer(n, base, kept.get(n), args)
            out()
        if wide:
            bench_wide(wide, base, kept.get(wide), args)
        for idx in kept.values():
            idx.close()
    finally:
        if args.dir is None:
            shutil.rmtree(base, ignore_errors=True)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join(LINES) + "\n")


if __name__ == "__main__":
    main()
