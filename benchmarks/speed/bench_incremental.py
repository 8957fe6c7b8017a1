"""Benchmark: what incremental crawls cost per page and per request, on LMDB.

Run: ``.venv/bin/python benchmarks/speed/bench_incremental.py [--n 20000] [--ops 2000] [--rounds 5]``

One LMDB index (``durable=False``, the crawler's default) in a temporary directory holds ``--n``
URLs, each fetched twice a day apart with the default ``FreshnessPolicy``. Then, in alternating
chunks of 50 operations per round (so that both sides see the same load on a shared machine):

- ``refetch, no schedule`` vs ``refetch, schedule``: :meth:`ChangeTracker.observe` of an unchanged
  page without a policy (the decision as it was before incremental crawls) and with the policy (the
  rate estimate and the due time written in the same transaction): the cost the schedule adds to
  every fetched page;
- ``plan``: :meth:`ChangeTracker.plan`, what the request gate does for every request (record read,
  due check, priority);
- ``due list``: :meth:`ChangeTracker.due` of all ``--n`` URLs (what ``due_requests`` and the
  ``due`` command do once per crawl), in seconds.

Prints medians over the rounds.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from scrapy_simhash.fingerprint import PageFingerprint

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.schedule import DAY, FreshnessPolicy
from scrapy_simhash.store.index import SimhashIndex

T0 = 1_700_000_000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="URLs in the index")
    parser.add_argument("--ops", type=int, default=2_000, help="operations per kind and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    keys = [f"https://site{i % 97}.example/page/{i}" for i in range(args.n)]
    fps = [rng.getrandbits(64) for _ in keys]
    with tempfile.TemporaryDirectory() as tmp, SimhashIndex.open(Path(tmp) / "pages") as index:
        policy = FreshnessPolicy()
        scheduled = ChangeTracker(index, policy=policy)
        plain = ChangeTracker(index)
        started = time.perf_counter()
        for day in (0, 1):
            with index.batch():
                for key, fp in zip(keys, fps):
                    scheduled.observe(key, PageFingerprint.of(fp), now=T0 + day * DAY + rng.random() * DAY)
        print(f"{args.n} URLs fetched twice in {time.perf_counter() - started:.1f} s")
        now = T0 + 4 * DAY
        rates: dict[str, list[float]] = {"refetch, no schedule": [], "refetch, schedule": [], "plan": []}
        due_secs: list[float] = []
        for _ in range(args.rounds):
            sample = rng.sample(range(args.n), args.ops)
            spent = dict.fromkeys(rates, 0.0)
            for start in range(0, args.ops, 50):
                chunk = sample[start : start + 50]
                for name, call in (
                    ("refetch, no schedule", lambda i: plain.observe(keys[i], PageFingerprint.of(fps[i]), now=now)),
                    ("refetch, schedule", lambda i: scheduled.observe(keys[i], PageFingerprint.of(fps[i]), now=now)),
                    ("plan", lambda i: scheduled.plan(keys[i], now=now)),
                ):
                    t = time.perf_counter()
                    for i in chunk:
                        call(i)
                    spent[name] += time.perf_counter() - t
            for name, values in rates.items():
                values.append(args.ops / spent[name])
            t = time.perf_counter()
            rows = scheduled.due(now=now + 30 * DAY)
            due_secs.append(time.perf_counter() - t)
        for name, values in rates.items():
            print(f"{name:22} {median(values):10,.0f} ops/s")
        ratio = median(rates["refetch, schedule"]) / median(rates["refetch, no schedule"])
        print(f"{'schedule / no schedule':22} {ratio:10.2f}")
        print(f"{'due list':22} {median(due_secs):10.2f} s for {len(rows)} due URLs")


if __name__ == "__main__":
    main()
