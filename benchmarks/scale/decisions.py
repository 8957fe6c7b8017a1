"""Decisions per second and the crawler's memory against the store's size (LMDB): the real pages
of ``../shared/data`` through the real ``ChangeTracker.observe`` (the URLs of ``bytes_per_url.py``:
75% kept pages, 25% near-duplicates of a kept one, each decided against the store's index).

    nice .venv/bin/python benchmarks/scale/decisions.py build PATH --urls 1000000 [--no-sync] [--json OUT]
    nice .venv/bin/python benchmarks/scale/decisions.py decide PATH [--decisions 10000] [--json OUT]

``build`` makes the store at PATH (one process, one decision per URL), printing at every tenth of
``--urls`` the decisions per second (CPU and wall) of the last tenth, the file's size and the
process's mapped file pages (``RssFile`` of ``/proc/self/status``), then the store's bytes per
URL by part (as ``bytes_per_url.py`` prints them). ``decide`` opens the store
built in a fresh process and makes ``--decisions`` more decisions (new URLs, 25% of them
near-duplicates of the new kept ones, whose evidence is read; give each run its own ``--seed``:
a seed run again refetches its URLs), printing their rate and the
process's ``RssFile``, ``VmHWM`` (the peak RSS, what Scrapy's ``MEMUSAGE`` extension reads as
``ru_maxrss``) and page faults before and after. Run ``decide`` on a store of 1e5 and on one of
1e6 to compare the rates at both sizes; each run adds its URLs to the store.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve()
sys.path.insert(0, str(_HERE.parent))
from bytes_per_url import COLD, KEPT_SHARE, base_pages, parts, variant
from scrapy.settings import Settings

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord


def status() -> dict[str, int]:
    """``RssFile``, ``RssAnon`` and ``VmHWM`` of this process (KiB), and its page faults."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("RssFile", "RssAnon", "VmHWM"):
                out[name] = int(value.split()[0])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["minflt"], out["majflt"] = usage.ru_minflt, usage.ru_majflt
    out["utime"], out["stime"] = usage.ru_utime, usage.ru_stime
    return out


def decide(tracker: ChangeTracker, first: int, count: int, seed: int, pages: list[Any], kept: list[Any]) -> dict:
    """Observe URLs ``first`` .. ``first + count - 1``; the verdicts."""
    rng = random.Random(seed)
    verdicts: dict[str, int] = {}
    for i in range(first, first + count):
        if kept and rng.random() >= KEPT_SHARE:  # a near-duplicate of a kept URL: the same text
            fp, page = kept[rng.randrange(len(kept))]
            for bit in rng.sample(range(64), rng.choice((1, 2))):
                fp ^= 1 << bit
            observed = variant(page, fp, None)
        else:
            page = pages[rng.randrange(len(pages))]
            observed = variant(page, rng.getrandbits(64), f"Page {i} of the synthetic crawl")
            kept.append((observed.fp, observed))
        verdict = tracker.observe(_key(i), observed, now=1.7e9 + i, validators=('W/"abc"', None))
        verdicts[verdict.verdict.value] = verdicts.get(verdict.verdict.value, 0) + 1
    return verdicts


def _tracker(path: str, durable: bool = True) -> tuple[SimhashIndex, ChangeTracker]:
    config = load_config(Settings())
    index = SimhashIndex.open(path, map_size=1 << 30, durable=durable)
    return index, ChangeTracker(index, **config.tracker_kwargs())


def _block(index: SimhashIndex, tracker: ChangeTracker, first: int, count: int, seed: int, pages, kept) -> dict:
    before, cpu, wall = status(), time.process_time(), time.perf_counter()
    verdicts = decide(tracker, first, count, seed, pages, kept)
    cpu, wall, after = time.process_time() - cpu, time.perf_counter() - wall, status()
    return {
        "urls": first + count,
        "decisions": count,
        "cpu_per_s": count / cpu,
        "wall_per_s": count / wall,
        "file_mb": os.path.getsize(os.path.join(index.path, "data.mdb")) / 2**20,
        "rss_file_mb": after["RssFile"] / 1024,
        "rss_file_growth_mb": (after["RssFile"] - before["RssFile"]) / 1024,
        "hwm_mb": after["VmHWM"] / 1024,
        "user_us": (after["utime"] - before["utime"]) / count * 1e6,
        "sys_us": (after["stime"] - before["stime"]) / count * 1e6,
        "minflt_per_decision": (after["minflt"] - before["minflt"]) / count,
        "majflt_per_decision": (after["majflt"] - before["majflt"]) / count,
        "verdicts": verdicts,
    }


def _print(row: dict) -> None:
    print(
        f"{row['urls']:>10,} URLs  {row['cpu_per_s']:>6,.0f}/s CPU  {row['wall_per_s']:>6,.0f}/s wall  "
        f"data.mdb {row['file_mb']:>6,.0f} MB  RssFile {row['rss_file_mb']:>6,.0f} MB "
        f"(+{row['rss_file_growth_mb']:,.0f})  VmHWM {row['hwm_mb']:>6,.0f} MB  "
        f"faults/decision {row['minflt_per_decision']:.1f} minor {row['majflt_per_decision']:.2f} major  "
        f"user {row['user_us']:,.0f} us sys {row['sys_us']:,.0f} us per decision",
        flush=True,
    )


