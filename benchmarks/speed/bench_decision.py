"""Benchmark: the per-page decision (record read, check-and-add, record write) on LMDB, before and after.

Run: ``.venv/bin/python benchmarks/speed/bench_decision.py [--n 1e6] [--ops 4000] [--rounds 5] [--base b237202] [--also 35b6c23] [--clock cpu]``

"Before" is the code path of commit ``--base`` (b237202: the middleware's ``_verdict`` over the
row-level store), loaded from git into a temporary package next to ours; "after" is
:meth:`scrapy_simhash.decision.tracker.ChangeTracker.observe` over the coarse store, without a recrawl policy
(the decision alone), with ``FixedIntervalPolicy`` (``+fixed``: the schedule's bookkeeping, a state
read and written with the record and a due time kept in the due-time index, without a rate
estimate) and with the default ``FreshnessPolicy`` (``+schedule``: what a crawl runs). All run in
this process, each on its own LMDB index in one temporary directory holding the same ``--n``
random fingerprints, ``durable=False`` (the crawler's default), with the same operations, in
alternating chunks of 50 (so that all see the same load on a shared machine):

- ``new``: a URL fetched for the first time (random fingerprint: no record, check-and-add adds it);
- ``duplicate``: a new URL whose page is a near-duplicate of an indexed one (1-3 bits flipped);
- ``refetch``: a URL of the ``new`` rounds fetched again a day later, unchanged.

Prints the median ops/s over the rounds and the ratios to before, and the time of the
``FreshnessPolicy``'s own step (``observe`` + the record's schedule numbers) for a refetch, timed
apart. Each page's change sketch is made before the clock runs, and a new page gets the wide
tier's lookup as in a crawl (``--wide 0``: the k tier alone, the decision of b237202). With
``--also COMMIT``, that commit's ``ChangeTracker`` with its ``FreshnessPolicy`` runs too, given the
sketch and the wide distance as ours (the same decision, another version of the code; a commit with
the wide tier, c2731b3 or later): ``+schedule`` against it. ``--clock cpu`` times each chunk
by this thread's CPU time (user and system) instead of the wall clock: on a shared machine the
other processes' share of the cores then does not count.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import io
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np

from scrapy_simhash.fingerprint import PageFingerprint

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.fingerprint.sketch import SKETCH_BYTES
from scrapy_simhash.schedule import DAY, FixedIntervalPolicy, FreshnessPolicy, ScheduleState
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord, schedule_of

_OLD = "simhash_before"


def load_commit(commit: str, into: Path, name: str) -> None:
    """Make ``scrapy_simhash`` of ``commit`` importable as package ``name`` from ``into``
    (extracted there from git first unless it is there)."""
    pkg = into / name
    if not (pkg / "index.py").exists():
        into.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", commit, "scrapy_simhash"],
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            # Our own repository's archive; the "data" filter where this Python has it.
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(into / f"{name}.tmp", **safe)  # type: ignore[arg-type]
        (into / f"{name}.tmp" / "scrapy_simhash").rename(pkg)
        (into / f"{name}.tmp").rmdir()
        for path in pkg.rglob("*.py"):
            path.write_text(re.sub(r"\bscrapy_simhash\b", name, path.read_text()))
    if str(into) not in sys.path:
        sys.path.insert(0, str(into))


def load_before(base: str, into: Path) -> Any:
    """Import ``scrapy_simhash`` of commit ``base`` as ``simhash_before``: its index and recrawl modules."""
    load_commit(base, into, _OLD)
    return importlib.import_module(f"{_OLD}.index"), importlib.import_module(f"{_OLD}.recrawl")


def before_verdict(index: Any, recrawl: Any, key: str, fp: int, threshold: int = 3, history: int = 8) -> str:
    """b237202's SimhashSpiderMiddleware._verdict, its store calls and record handling unchanged."""
    with index.batch():
        record = recrawl.PageRecord.parse(index.get_record(key))
        if record is None or record.last_fp is None:
            match = index.check_and_add(key, fp)
            new_record = recrawl.PageRecord.first(fp, duplicate_of=match.key if match is not None else None)
            verdict = "new" if match is None else "near_duplicate"
        else:
            change = (fp ^ record.last_fp).bit_count()
            if change <= threshold:
                duplicate_of = record.duplicate_of
                if duplicate_of is None and index.get(key) != fp:
                    index.add(key, fp)
                verdict = "unchanged"
            else:
                match = index.check_and_add(key, fp)
                duplicate_of = None if match is None else match.key
                if match is not None:
                    index.remove(key)
                verdict = "changed" if match is None else "near_duplicate"
            new_record = record.updated(fp, change, change > threshold, history_size=history, duplicate_of=duplicate_of)
        index.put_record(key, new_record.to_bytes())
    return verdict


