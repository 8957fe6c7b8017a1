"""Benchmark: what the wide tier's lookup costs a check-and-add (``SIMHASH_WIDE_DISTANCE``).

Run: ``.venv/bin/python benchmarks/speed/bench_wide.py [--sizes 1e5,1e6] [--queries 3000]``

For each size an LMDB index of random uniform 64-bit fingerprints (seeded, the default 4 x 16-bit
layout, k = 3), then, in one process and in alternating blocks of queries, ``check_and_add`` (the
k tier: 4 bucket reads) and ``check_and_add_wide(..., 12)`` (also the 64 buckets one bit away), each
query a new key with a random fingerprint inside a ``batch()`` that is aborted (the index stays as
it was). Prints per size the median and p99 latency of both, their ratio, and the candidates
verified per lookup (the k tier's counted, the wide lookup's expected from the bucket count). The records' read and the sketch comparison happen only for pages that have a
candidate beyond k (with random fingerprints: almost none; their cost is one batched
``get_records`` and one 128-byte comparison per candidate).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scrapy_simhash.store.index import SimhashIndex


class _Abort(Exception):
    pass


def _time(index: SimhashIndex, key: str, fp: int, wide: int) -> float:
    t0 = time.perf_counter()
    try:
        with index.batch():
            index.check_and_add_wide(key, fp, wide)
            raise _Abort
    except _Abort:
        pass
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5,1e6")
    ap.add_argument("--queries", type=int, default=3000)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(7)
    print(
        "| fingerprints | k tier p50 / p99 (us) | with the wide lookup p50 / p99 (us) | ratio of medians "
        "| candidates per lookup (k tier, measured / wide, expected: n x 68 / 65,536) |"
    )
    print("| --- | --- | --- | --- | --- |")
    for size in (int(float(s)) for s in args.sizes.split(",")):
        tmp = Path(tempfile.mkdtemp(prefix="bench-wide-"))
        try:
            index = SimhashIndex.open(tmp / "idx", map_size=1 << 32)
            fps = rng.integers(0, 2**64, size=size, dtype=np.uint64).tolist()
            index.add_many((f"{i:x}", fp) for i, fp in enumerate(fps))
            queries = rng.integers(0, 2**64, size=args.queries, dtype=np.uint64).tolist()
            times: dict[int, list[float]] = {0: [], 12: []}
            cands = 0
            for block in range(0, len(queries), 100):
                for wide in (0, 12) if block % 200 == 0 else (12, 0):
                    before = index.stats["candidates"]
                    for j, fp in enumerate(queries[block : block + 100]):
                        times[wide].append(_time(index, f"q{block + j}", fp, wide))
                    if not wide:
                        cands += index.stats["candidates"] - before
            index.close()
            k50, k99 = np.percentile(times[0], [50, 99]) * 1e6
            w50, w99 = np.percentile(times[12], [50, 99]) * 1e6
            print(
                f"| {size:,} | {k50:.0f} / {k99:.0f} | {w50:.0f} / {w99:.0f} | {w50 / k50:.2f} | "
                f"{cands / len(times[0]):.1f} / {size * (4 + 64) / 65536:.1f} |",
                flush=True,
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
