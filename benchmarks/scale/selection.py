"""Selection of a budgeted incremental run against the number of known URLs: CPU time per known URL,
wall time, added Python heap (tracemalloc) and peak RSS of ``ChangeTracker.selection`` with
``SIMHASH_RECRAWL_BUDGET`` (default 10,000) and the default FreshnessPolicy.

The store is built here through the store's real write path (``SimhashIndex.put_records``) with
synthetic records: a random 64-bit fingerprint each, and schedules of 1-24 fetches made by the
policy itself (``FreshnessPolicy.observe``: 64 such histories, shifted in time per URL), 10% of
them with 5,000 bytes of novelty evidence (stored apart) (the size of a kept page's, issue 38), 3% gone. It then
runs the selection in a fresh process per measure, with this checkout's package or with another
one (``--package /work/main``: the selection before hot states), so one store answers both.

    nice python benchmarks/scale/selection.py build /tmp/sel-2e5 --urls 200000
    nice python benchmarks/scale/selection.py run /tmp/sel-2e5 [--package /work/main]
    nice python benchmarks/scale/selection.py redis --urls 1000000   # a redis-server of its own
    nice python benchmarks/scale/selection.py redis /tmp/sel-redis --urls 1000000 [--package /work/main]
    nice python benchmarks/scale/selection.py redis --urls 1000000 --repeat 3 --compare /work/main

``redis`` with a folder: the store is built once there (a redis-server's dump), then each call
starts a redis-server on it and measures in a fresh process (either checkout on the same store).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

DAY = 86400.0
T0 = 1_700_000_000.0
BATCH = 2000


def build(index, urls: int, budget: int = 10_000, first_only: bool = False, seed: int = 1) -> float:
    """``urls`` records written through ``index.put_records``; returns the selection's ``now``, at
    which about 5% of them are due (a budgeted crawl's steady state: each URL refetched about
    every ``urls / budget`` runs, a run a day). ``first_only``: every URL fetched once (no
    history), as after a first crawl (issue 38's measure: real pages observed once)."""
    from scrapy_simhash.schedule import FreshnessPolicy
    from scrapy_simhash.store.record import PageRecord, schedule_of

    interval = urls / budget * DAY
    policy = FreshnessPolicy().with_default_interval(interval)
    rng = random.Random(seed)
    templates = []
    for _ in range(64):
        state, t = None, 0.0
        for _ in range(1 if first_only else rng.choice((1, 2, 4, 8, 24))):
            changed = None if state is None else rng.random() < 0.3
            state = policy.observe(state, t, changed, rng.choice((2.0, 6.0, 15.0)) if changed else None)
            t += rng.uniform(0.5, 1.5) * interval
        templates.append(state)
    novelty = bytes(rng.getrandbits(8) for _ in range(5000))
    now = T0 + 200 * DAY
    items: list[tuple[str, bytes, float]] = []
    evidence: dict[str, bytes] = {}
    for i in range(urls):
        base = templates[i % len(templates)]
        shift = now - rng.uniform(0, 1.05) * (base.next_due - base.last_fetch) - base.last_fetch
        state = base.evolve(
            last_fetch=base.last_fetch + shift, last_change=base.last_change + shift, next_due=base.next_due + shift
        )
        next_due, schedule = schedule_of(state)
        record = replace(
            PageRecord.first(rng.getrandbits(64), now=state.last_fetch),
            schedule=schedule,
            next_due=next_due,
            gone=i % 33 == 0,
            evidence=i % 10 == 0,
        )
        key = f"https://site{i % 500}.example/page/{i}"
        items.append((key, record.to_bytes(), next_due))
        if record.evidence:
            evidence[key] = novelty
        if len(items) >= BATCH:
            _put(index, items, evidence)
            items, evidence = [], {}
    if items:
        _put(index, items, evidence)
    return now


def _put(index, items: list[tuple[str, bytes, float]], evidence: dict[str, bytes]) -> None:
    """``items`` and their ``evidence`` in one store write (the store's own ``put_records``)."""
    index._call(
        index._store.put_records,
        [index._record_item(*item) for item in items],
        {index._key(key): value for key, value in evidence.items()},
    )


def measure(index, now: float, budget: int, heap: bool = True) -> dict[str, float]:
    """One selection at ``now`` timed (CPU, wall, peak RSS), then another under tracemalloc (its
    peak Python heap); with a digest of the selected keys in order (the same before and after)."""
    from scrapy_simhash.decision.tracker import ChangeTracker
    from scrapy_simhash.schedule import FreshnessPolicy

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracker = ChangeTracker(index, policy=FreshnessPolicy(), clock=lambda: now)
    wall, cpu = time.perf_counter(), time.process_time()
    rows = tracker.selection(now, budget, DAY)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak = float("nan")
    if heap:
        tracemalloc.start()
        again = ChangeTracker(index, policy=FreshnessPolicy(), clock=lambda: now).selection(now, budget, DAY)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert again == rows
    digest = hashlib.sha256("\n".join(f"{r.key} {r.priority!r}" for r in rows).encode()).hexdigest()[:16]
    due = sum(r.due <= now for r in rows)
    return {
        "rows": len(rows),
        "rows_due": due,
        "cpu_s": round(cpu, 2),
        "wall_s": round(wall, 2),
        "heap_mb": round(peak / 1e6, 1),
        "rss_before_mb": round(rss_before),
        "peak_rss_mb": round(rss),
        "digest": digest,
    }


def _run_child(args: argparse.Namespace) -> None:
    from scrapy_simhash import SimhashIndex

    meta = json.loads(Path(args.path + ".json").read_text())
    if args.redis_url:
        from scrapy_simhash.store.redisstore import RedisStore

        index = SimhashIndex(RedisStore(args.redis_url, prefix="sel"))
    else:
        index = SimhashIndex.open(args.path, readonly=False)
    out = measure(index, meta["now"] + args.later * DAY, args.budget, not args.no_heap)
    out["urls"] = meta["urls"]
    out["cpu_us_per_url"] = round(out["cpu_s"] / meta["urls"] * 1e6, 2)
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("build", "run", "child", "redis"))
    parser.add_argument("path", nargs="?")
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--budget", type=int, default=10_000)
    parser.add_argument("--first-only", action="store_true", help="build: every URL fetched once (no history)")
    parser.add_argument("--no-heap", action="store_true", help="skip the second selection, under tracemalloc")
    parser.add_argument("--later", type=float, default=0.0, help="select this many days later (0: ~5%% due)")
    parser.add_argument("--package", help="run the selection with the package of this checkout")
    parser.add_argument("--repeat", type=int, default=1, help="redis: measure this many times")
    parser.add_argument("--compare", help="redis: after each measure, one with the package of this checkout")
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)  # child: the store of a redis-server
    args = parser.parse_args()
    if args.what in ("build", "redis"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's package
    if args.what == "build":
        from scrapy_simhash import SimhashIndex

        index = SimhashIndex.open(args.path, durable=False, map_size=64 << 30)
        t = time.perf_counter()
        now = build(index, args.urls, args.budget, args.first_only)
        index.close()
        Path(args.path + ".json").write_text(json.dumps({"now": now, "urls": args.urls}))
        print(f"built {args.urls} URLs in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    elif args.what == "child":
        _run_child(args)
    elif args.what == "run":
        print(_child(args, args.path))
    else:
        _redis(args)


def _child(args: argparse.Namespace, path: str, redis_url: str | None = None) -> str:
    """The line that :func:`_run_child` prints, run in a fresh process with ``args.package``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = args.package or str(Path(__file__).resolve().parents[2])
    cmd = [sys.executable, __file__, "child", path, "--budget", str(args.budget), "--later", str(args.later)]
    cmd += ["--no-heap"] if args.no_heap else []
    cmd += ["--redis-url", redis_url] if redis_url else []
    return subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


def _redis(args: argparse.Namespace) -> None:
    import tempfile

    import redis

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    from helpers.redis_servers import RedisServer, redis_server_binary

    from scrapy_simhash import SimhashIndex
    from scrapy_simhash.store.redisstore import RedisStore

    binary = redis_server_binary()
    if binary is None:
        sys.exit("no redis-server on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.path or tmp)
        built = (folder / "dump.rdb").exists()
        server = RedisServer(binary, folder).start()  # loads the dump of an earlier build
        try:
            if not built:
                index = SimhashIndex(RedisStore(server.url, prefix="sel"))
                t = time.perf_counter()
                now = build(index, args.urls, args.budget, args.first_only)
                print(f"built {args.urls} URLs in {time.perf_counter() - t:.0f} s", file=sys.stderr)
                Path(str(folder) + ".json").write_text(json.dumps({"now": now, "urls": args.urls}))
                if args.path:
                    redis.Redis.from_url(server.url, socket_timeout=3600).save()  # a dump, for the next call
            for _ in range(args.repeat):
                print(_child(args, str(folder), server.url), flush=True)
                if args.compare:  # the other checkout on the same server, alternating
                    print(
                        _child(argparse.Namespace(**{**vars(args), "package": args.compare}), str(folder), server.url)
                    )
        finally:
            server.stop()
            if not args.path:
                Path(str(folder) + ".json").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