def _flip(rng: np.random.Generator, fp: int, d: int) -> int:
    for b in rng.choice(64, size=d, replace=False).tolist():
        fp ^= 1 << b
    return fp


def _policy_cost(tracker: ChangeTracker, index: Any, keys: list[str], now: float, clock: Any) -> float:
    """Median us of the policy's own step for a refetch of ``keys`` (their stored schedules):
    ``observe`` and the schedule's numbers for the record (``schedule_of``: ``to_dict``'s)."""
    policy = tracker.policy
    assert policy is not None
    records = [PageRecord.parse(raw) for raw in index.get_records(keys)]
    states = [ScheduleState.from_dict(dict(r.schedule)) for r in records if r is not None and r.schedule]
    times = []
    for _ in range(5):
        t = clock()
        for state in states:
            schedule_of(policy.observe(state, now, False, 0))
        times.append((clock() - t) / max(len(states), 1) * 1e6)
    return median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=lambda s: int(float(s)), default=1_000_000)
    parser.add_argument("--ops", type=int, default=4000, help="operations per round and workload")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base", default="b237202")
    parser.add_argument("--before-src", default=None, help="where the --base code is (or goes); default: a temp dir")
    parser.add_argument(
        "--also", default=None, help="also run this commit's ChangeTracker with its FreshnessPolicy (e.g. 35b6c23)"
    )
    parser.add_argument(
        "--no-sketch",
        action="store_true",
        help="observe without a change sketch (format 2 records; a crawl passes one: format 3, +128 B)",
    )
    parser.add_argument(
        "--wide",
        type=int,
        default=None,
        help="the trackers' wide_distance (default: SIMHASH_WIDE_DISTANCE, as a crawl; 0: the k tier alone)",
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time the operations by the wall clock or by this thread's CPU time (user + system: LMDB's "
        "writes are system time; a shared machine's other processes do not count)",
    )
    args = parser.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter

    tmp = Path(tempfile.mkdtemp(prefix="bench-decision-"))
    src = Path(args.before_src) if args.before_src else tmp / "src"
    old_index, old_recrawl = load_before(args.base, src)
    fps = np.random.default_rng(1).integers(0, 2**64, size=args.n, dtype=np.uint64)
    keys = [f"https://example.com/page/{i}" for i in range(args.n)]
    labels: tuple[str, ...] = ("before", "after", "after+fixed", "after+schedule")
    also = f"{args.also}+schedule"
    if args.also:
        package = "simhash_" + re.sub(r"\W", "_", args.also)
        load_commit(args.also, src, package)
        also_index, also_recrawl, also_schedule = (
            importlib.import_module(f"{package}.{module}") for module in ("index", "recrawl", "schedule")
        )
        labels += (also,)
    indexes: dict[str, Any] = {}
    for label in labels:
        t = time.perf_counter()
        if label == "before":
            indexes[label] = old_index.SimhashIndex.open(tmp / "before", durable=False)
        elif label == also:
            indexes[label] = also_index.SimhashIndex.open(tmp / "also", durable=False)
        else:
            indexes[label] = SimhashIndex.open(tmp / label, durable=False)
        indexes[label].add_many(zip(keys, fps.tolist()))
        print(f"LMDB index of {args.n:,} fingerprints, {label}: bulk load {time.perf_counter() - t:.1f} s")
    wide = {} if args.wide is None else {"wide_distance": args.wide}
    plain = ChangeTracker(indexes["after"], **wide)
    fixed = ChangeTracker(indexes["after+fixed"], policy=FixedIntervalPolicy(), **wide)
    scheduled = ChangeTracker(indexes["after+schedule"], policy=FreshnessPolicy(), **wide)

    # What a crawl passes: each page's change sketch (here one per key, the same at a refetch) and
    # the page it is part of, made before the clock runs (the fingerprinter's work, not the decision's).
    sketches: dict[str, bytes | None] = {}
    sketch = sketches.__getitem__
    pages: dict[tuple[str, int], PageFingerprint] = {}
    page = pages.__getitem__


    runs = {
        "before": lambda key, fp, now: before_verdict(indexes["before"], old_recrawl, key, fp),
        "after": lambda key, fp, now: plain.observe(key, page((key, fp)), now).verdict,
        "after+fixed": lambda key, fp, now: fixed.observe(key, page((key, fp)), now).verdict,
        "after+schedule": lambda key, fp, now: scheduled.observe(key, page((key, fp)), now).verdict,
    }
    if args.also:
        other = also_recrawl.ChangeTracker(indexes[also], policy=also_schedule.FreshnessPolicy(), **wide)
        runs[also] = lambda key, fp, now: other.observe(key, fp, now, sketch=sketch(key)).verdict  # its keyword form

    rng = np.random.default_rng(2)
    rates: dict[tuple[str, str], list[float]] = {}
    expected = {"new": "new", "duplicate": "near_duplicate", "refetch": "unchanged"}
    t0 = time.time()
    gc.disable()
    for r in range(args.rounds):
        new = [
            (f"https://example.org/new/{r}/{i}", int(v))
            for i, v in enumerate(rng.integers(0, 2**64, args.ops, dtype=np.uint64))
        ]
        picks = rng.integers(0, args.n, args.ops).tolist()
        dups = [
            (f"https://mirror.example.net/{r}/{i}", _flip(rng, int(fps[p]), 1 + i % 3)) for i, p in enumerate(picks)
        ]
        now = t0 + 2 * r * DAY
        for key, fp in new + dups:
            sketches[key] = None if args.no_sketch else hashlib.shake_128(key.encode()).digest(SKETCH_BYTES)
            pages[key, fp] = PageFingerprint.of(fp, sketch=sketches[key])
        workloads = {"new": (new, now), "duplicate": (dups, now), "refetch": (new, now + DAY)}
        for name, (ops, when) in workloads.items():
            # Chunks of 50 operations, the three in turn, rotating: all see the same machine load.
            secs = dict.fromkeys(labels, 0.0)
            verdicts: dict[str, list[str]] = {label: [] for label in labels}
            for c in range(0, len(ops), 50):
                chunk = ops[c : c + 50]
                shift = (c // 50) % len(labels)
                for label in labels[shift:] + labels[:shift]:
                    fn = runs[label]
                    t = clock()
                    verdicts[label].extend(fn(key, fp, when) for key, fp in chunk)
                    secs[label] += clock() - t
            for label in labels:
                assert verdicts[label].count(expected[name]) >= 0.99 * len(ops), (label, name, verdicts[label][:5])
                rates.setdefault((name, label), []).append(len(ops) / secs[label])
    policy_us = _policy_cost(scheduled, indexes["after+schedule"], [key for key, _ in new], now + 2 * DAY, clock)
    gc.enable()
    per = "ops per CPU second" if args.clock == "cpu" else "ops/s"
    print(
        f"per-page decision, LMDB, durable=False, {args.n:,} keys, {args.rounds} rounds x {args.ops:,} ops (median {per})"
    )
    print(
        f"{'workload':<10} {'before':>10} {'after':>10} {'+fixed':>10} {'+schedule':>10} {'after/before':>13} "
        f"{'+fixed/before':>14} {'+schedule/before':>17}"
    )
    for name in ("new", "duplicate", "refetch"):
        b, a, f, s = (median(rates[(name, label)]) for label in labels[:4])
        print(f"{name:<10} {b:10,.0f} {a:10,.0f} {f:10,.0f} {s:10,.0f} {a / b:13.2f} {f / b:14.2f} {s / b:17.2f}")
    if args.also:
        for name in ("new", "duplicate", "refetch"):
            s, o = median(rates[(name, "after+schedule")]), median(rates[(name, also)])
            print(f"{name:<10} {also}: {o:,.0f} ops/s; +schedule / {also}: {s / o:.2f}")
    refetch_us = 1e6 / median(rates[("refetch", "after+schedule")])
    print(
        f"of which the recrawl policy (FreshnessPolicy.observe + schedule numbers, refetch, timed apart): {policy_us:.1f} us "
        f"of {refetch_us:.1f} us per refetch; before's whole refetch: {1e6 / median(rates[('refetch', 'before')]):.1f} us"
    )
    for index in indexes.values():
        index.close()
    import shutil

    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
