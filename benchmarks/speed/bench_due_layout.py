"""Benchmark: what the LMDB store's due-time index costs a record write, by layout (raw py-lmdb).

Run: ``.venv/bin/python benchmarks/speed/bench_due_layout.py [--n 1e6] [--ops 3000] [--rounds 5]``

A refetch rewrites one URL's record and moves its due time later. Five layouts, each in its own
LMDB environment holding the same ``--n`` records (500 bytes, URL keys), written in one
transaction per record (``sync=False``, as the crawler), on the same randomly chosen keys, in
alternating chunks of 50:

- ``dues``: the store until 96324b6: ``records`` (key -> record), ``dues`` (key -> due) and
  ``due_index`` (due + key -> ""): the old due read and replaced in ``dues``, moved in ``due_index``;
- ``prefix``: no ``dues``: the due time is the first 8 bytes of the record's value (read back by
  the same ``replace`` that writes the record), moved in ``due_index``;
- ``lb-dues``: the index entry a lower bound (a due time moved later keeps it), ``dues`` holding
  the indexed and the actual due time, rewritten;
- ``lower-bound``: the store now: the index entry a lower bound, the indexed and the actual due
  time the first 16 bytes of the record's value (read, then the record written: one table);
- ``none``: records only (no due-time index: a crawl without a recrawl schedule).

Prints the median microseconds per write over the rounds.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path
from statistics import median

import lmdb

LAYOUTS = ("dues", "prefix", "lb-dues", "lower-bound", "none")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=lambda s: int(float(s)), default=1_000_000)
    parser.add_argument("--ops", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-due-layout-"))
    value = random.Random(0).randbytes(500)
    keys = [f"https://example.com/page/{i}".encode() for i in range(args.n)]
    base = 1_700_000_000_000  # due times in milliseconds
    envs = {}
    for layout in LAYOUTS:
        env = lmdb.open(str(tmp / layout), map_size=1 << 34, max_dbs=4, sync=False, metasync=False)
        dbs = [env.open_db(name) for name in (b"records", b"dues", b"due_index")]
        records, dues, index = dbs
        with env.begin(write=True) as txn:
            for i, key in enumerate(keys):
                due = (base + i).to_bytes(8, "big")
                head = {"prefix": due, "lower-bound": due + due}.get(layout, b"")
                txn.put(key, head + value, db=records)
                if layout == "dues":
                    txn.put(key, due, db=dues)
                elif layout == "lb-dues":
                    txn.put(key, due + due, db=dues)
                if layout != "none":
                    txn.put(due + key, b"", db=index)
        envs[layout] = (env, dbs)

    def write(layout: str, key: bytes, due: bytes) -> None:
        env, (records, dues, index) = envs[layout]
        with env.begin(write=True) as txn:
            if layout == "dues":
                txn.replace(key, value, db=records)
                old = txn.replace(key, due, db=dues)
            elif layout == "prefix":
                old = txn.replace(key, due + value, db=records)[:8]
            elif layout == "lb-dues":
                indexed = txn.get(key, db=dues)[:8]
                txn.put(key, value, db=records)
                txn.put(key, indexed + due, db=dues)
                return
            elif layout == "lower-bound":
                indexed = txn.get(key, db=records)[:8]
                txn.put(key, indexed + due + value, db=records)
                return
            else:
                txn.replace(key, value, db=records)
                return
            txn.delete(old + key, db=index)
            txn.put(due + key, b"", db=index)

    rng = random.Random(1)
    labels = list(envs)
    us: dict[str, list[float]] = {label: [] for label in labels}
    for r in range(args.rounds):
        picks = rng.sample(range(args.n), args.ops)
        due = (base + (r + 1) * 86_400_000).to_bytes(8, "big")
        secs = dict.fromkeys(labels, 0.0)
        for c in range(0, args.ops, 50):
            shift = (c // 50) % len(labels)
            for label in labels[shift:] + labels[:shift]:
                t = time.perf_counter()
                for i in picks[c : c + 50]:
                    write(label, keys[i], due)
                secs[label] += time.perf_counter() - t
        for label in labels:
            us[label].append(secs[label] / args.ops * 1e6)
    print(f"record write + due time, raw py-lmdb, {args.n:,} records, {args.rounds} rounds x {args.ops:,} (median us)")
    for label in labels:
        print(f"{label:<8} {median(us[label]):8.1f} us")
    for env, _ in envs.values():
        env.close()
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
