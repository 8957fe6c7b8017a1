"""Recrawl policies at a fixed fetch budget, simulated: freshness, change-weighted staleness, waste.

    nice -n 10 .venv/bin/python benchmarks/recrawl/simulate.py --jobs 2   # 10,000 URLs, 90 days, in 2 processes
    .venv/bin/python benchmarks/recrawl/simulate.py --urls 2000 --budgets 0.1 --json /tmp/r.json --markdown /tmp/r.md
    .venv/bin/python benchmarks/recrawl/simulate.py --world mixed --policies "fixed interval" ours oracle

The world (``--world poisson``, seeded): each URL's real changes are a Poisson process, rates log-
uniform over four orders of magnitude (one change per ~316 days to ~32 per day); a share of URLs
also has noise-only edits that change the raw bytes but not the content (a counter: every fetch; a
date: once a day); each URL has its own typical change size (change distance in bits, log-uniform
4..32), each change is drawn around it. ``--world mixed`` (:class:`MixedWorld`): Poisson, periodic,
bursty and static pages, URLs born and removed during the run, the same noise. Everything that
exists at day 0 is fetched then (not counted), then the crawler runs in steps of one hour, each step
a run of the crawl: it fetches the crawl's own selection (``plan_run`` over the policy's priorities,
change sizes made unit-free by ``size_scale``: what ``ChangeTracker.selection`` runs over the
store's records) with that run's share of the budget as its page budget, ``floor(budget * known URLs
* days so far)`` minus what was fetched before (a URL is known from its birth, removed or not); so
all policies spend the same budget. A URL born later is fetched when it appears (a new URL: outside
the budget); a removed URL is a 404 when next fetched (a fetch spent), and is not selected again.

Every policy is the real one from ``scrapy_simhash.schedule`` (its ``observe`` on every fetch, its
vectorised ``priorities`` at every step):

* fixed interval: every URL every ``1 / budget`` days (``FixedIntervalPolicy``);
* Nutch + MD5: ``NutchAdaptivePolicy`` told "changed" when the raw bytes changed (real change or noise);
* Nutch + verdicts: the same, told our change verdict (real changes only);
* ours: ``FreshnessPolicy`` with its defaults (values averaged over each URL's tempered posterior rate from
  its verdicts, probes, change sizes as weights, ``size_exponent`` 0.5); "ours, no sizes": the same
  with ``size_exponent`` 0; "ours, point rates": ours valued at the posterior geometric mean rate
  alone (``uncertainty=False``, the policy before values were averaged over the posterior);
* oracle: ``FreshnessPolicy``'s priority with the true rates as point rates (``uncertainty=False``)
  and no weights (the optimum for freshness); "oracle, sizes" also knows the true change sizes (the
  optimum for change-weighted staleness).
* told at 1st refetch: a bound on what learning the rates can reach: the oracle, but a URL's true
  rate is known only from its first refetch on; until then it is valued as ours values a new URL
  (the prior's rate): about the ceiling for a policy that learns each rate from its own fetches.

* ours, 1-day interval: ours with ``default_interval`` one day whatever the budget (the default of
  `SIMHASH_RECRAWL_INTERVAL`); "ours, interval from the budget": the same, but at every step the
  default interval follows from the budget as in the crawl (``budget_interval`` of the known URLs,
  the step's page budget and the time between steps).

The simulation assumes the verdicts are right (a real change is "changed", noise is "unchanged");
how often they are is measured by benchmarks/quality. Metrics, over the 90 days after day 0 and
over days 30-90 alone (after the first passes and probes): freshness = share of URL-time (while the
URL exists) the stored copy is current; change-weighted staleness = share of URL-time stale, each
URL weighted by its true typical change size; unchanged fetches = share of fetches that found no
real change (or a removed URL); spent = fetches / what the budget allowed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from scrapy_simhash.schedule import (
    DAY,
    HOUR,
    FixedIntervalPolicy,
    FreshnessPolicy,
    NutchAdaptivePolicy,
    ScheduleColumns,
    SchedulePolicy,
    budget_interval,
    plan_run,
    run_priorities,
    size_scale,
)

HERE = Path(__file__).resolve().parent
POLICIES = (
    "fixed interval",
    "Nutch + MD5",
    "Nutch + verdicts",
    "ours",
    "ours, no sizes",
    "ours, point rates",
    "oracle",
    "oracle, sizes",
    "told at 1st refetch",
    "ours, 1-day interval",
    "ours, interval from the budget",
)
#: The second world's page kinds and their shares.
KINDS = {"poisson": 0.4, "periodic": 0.25, "bursty": 0.25, "static": 0.1}
WINDOW = (30.0, 90.0)  # days reported on their own: after the first passes and probes


class World:
    """The pages: true change rates (per day), change times, noise, change sizes; every URL exists
    from day 0 to the end (``born`` 0, ``died`` after the end)."""

    name = "poisson"

    def __init__(self, urls: int, days: float, seed: int, noise_share: float = 0.3) -> None:
        rng = np.random.default_rng(seed)
        self.urls, self.days = urls, days
        self.rate = 10 ** rng.uniform(-2.5, 1.5, urls)  # changes per day
        self.size = np.exp(rng.uniform(np.log(4), np.log(32), urls))  # typical change distance (bits)
        noise = rng.random(urls) < noise_share
        self.counter = noise & (rng.random(urls) < 0.5)  # raw bytes differ at every fetch
        self.date = noise & ~self.counter  # raw bytes differ once a day, at its own hour
        self.date_phase = rng.random(urls)
        self.born = np.zeros(urls)
        self.died = np.full(urls, days + 1.0)
        self.seed = seed
        self.rng = rng
        owner, times = self._changes(rng)
        # one sorted key per change: url * span + time, so one searchsorted finds a URL's next change
        self.span = days + 1.0
        self.keys = np.sort(owner * self.span + times)

    def _changes(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Every real change: its URL and its time (days)."""
        counts = rng.poisson(self.rate * self.days)
        return np.repeat(np.arange(self.urls), counts), rng.random(counts.sum()) * self.days

    def first_change_after(self, idx: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Time of each URL's first real change after ``t`` (inf if none before the end)."""
        base = idx * self.span
        pos = np.searchsorted(self.keys, base + t, side="right")
        nxt = np.append(self.keys, np.inf)[pos]
        return np.where(nxt < base + self.span, nxt - base, np.inf)

    def raw_changed(self, idx: np.ndarray, t0: np.ndarray, t1: float, real: np.ndarray) -> np.ndarray:
        """Whether the raw bytes (an MD5 signature) differ between fetches at ``t0`` and ``t1``."""
        phase = self.date_phase[idx]
        date_edit = np.floor(t1 - phase) > np.floor(t0 - phase)
        return real | self.counter[idx] | (self.date[idx] & date_edit)


class MixedWorld(World):
    """The second world: Poisson pages as in :class:`World`, periodic pages (one change every
    period from an hour to a month, jittered by 10% of it), bursty pages (quiet spells of ~20
    days at one change per ~100 days, then ~3 days at 2-20 changes a day) and static pages; 20% of
    the URLs are born during the run (found and fetched at once, outside the budget) and 15%
    are removed (404 from then on); noise edits as in :class:`World`. ``rate`` (the oracle's) is
    each URL's number of changes over its lifetime divided by its length."""

    name = "mixed"

    def _changes(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        n, days = self.urls, self.days
        kind = rng.choice(list(KINDS), size=n, p=list(KINDS.values()))
        self.kind = kind
        born = rng.random(n) < 0.2
        self.born = np.where(born, rng.uniform(0, days, n), 0.0)
        removed = rng.random(n) < 0.15
        self.died = np.where(removed, self.born + rng.uniform(0, days, n) * (days - self.born) / days, days + 1.0)
        owners, times = [], []
        for i in range(n):
            start, end = self.born[i], min(self.died[i], days)
            if kind[i] == "poisson":
                t = rng.uniform(start, end, rng.poisson(self.rate[i] * (end - start)))
            elif kind[i] == "periodic":
                period = float(np.exp(rng.uniform(np.log(1 / 24), np.log(30))))
                ticks = np.arange(start + rng.uniform(0, period), end, period)
                t = ticks + rng.normal(0, 0.1 * period, len(ticks))
            elif kind[i] == "bursty":
                t = self._bursts(rng, start, end)
            else:
                t = np.zeros(0)
            t = t[(t > start) & (t < end)]
            owners.append(np.full(len(t), i))
            times.append(t)
            self.rate[i] = len(t) / max(end - start, 1e-9) if len(t) else 1e-4
        return np.concatenate(owners), np.concatenate(times)

    @staticmethod
    def _bursts(rng: np.random.Generator, start: float, end: float) -> np.ndarray:
        out, t, quiet = [], start, bool(rng.random() < 0.8)
        fast = float(rng.uniform(2, 20))
        while t < end:
            length = rng.exponential(20.0 if quiet else 3.0)
            rate = 0.01 if quiet else fast
            out.append(rng.uniform(t, min(t + length, end), rng.poisson(rate * (min(t + length, end) - t))))
            t, quiet = t + length, not quiet
        return np.concatenate(out) if out else np.zeros(0)


WORLDS = {"poisson": World, "mixed": MixedWorld}


def make_policy(name: str, budget: float) -> SchedulePolicy:
    interval = DAY if name in ("ours, 1-day interval", "ours, interval from the budget") else DAY / budget
    common = {"default_interval": interval, "min_interval": HOUR, "max_interval": 90 * DAY}
    if name == "fixed interval":
        return FixedIntervalPolicy(**common)
    if name.startswith("Nutch"):
        return NutchAdaptivePolicy(**common)
    if name in ("oracle", "told at 1st refetch"):
        return FreshnessPolicy(uncertainty=False, **common)  # the true rates: nothing uncertain
    if name == "oracle, sizes":
        return FreshnessPolicy(size_exponent=1.0, uncertainty=False, **common)  # weights proportional to change size
    if name == "ours, no sizes":
        return FreshnessPolicy(size_exponent=0.0, **common)
    if name == "ours, point rates":
        return FreshnessPolicy(uncertainty=False, **common)  # the value at the posterior geometric mean alone
    return FreshnessPolicy(**common)


def _overlap(a: np.ndarray, b: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Length of each interval ``[a, b]`` inside ``[lo, hi]``."""
    return np.clip(np.minimum(b, hi) - np.maximum(a, lo), 0.0, None)


def run(world: World, name: str, budget: float, step_hours: float = 1.0) -> dict[str, float]:
    """One policy on ``world`` at ``budget`` (fetches per known URL per day). Each step is a run of
    the crawl: it fetches :func:`plan_run`'s selection (the crawl's own, by the sizes made
    unit-free by :func:`size_scale`) with that run's share of the budget as its page budget,
    among the URLs known and not seen gone."""
    n, days = world.urls, world.days
    policy = make_policy(name, budget)
    base = policy
    derive = name == "ours, interval from the budget"
    told = name == "told at 1st refetch"
    oracle = name.startswith("oracle") or told
    states = [policy.observe(None, 0.0, None)] * n
    columns = ScheduleColumns.of(states)
    if oracle and not told:
        columns.rate[:] = world.rate / DAY
    columns.size[:] = world.size if name == "oracle, sizes" else 0.0  # 0: reference weight 1
    rng = np.random.default_rng([world.seed, int(budget * 1000), POLICIES.index(name)])
    known = world.born <= 0.0  # fetched at day 0
    gone = np.zeros(n, dtype=bool)  # fetched after its removal: a 404
    last = np.where(known, 0.0, world.born)  # day of each URL's last fetch
    stale = np.zeros(n)  # days stale so far
    stale_window = np.zeros(n)
    fetches = unchanged = 0
    credit = 0.0  # fetches the budget allowed so far
    step = step_hours / 24
    steps = round(days / step)
    for s in range(1, steps + 1):
        now = s * step
        born = np.flatnonzero(~known & (world.born <= now))
        if len(born):  # found and fetched as new (outside the budget)
            known[born] = True
            last[born] = now
            first = policy.observe(None, now * DAY, None)
            for i in born.tolist():
                states[i] = first
                columns.put(i, first)
                if oracle:
                    columns.rate[i] = world.rate[i] / DAY if not told else columns.rate[i]
        candidates = np.flatnonzero(known & ~gone)
        credit += budget * known.sum() * step  # the same for every policy: each URL is known from its birth
        quota = int(np.floor(credit + 1e-9)) - fetches
        if quota <= 0:
            continue
        if derive:  # as the crawl does: the default interval that this run's budget gives
            policy = base.with_default_interval(budget_interval(len(candidates), quota, step * DAY))
        scale = 1.0 if oracle else size_scale(policy, columns.size[candidates])
        priorities = run_priorities(policy, columns, now * DAY, scale)[candidates]
        idx = candidates[plan_run(priorities, columns.next_due[candidates] <= now * DAY, quota)]
        fetches += len(idx)
        dead = world.died[idx] <= now
        if dead.any():  # a 404: stale from the first change not fetched until the removal
            removed = idx[dead]
            gone[removed] = True
            unchanged += len(removed)
            change = world.first_change_after(removed, last[removed])
            died = world.died[removed]
            stale[removed] += np.where(change <= died, died - change, 0.0)
            stale_window[removed] += np.where(change <= died, _overlap(change, died, *WINDOW), 0.0)
        idx = idx[~dead]
        change = world.first_change_after(idx, last[idx])
        real = change <= now
        stale[idx] += np.where(real, now - change, 0.0)
        stale_window[idx] += np.where(real, _overlap(change, np.full(len(idx), now), *WINDOW), 0.0)
        unchanged += int((~real).sum())
        if not oracle:
            verdict = world.raw_changed(idx, last[idx], now, real) if name == "Nutch + MD5" else real
            distance = np.clip(np.rint(world.size[idx] * rng.lognormal(0.0, 0.25, len(idx))), 4, 64)
            for i, v, d in zip(idx.tolist(), verdict.tolist(), distance.tolist()):
                states[i] = policy.observe(states[i], now * DAY, v, d if v else None)
                columns.put(i, states[i])
        else:
            columns.last_fetch[idx] = now * DAY
            columns.rate[idx] = world.rate[idx] / DAY  # told: known from this fetch on
        last[idx] = now
    # the stale time left at the end: from the first change not fetched to the end (or the removal)
    everyone = np.flatnonzero(known & ~gone)
    end = np.minimum(world.died[everyone], days)
    tail = world.first_change_after(everyone, last[everyone])
    stale[everyone] += np.where(tail <= end, end - tail, 0.0)
    stale_window[everyone] += np.where(tail <= end, _overlap(tail, end, *WINDOW), 0.0)
    alive = _overlap(world.born, world.died, 0.0, days)
    alive_window = _overlap(world.born, world.died, *WINDOW).sum()  # 0 in a run shorter than 30 days
    return {
        "freshness": float(1 - stale.sum() / alive.sum()),
        "freshness_30_90": float(1 - stale_window.sum() / alive_window) if alive_window else float("nan"),
        "weighted_staleness": float((stale * world.size).sum() / (world.size * alive).sum()),
        "unchanged_fetches": unchanged / fetches,
        "fetches": fetches,
        "spent": fetches / credit,  # of the budget: fetches per known URL per day / budget
    }


def _timed_run(world: str, world_args: tuple[int, float, int], budget: float, name: str) -> dict[str, float]:
    """:func:`run` in a worker process (the world is rebuilt there from its seed: the same world)."""
    started = time.perf_counter()
    r = run(WORLDS[world](*world_args), name, budget)
    r["secs"] = round(time.perf_counter() - started, 1)
    return r


def table(args: argparse.Namespace, results: dict[str, dict[str, dict[str, float]]]) -> str:
    """The results as a markdown table: freshness over all days and over days 30-90, each against
    the oracle's, the budget spent."""
    lines = [
        (
            f"{args.urls:,} URLs, {args.days:g} days, world {args.world!r}, seed {args.seed}; budget in fetches "
            "per known URL per day; spent = fetches / budget."
        ),
        "",
        (
            "| budget | policy | spent | freshness | vs oracle | days 30-90 | vs oracle | change-weighted "
            "staleness | unchanged fetches |"
        ),
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for budget, by_policy in results.items():
        best = by_policy.get("oracle", {})
        for name, r in by_policy.items():
            ratios = [f"{r[key] / best[key]:.3f}" if best.get(key) else "-" for key in ("freshness", "freshness_30_90")]
            lines.append(
                f"| {budget} | {name} | {r['spent']:.3f} | {r['freshness']:.3f} | {ratios[0]} "
                f"| {r['freshness_30_90']:.3f} | {ratios[1]} | {r['weighted_staleness']:.3f} "
                f"| {r['unchanged_fetches']:.1%} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--world", choices=list(WORLDS), default="poisson")
    parser.add_argument("--urls", type=int, default=10_000)
    parser.add_argument("--days", type=float, default=90.0)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.1, 0.37, 1.0], help="fetches per URL per day")
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES, metavar="POLICY")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (one run of a policy at a budget each)")
    parser.add_argument("--json", type=Path, default=HERE / "results.json")
    parser.add_argument("--markdown", type=Path, default=HERE / "results.md")
    args = parser.parse_args(argv)
    tasks = [(budget, name) for budget in args.budgets for name in args.policies]
    results: dict[str, dict[str, dict[str, float]]] = {str(budget): {} for budget in args.budgets}
    world_args = (args.urls, args.days, args.seed)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        # the most fetches first, so that the pool's workers finish at about the same time
        futures = {
            task: pool.submit(_timed_run, args.world, world_args, *task) for task in sorted(tasks, key=lambda t: -t[0])
        }
        for budget, name in tasks:
            r = futures[budget, name].result()
            results[str(budget)][name] = r
            print(f"budget {budget}: {name:17s} {r}", file=sys.stderr, flush=True)
    text = table(args, results)
    print(text)
    args.markdown.write_text(text + "\n")
    args.json.write_text(
        json.dumps(
            {"world": args.world, "urls": args.urls, "days": args.days, "seed": args.seed, "results": results},
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