def _key(i: int) -> str:
    return f"https://site{i % 97}.example/{i:08d}"


def _templates(index: SimhashIndex, urls: int) -> list[tuple[int | None, PageRecord, float | None, bytes | None]]:
    """What the real decisions stored for URLs ``0 .. urls - 1``: (indexed fingerprint, record,
    due time, evidence) each."""
    out = []
    for i in range(urls):
        key = _key(i)
        raw = index.get_record(key)
        assert raw is not None
        record = PageRecord.from_bytes(raw)
        out.append((index.get(key), record, record.next_due, index.get_evidence(key)))
    return out


def _shifted(record: PageRecord, delta: float, fp: int | None) -> PageRecord:
    """``record`` observed ``delta`` seconds later (its times and its schedule's), its last
    fingerprint ``fp`` (``None``: as it is)."""
    schedule = dict(record.schedule) if record.schedule is not None else None
    if schedule is not None:
        for name in ("last_fetch", "last_change", "next_due"):
            if isinstance(schedule.get(name), float):
                schedule[name] += delta
    history = record.history if fp is None or not record.history else ((fp, record.history[0][1]), *record.history[1:])
    return dataclasses.replace(
        record,
        first_seen=record.first_seen + delta,
        last_fetched=record.last_fetched + delta,
        last_changed=record.last_changed + delta,
        next_due=None if record.next_due is None else record.next_due + delta,
        schedule=schedule,
        history=history,
    )


def copy_urls(index: SimhashIndex, first: int, count: int, templates: list, seed: int) -> None:
    """URLs ``first .. first + count - 1`` written through the store's write path (``add``,
    ``put_record`` with the evidence, in batches of 1,000) as copies of the real decisions'
    ``templates`` (URL ``i`` a copy of URL ``i % len(templates)``, observed as many seconds
    later): the same records, due times and evidence, a new random fingerprint for each indexed
    one (its evidence framed with it)."""
    rng = random.Random(seed)
    for start in range(first, first + count, 1000):
        with index.batch():
            for i in range(start, min(start + 1000, first + count)):
                fp, record, due, evidence = templates[i % len(templates)]
                delta = float(i - i % len(templates))
                new_fp = rng.getrandbits(64) if fp is not None else None
                key = _key(i)
                if new_fp is not None:
                    index.add(key, new_fp)
                    if evidence is not None:
                        evidence = new_fp.to_bytes(16, "big") + evidence[16:]
                index.put_record(
                    key,
                    _shifted(record, delta, new_fp).to_bytes(),
                    due=None if due is None else due + delta,
                    evidence=evidence,
                )


def build(args: argparse.Namespace) -> list[dict]:
    pages = base_pages()
    index, tracker = _tracker(args.path, not args.no_sync)
    real = min(args.real or args.urls, args.urls)
    step = max(real // 10, 1)
    rows: list[dict] = []
    kept: list[Any] = []
    with index:
        rng_seed = 7
        for first in range(0, real, step):
            rows.append(_block(index, tracker, first, min(step, real - first), rng_seed + first, pages, kept))
            _print(rows[-1])
            del kept[: max(len(kept) - 100_000, 0)]  # near-duplicates of the recent kept pages
        if real < args.urls:
            started = time.perf_counter()
            copy_urls(index, real, args.urls - real, _templates(index, real), rng_seed)
            print(f"{args.urls - real:,} copies of the first {real:,} URLs in {time.perf_counter() - started:,.0f} s")
        by_part = parts(index.info(), args.urls)
    for name, value in by_part.items():
        print(f"  {name:28} {value:>8,.0f} B/URL")
    hot = sum(v for k, v in by_part.items() if k not in COLD)
    print(f"  {'hot (all but the cold parts)':28} {hot:>8,.0f} B/URL")
    print(f"  {'hot and the change sketches':28} {hot + by_part.get('change sketches', 0.0):>8,.0f} B/URL")
    rows.append({"parts": by_part})
    return rows


def run_decide(args: argparse.Namespace) -> list[dict]:
    from scrapy_simhash.store import lmdbstore

    if args.baseline:  # as before issue 38 item 5: the evidence read through the map, never trimmed
        lmdbstore._MADVISE = None
    if args.trim_every:
        lmdbstore._TRIM_EVERY = args.trim_every
    pages = base_pages()
    index, tracker = _tracker(args.path)
    with index:
        first = len(index)
        print(f"{args.path}: {first:,} fingerprints indexed; {args.decisions:,} decisions", flush=True)
        # New URLs: each --seed its own (a seed run again refetches its URLs, unchanged).
        row = _block(index, tracker, 10**9 + args.seed * 10**7, args.decisions, args.seed, pages, [])
        row["urls"] = first
        _print(row)
    return [row]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("build", "decide"))
    parser.add_argument("path")
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--decisions", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=11, help="decide: which new URLs (1-99)")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--real", type=int, help="build: the first this many URLs decided, the others copies of them (copy_urls)"
    )
    parser.add_argument(
        "--no-sync",
        action="store_true",
        help="build: commit without fsync (SIMHASH_DURABLE = False; wall rates without the disk's waits)",
    )
    parser.add_argument("--baseline", action="store_true", help="decide: read the evidence through the map, no trim")
    parser.add_argument("--trim-every", type=int, help="decide: trim the map every this many transactions")
    args = parser.parse_args()
    rows = (build if args.what == "build" else run_decide)(args)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
