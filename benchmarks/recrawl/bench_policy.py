"""Benchmark: what a crawl pays the recrawl policy per call, before (``--base``'s policy) and now.

    .venv/bin/python benchmarks/recrawl/bench_policy.py [--base af0a727] [--states 200] [--rounds 15]

A crawl calls ``observe`` on every fetched page and ``priority`` on every request to a known URL
(the gate of incremental crawls). Both policies (``FreshnessPolicy`` with its defaults; the base
commit's ``scrapy_simhash/schedule.py`` is loaded from git as a module of its own) run in this
process on the same states: ``--states`` URLs with seeded Poisson histories of 0 to 40 fetches (a
new URL's first fetch included), each call timed over all of them, in rounds where before and now
take turns going first, so that both see the same load. Prints the median microseconds per call over ``--rounds`` and the ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scrapy_simhash import schedule as now_schedule

DAY = now_schedule.DAY


def load_base(base: str, into: Path) -> Any:
    """``scrapy_simhash/schedule.py`` of commit ``base`` as a module (it imports only numpy)."""
    path = into / f"schedule_{base}.py"
    path.write_text(
        subprocess.run(
            ["git", "-C", str(REPO), "show", f"{base}:scrapy_simhash/schedule.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    spec = importlib.util.spec_from_file_location(f"schedule_{base}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def histories(module: Any, policy: Any, n: int, seed: int) -> list[Any]:
    """``n`` states of ``module``: URLs with rates log-uniform over 4 decades, fetched at irregular
    intervals, 0 to 40 fetches each (the same for every module, by ``seed``)."""
    rng = random.Random(seed)
    states = []
    for _ in range(n):
        rate = 10 ** rng.uniform(-2.5, 1.5) / DAY
        state = policy.observe(None, 0.0, None)
        for _ in range(rng.randint(0, 40)):
            now = state.last_fetch + rng.uniform(0.1, 3.0) * DAY
            changed = rng.random() < 1 - pow(2.718281828459045, -rate * (now - state.last_fetch))
            state = policy.observe(state, now, changed, rng.randint(4, 30) if changed else None)
        states.append(module.ScheduleState.from_dict(state.to_dict()))
    return states


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="af0a727")
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        before = load_base(args.base, Path(tmp))
        sides = {}
        for label, module in (("before", before), ("now", now_schedule)):
            policy = module.FreshnessPolicy()
            sides[label] = (policy, histories(module, policy, args.states, args.seed))
        times: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.rounds):
            for label in sorted(sides, reverse=round_ % 2 == 1):  # alternate which goes first
                policy, states = sides[label]
                rng = random.Random(args.seed)
                calls = [(s, s.last_fetch + rng.uniform(0.1, 3.0) * DAY, rng.random() < 0.4) for s in states]
                started = time.perf_counter()
                for state, when, changed in calls:
                    policy.observe(state, when, changed, 12 if changed else None)
                times.setdefault(("observe", label), []).append((time.perf_counter() - started) / len(calls))
                started = time.perf_counter()
                for state, when, _ in calls:
                    policy.priority(state, when)
                times.setdefault(("priority", label), []).append((time.perf_counter() - started) / len(calls))
    print(f"FreshnessPolicy per call, {args.states} URLs x {args.rounds} rounds (median us), before = {args.base}")
    print(f"{'call':10s} {'before':>8s} {'now':>8s} {'now/before':>11s}")
    for call in ("observe", "priority"):
        b, n = (median(times[call, label]) * 1e6 for label in ("before", "now"))
        print(f"{call:10s} {b:8.1f} {n:8.1f} {n / b:11.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
