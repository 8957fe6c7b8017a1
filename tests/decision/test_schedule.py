"""schedule: recrawl policies driven with an injected clock, rate estimates on synthetic Poisson
histories, the state's plain-number round trip and the budgeted selection."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scrapy_simhash.decision.verdicts import CHANGED, change_verdict
from scrapy_simhash.fingerprint.simhash import Fingerprinter, hamming
from scrapy_simhash.schedule import (
    DAY,
    HOUR,
    FixedIntervalPolicy,
    FreshnessPolicy,
    NutchAdaptivePolicy,
    ScheduleColumns,
    SchedulePolicy,
    ScheduleState,
    budget_interval,
    estimate_rate,
    refresh_value,
    select,
)

ARTICLE = (
    "The city council voted on Tuesday to extend the riverside cycle path by four kilometres, "
    "connecting the old harbour with the university campus. Work starts in spring and should take "
    "eighteen months; the budget of 12 million was approved with a large majority after a long "
    "debate about parking spaces, trees along the water and the cost of two new bridges. Residents "
    "can comment on the plans at the town hall until the end of the month, and a second public "
    "meeting is planned for January. "
)


def page(counter: int, day: int) -> str:
    """The article with noise: a visit counter and a date that change on every fetch."""
    return f"{ARTICLE}Visits: {counter}. Last updated: 2026-{1 + day % 12:02d}-{1 + day % 28:02d}."


def run(policy: SchedulePolicy, changes: object, fetches: int, start: float = 1_700_000_000.0) -> ScheduleState:
    """Fetch one URL ``fetches`` times, each time when it is due (the injected clock jumps to
    ``next_due``); ``changes(i, t)`` gives the fetch's (changed, distance)."""
    state = policy.observe(None, start, None)
    for i in range(1, fetches + 1):
        now = state.next_due
        changed, distance = changes(i, now)  # type: ignore[operator]
        state = policy.observe(state, now, changed, distance)
    return state


def nutch() -> NutchAdaptivePolicy:
    return NutchAdaptivePolicy(default_interval=DAY, min_interval=HOUR, max_interval=30 * DAY)


def test_nutch_page_changing_on_every_fetch_converges_to_min_interval():
    state = run(nutch(), lambda i, t: (True, 20), 40)
    assert state.interval == HOUR
    assert state.next_due == state.last_fetch + HOUR  # a change at the fetch: delta 0, no sync shift


def test_nutch_static_page_converges_to_max_interval():
    state = run(nutch(), lambda i, t: (False, 0), 40)
    assert state.interval == 30 * DAY
    assert state.changes == 0 and state.fetches == 41


def test_nutch_steps_and_sync_delta_follow_nutch():
    policy = nutch()
    first = policy.observe(None, 0.0, None)
    assert (first.interval, first.next_due) == (DAY, DAY)
    changed = policy.observe(first, DAY, True, 10)
    assert changed.interval == pytest.approx(0.8 * DAY) and changed.next_due == pytest.approx(1.8 * DAY)
    unchanged = policy.observe(changed, 1.8 * DAY, False, 0)
    # delta = 0.8 d since the last change: interval max(0.8 * 1.4, 0.8) d, next = 1.8 - 0.3 * 0.8 + interval
    assert unchanged.interval == pytest.approx(1.12 * DAY)
    assert unchanged.next_due == pytest.approx((1.8 - 0.24 + 1.12) * DAY)


def test_noise_only_edits_are_unchanged_verdicts_and_back_off():
    """Counters and dates change the raw bytes (an MD5) on every fetch but move the fingerprint by a
    few bits: our verdict says unchanged, so the interval backs off, where Nutch's MD5 rule
    (a new signature = modified) fetches the page at the minimum interval."""
    fp = Fingerprinter()
    versions = [page(1000 + 37 * i, i) for i in range(25)]
    fps = [fp.fingerprint_text(text) for text in versions]
    verdicts = []

    def by_verdict(i: int, t: float) -> tuple[bool, int]:
        distance = hamming(fps[i], fps[i - 1])
        verdicts.append(change_verdict(distance, 3))
        return verdicts[-1] == CHANGED, distance

    def by_md5(i: int, t: float) -> tuple[bool, None]:
        md5 = [hashlib.md5(versions[j].encode()).digest() for j in (i - 1, i)]
        return md5[0] != md5[1], None

    ours = FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=4 * DAY)
    calm = run(ours, by_verdict, 24)
    assert CHANGED not in verdicts and calm.changes == 0
    assert calm.interval == 4 * DAY
    assert run(nutch(), by_verdict, 24).interval == 30 * DAY
    assert run(nutch(), by_md5, 24).interval == HOUR


def test_ours_static_page_backs_off_to_max_interval():
    policy = FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=4 * DAY)
    state = policy.observe(None, 0.0, None)
    intervals = []
    for _ in range(40):
        state = policy.observe(state, state.next_due, False, 0)
        intervals.append(state.interval)
    assert intervals == sorted(intervals)  # no change seen: never shorter
    assert intervals[-1] == 4 * DAY
    assert state.rate < 0.05 / DAY
    # with a far maximum it keeps backing off: a static page is worth a fetch only every few weeks
    far = run(FreshnessPolicy(default_interval=DAY, max_interval=90 * DAY), lambda i, t: (False, 0), 80)
    assert far.interval > 7 * DAY


def test_ours_page_changing_on_every_fetch_is_probed_then_starved():
    """Unlike Nutch, ours does not fetch a page that changes on every fetch at the minimum interval:
    a change seen after a default interval is checked by short probes (the second twice as long as the
    first), and a page that changed again within both is changing too fast for a fetch to keep it
    fresh (refresh_value is at most weight / rate), so it waits for the maximum interval: the Lagrange
    optimum at any budget. With ``probes=1`` one probe decides."""
    for probes in (1, 2):
        policy = FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=30 * DAY, probes=probes)
        first = policy.observe(None, 0.0, None)
        seen = policy.observe(first, DAY, True, 12)
        assert seen.probe == seen.interval == DAY / 8
        probed = policy.observe(seen, seen.next_due, True, 12)
        if probes == 2:
            assert probed.probe == probed.interval == DAY / 4  # the second probe
            probed = policy.observe(probed, probed.next_due, True, 12)
        assert probed.probe == 0.0 and probed.interval == 30 * DAY
        assert probed.rate > 8 / DAY
        again = policy.observe(probed, probed.next_due, True, 12)  # changed after a long interval again: no probe
        assert again.probe == 0.0 and again.interval == 30 * DAY
        daily = policy.observe(seen, seen.next_due, False, 0)  # unchanged at the probe: about daily
        assert daily.probe == 0.0 and DAY / 2 < daily.interval < 4 * DAY
        later = probed.last_fetch + 3 * DAY
        assert policy.priority(probed, later) < 1 <= policy.priority(daily, later)


def test_ours_fetches_pages_that_change_more_often_sooner_until_they_change_too_fast():
    """Poisson pages fetched when due: the interval falls as the rate rises from rare to about one
    change per default interval, then rises again: a fetch of a page that changes many times per
    interval buys little freshness, and at a budget such pages are starved (the Lagrange optimum)."""
    policy = FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=60 * DAY)
    intervals = {}
    for per_day in (0.05, 0.3, 1.0, 50.0):
        rng = random.Random(per_day)
        rate = per_day / DAY
        state = policy.observe(None, 0.0, None)
        for _ in range(60):
            now = state.next_due
            changed = rng.random() < -math.expm1(-rate * (now - state.last_fetch))
            state = policy.observe(state, now, changed, 12)
        intervals[per_day] = state.interval
    assert intervals[0.05] > intervals[0.3] > intervals[1.0]
    assert intervals[50.0] > intervals[1.0]
    assert intervals[0.05] > 2 * DAY


def test_fixed_interval_ignores_changes():
    policy = FixedIntervalPolicy(default_interval=6 * HOUR)
    assert run(policy, lambda i, t: (i % 2 == 0, 9), 10).interval == 6 * HOUR
    state = run(policy, lambda i, t: (False, 0), 3)
    assert state.next_due == state.last_fetch + 6 * HOUR
    assert policy.priority(state, state.last_fetch + 9 * HOUR) == pytest.approx(1.5)


@pytest.mark.parametrize("per_day", [0.02, 0.3, 2.0])
def test_rate_estimate_converges_on_irregular_poisson_visits(per_day):
    rng = random.Random(per_day)
    rate = per_day / DAY
    observations = []
    for _ in range(600):
        elapsed = rng.uniform(0.2, 3.0) / per_day * DAY  # visits at 0.2 .. 3 mean change intervals
        observations.append((elapsed, rng.random() < -math.expm1(-rate * elapsed)))
    estimate = estimate_rate(observations, low=0.001 / DAY, high=1000 / DAY)
    assert estimate == pytest.approx(rate, rel=0.12)


def test_rate_estimate_on_regular_visits_agrees_with_cho_garcia_molina():
    rng = random.Random(7)
    rate, interval, n = 0.7 / DAY, DAY, 500
    seen = [rng.random() < -math.expm1(-rate * interval) for _ in range(n)]
    changes = sum(seen)
    cho = -math.log((n - changes + 0.5) / (n + 0.5)) / interval  # TOIT 2003 estimator
    ours = estimate_rate([(interval, c) for c in seen], low=0.001 / DAY, high=1000 / DAY)
    assert ours == pytest.approx(cho, rel=0.03)
    assert ours == pytest.approx(rate, rel=0.12)


def test_rate_estimate_prior_without_history_and_one_sided_evidence():
    low, high = 0.01 / DAY, 100 / DAY
    assert estimate_rate([], low=low, high=high) == pytest.approx(1 / DAY)  # the prior's geometric mean
    once = estimate_rate([(DAY, True)], low=low, high=high)
    always = estimate_rate([(DAY, True)] * 10, low=low, high=high)
    assert 1 / DAY < once < always < high
    never = estimate_rate([(DAY, False)] * 10, low=low, high=high)
    assert low < never < 0.1 / DAY
    with pytest.raises(ValueError, match="low < high"):
        estimate_rate([], low=1.0, high=0.5)


def test_policy_state_rate_follows_a_poisson_page():
    """The rate kept in the state (recent observations plus discounted older ones) converges too."""
    policy = FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=30 * DAY)
    rng = random.Random(3)
    errors = []
    for per_day in (0.2, 0.5, 1.0, 2.0):
        rate = per_day / DAY
        state = policy.observe(None, 0.0, None)
        for _ in range(300):
            now = state.last_fetch + rng.uniform(0.3, 1.5) * DAY  # irregular visits
            state = policy.observe(state, now, rng.random() < -math.expm1(-rate * (now - state.last_fetch)), 10)
        errors.append(abs(math.log(state.rate / rate)))
    assert max(errors) < math.log(1.6)


def test_refresh_value_matches_theory():
    rates = np.array([0.0, 1e-12, 1 / DAY, 100 / DAY])
    values = refresh_value(rates, 1.0, np.full(4, DAY))
    assert values[0] == 0.0 and values[1] == pytest.approx(1e-12 * DAY * DAY / 2)
    assert values[2] == pytest.approx(DAY * (1 - 2 / math.e))
    assert values[3] <= DAY / 100  # never more than weight / rate: fast pages are worth little
    grid = np.linspace(0, 5 * DAY, 50)
    assert np.all(np.diff(refresh_value(1 / DAY, 2.0, grid)) > 0)


def test_due_and_priority_agree():
    """A priority of 1 or more means due, for every policy: the crawler's gate and its ranking agree."""
    rng = random.Random(11)
    for policy in (nutch(), FreshnessPolicy(default_interval=DAY), FixedIntervalPolicy()):
        state = run(policy, lambda i, t: (rng.random() < 0.4, rng.randint(4, 30)), 12)
        for dt in (0.5, 0.99, 1.0, 1.01, 3.0):
            now = state.last_fetch + dt * state.interval
            assert (policy.priority(state, now) >= 1 - 1e-9) == policy.is_due(state, now), (policy, dt)


def test_state_round_trips_as_plain_numbers():
    policy = FreshnessPolicy()
    state = run(policy, lambda i, t: (i % 3 == 0, 17), 25)
    data = json.loads(json.dumps(state.to_dict()))
    back = ScheduleState.from_dict(data)
    assert np.allclose(back.recent, state.recent, atol=1e-3) and back.fetches == 26 and back.changes == 8
    assert back.rate == pytest.approx(state.rate, rel=1e-5)
    assert back.old_changes == pytest.approx(state.old_changes, abs=1e-4)
    assert ScheduleState.from_dict(back.to_dict()) == back
    for bad in ({}, {**data, "interval": 0}, {**data, "rate": "fast"}, {**data, "old": [1, 2]}, {**data, "size": -1}):
        with pytest.raises(ValueError, match="not a schedule state"):
            ScheduleState.from_dict(bad)


def test_select_takes_the_highest_due_priorities():
    priorities = np.array([0.5, 3.0, 1.0, 2.0, 0.9, 7.0])
    assert select(priorities, 2).tolist() == [5, 1]
    assert select(priorities, 10).tolist() == [5, 1, 3, 2]
    assert select(priorities, 5, due_only=False).tolist() == [5, 1, 3, 2, 4]
    assert select(priorities, 0).tolist() == []


def test_columns_rank_many_urls_like_one_at_a_time():
    policy = FreshnessPolicy(default_interval=DAY)
    rng = random.Random(5)
    states = [run(policy, lambda i, t, p=p: (rng.random() < p, 12), 8) for p in (0.1, 0.5, 0.9, 0.3)]
    now = max(s.last_fetch for s in states) + DAY
    many = policy.priorities(ScheduleColumns.of(states), now)
    assert many.tolist() == pytest.approx([policy.priority(s, now) for s in states])


def test_bad_constants_are_refused_with_the_rule():
    with pytest.raises(ValueError, match="min_interval"):
        FreshnessPolicy(default_interval=HOUR, min_interval=DAY)
    with pytest.raises(ValueError, match="dec_rate"):
        NutchAdaptivePolicy(dec_rate=1.5)
    with pytest.raises(ValueError, match="size_exponent"):
        FreshnessPolicy(size_exponent=-1)
    for evidence in (0.0, 1.5):
        with pytest.raises(ValueError, match="0 < evidence <= 1"):
            FreshnessPolicy(evidence=evidence)


def test_change_of_unknown_size_counts_as_a_change_and_keeps_the_size():
    policy = FreshnessPolicy()
    state = policy.observe(policy.observe(None, 0.0, None), DAY, True, 20)
    after = policy.observe(state, 2 * DAY, True, None)  # e.g. a new ETag, body not fingerprinted
    assert after.changes == 2 and after.size == 20 and after.recent[0] == (DAY, -1.0)
    assert after.rate > state.rate


def test_simulation_spends_the_same_budget_on_every_policy():
    """A small run of benchmarks/recrawl/simulate.py: equal fetch counts, and the oracle (true rates)
    is at least as fresh as a fixed interval."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "recrawl" / "simulate.py"
    spec = importlib.util.spec_from_file_location("recrawl_simulate", path)
    assert spec is not None and spec.loader is not None
    simulate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(simulate)
    world = simulate.World(300, 20, seed=1)
    results = {name: simulate.run(world, name, 0.37) for name in simulate.POLICIES}
    assert {r["fetches"] for r in results.values()} == {int(0.37 * 300 * 20)}
    assert results["oracle"]["freshness"] >= results["fixed interval"]["freshness"]
    assert all(0 < r["freshness"] < 1 and 0 <= r["unchanged_fetches"] <= 1 for r in results.values())
    # The second world: URLs born and removed; every policy spends what the budget allows, all of it.
    mixed = simulate.MixedWorld(300, 40, seed=2)
    assert 0 < mixed.born.max() < 40 and mixed.died.min() < 40
    runs = {name: simulate.run(mixed, name, 0.37) for name in ("fixed interval", "ours", "oracle")}
    assert len({r["fetches"] for r in runs.values()}) == 1
    assert all(r["spent"] == pytest.approx(1.0, abs=0.01) and 0 < r["freshness_30_90"] < 1 for r in runs.values())


def brute_posterior(
    state: ScheduleState, low: float, high: float, evidence: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Grid rates and their posterior for ``state``'s observations, written out as in the docstring of
    estimate_rate (log-uniform prior: uniform over the log-spaced grid), the likelihood raised to the
    power ``evidence``."""
    rates = np.exp(np.linspace(math.log(low), math.log(high), 1 + round(16 * math.log10(high / low))))
    log_like = np.zeros(len(rates))
    for elapsed, size in state.recent:
        log_like += np.log(1 - np.exp(-rates * elapsed)) if size else -rates * elapsed
    if state.old_changes:
        log_like += state.old_changes * np.log(1 - np.exp(-rates * state.old_changed_secs / state.old_changes))
    log_like -= rates * state.old_unchanged_secs
    posterior = np.exp(evidence * (log_like - log_like.max()))
    return rates, posterior / posterior.sum()


def test_ours_values_a_fetch_by_its_average_over_the_posterior_rate():
    """With little history the rate is uncertain: a fetch is worth refresh_value averaged over the
    posterior of the rate (brute force here), not refresh_value at one guessed rate. A URL seen
    changed twice over long intervals may change once a day (worth a fetch) or a hundred times (not):
    the average keeps the first possibility, the point estimate at the geometric mean loses it."""
    constants: dict[str, Any] = {"default_interval": 4 * DAY, "min_interval": HOUR, "max_interval": 90 * DAY, "probe_ratio": 0}
    policy = FreshnessPolicy(**constants)
    point = FreshnessPolicy(**constants, uncertainty=False)
    state = policy.observe(policy.observe(policy.observe(None, 0.0, None), 4 * DAY, True, 10), 8 * DAY, True, 10)
    rates, posterior = brute_posterior(state, policy.low_rate, policy.high_rate, policy.evidence)
    for days in (0.5, 2.0, 6.0, 30.0):
        now = state.last_fetch + days * DAY
        expected = float(posterior @ refresh_value(rates, 1.0, days * DAY)) / policy.threshold
        expected = max(min(expected, days * DAY / HOUR), days / 90)
        if abs(expected - 1) > 1e-2:  # at the due time itself, due or not decides (the next test)
            assert policy.priority(state, now) == pytest.approx(expected, rel=1e-9)
        plug_in = refresh_value(state.rate, 1.0, days * DAY) / point.threshold
        assert point.priority(state, now) == pytest.approx(max(min(plug_in, days * DAY / HOUR), days / 90), rel=1e-9)
    late = state.last_fetch + 6 * DAY
    assert policy.priority(state, late) > 1.5 * point.priority(state, late)
    assert state.rate == pytest.approx(math.exp(posterior @ np.log(rates)), rel=1e-9)


def test_tempered_posterior_keeps_the_slower_rates_of_a_page_seen_changed_at_long_intervals():
    """``evidence`` < 1 raises the likelihood to that power: the posterior (brute force here) is the
    plain one flattened, a page seen changed at long intervals and at both probes keeps more of the
    slower rates it may have, so a later fetch of it is worth more than under plain Bayes and it is
    due sooner; with many verdicts both posteriors settle on the same rate."""
    constants: dict[str, Any] = {"default_interval": 10 * DAY, "min_interval": HOUR, "max_interval": 90 * DAY}
    tempered, plain = FreshnessPolicy(**constants), FreshnessPolicy(**constants, evidence=1.0)
    assert tempered.evidence == 0.7
    state = plain.observe(None, 0.0, None)
    for days in (10.0, 1.25, 2.5):  # changed at the first refetch and at both probes
        state = plain.observe(state, state.last_fetch + days * DAY, True, 10)
    assert state.probe == 0.0
    rates, flat = brute_posterior(state, plain.low_rate, plain.high_rate, 0.7)
    _, sharp = brute_posterior(state, plain.low_rate, plain.high_rate)
    assert tempered.posterior(state) == pytest.approx(flat, rel=1e-9, abs=1e-15)
    assert plain.posterior(state) == pytest.approx(sharp, rel=1e-9, abs=1e-15)
    slow = rates < 1 / DAY
    assert flat[slow].sum() > 1.3 * sharp[slow].sum()
    later = state.last_fetch + 5 * DAY
    assert tempered.priority(state, later) > 1.1 * plain.priority(state, later)
    rng = random.Random(5)
    for _ in range(200):  # a page changing every other day on average, fetched daily
        now = state.last_fetch + DAY
        state = plain.observe(state, now, rng.random() < -math.expm1(-0.5), 10)
    log_rates = np.log(rates * DAY)
    settled = [float(policy.posterior(state) @ log_rates) for policy in (tempered, plain)]
    assert settled[0] == pytest.approx(settled[1], abs=0.1)  # within 10%


def test_ours_due_time_is_where_the_expected_value_reaches_the_threshold():
    policy = FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=60 * DAY, size_exponent=0.0)
    rng = random.Random(4)
    checked = 0
    for per_day in (0.05, 0.3, 1.0, 3.0):
        state = policy.observe(None, 0.0, None)
        for _ in range(12):
            now = state.last_fetch + rng.uniform(0.2, 2.0) * DAY
            changed = rng.random() < -math.expm1(-per_day / DAY * (now - state.last_fetch))
            state = policy.observe(state, now, changed, 10)
            if state.probe or state.interval in (HOUR, 60 * DAY):
                continue
            value = policy.expected_value(policy.posterior(state), state.interval)
            assert value == pytest.approx(policy.threshold, rel=1e-2)
            assert policy.priority(state, state.next_due) >= 1 > policy.priority(state, state.next_due - 1.0)
            checked += 1
    assert checked >= 10


def test_columns_recompute_a_row_after_it_is_set_again():
    policy = FreshnessPolicy(default_interval=DAY)
    states = [run(policy, lambda i, t, p=p: (i % p == 0, 12), 6) for p in (1, 2, 3)]
    columns = ScheduleColumns.of(states)
    now = max(s.last_fetch for s in states) + DAY
    assert policy.priorities(columns, now).tolist() == pytest.approx([policy.priority(s, now) for s in states])
    states[1] = policy.observe(states[1], now, True, 30)
    columns.put(1, states[1])
    later = now + 2 * DAY
    assert policy.priorities(columns, later).tolist() == pytest.approx([policy.priority(s, later) for s in states])
    bare = ScheduleColumns(2)  # rows without a state (or without a history): their rate column, as a point
    bare.last_fetch[:] = [0.0, DAY]
    bare.rate[:] = 1 / DAY
    assert policy.priorities(bare, 3 * DAY).tolist() == pytest.approx(
        [refresh_value(1 / DAY, 1.0, t * DAY) / policy.threshold for t in (3, 2)]
    )


class _Reference(FreshnessPolicy):
    """FreshnessPolicy's step as it was before it was made cheaper (commit 96324b6): the parts
    that changed, verbatim (the rate posterior and the due time's interpolation), the oracle of
    ``test_policy_step_is_identical_to_the_reference``."""

    def posterior(self, state: ScheduleState) -> np.ndarray:
        changed = []
        exposure = state.old_unchanged_secs
        for t, s in state.recent:
            if not s:
                exposure += t
            elif t > 0:
                changed.append(t)
        posterior = np.exp(
            _reference_log_posterior(self._neg_rates, changed, exposure, state.old_changes, state.old_changed_secs)
            * self.evidence
        )
        posterior /= posterior.sum()
        return posterior

    def _due_after(self, posterior: np.ndarray, need: float) -> float:
        curve = posterior @ self._curve
        if curve[-1] < need:
            return self.max_interval
        j = int(curve.searchsorted(need))
        if j == 0:
            return self.min_interval
        lo, hi = curve[j - 1], curve[j]
        taus = self._taus
        return float(taus[j - 1] * (taus[1] / taus[0]) ** ((need - lo) / (hi - lo)))


def _reference_log_posterior(neg_rates, changed, exposure, old_changes, old_changed_secs):
    log_like = neg_rates * exposure
    if changed:
        terms = np.multiply.outer(np.array(changed), neg_rates)
        np.expm1(terms, out=terms)
        np.negative(terms, out=terms)
        np.log(terms, out=terms)
        log_like += terms.sum(axis=0)
    if old_changes > 0 and old_changed_secs > 0:
        old = neg_rates * (old_changed_secs / old_changes)
        np.expm1(old, out=old)
        np.negative(old, out=old)
        np.log(old, out=old)
        old *= old_changes
        log_like += old
    log_like -= log_like.max()
    return log_like


@pytest.mark.parametrize("kwargs", [{}, {"uncertainty": False}, {"probe_ratio": 0.0, "min_interval": 60.0}])
def test_policy_step_is_identical_to_the_reference(kwargs: dict) -> None:
    """The same due times, intervals, rates, probes and priorities, to the bit, as the step
    before it was made cheaper, on random histories: unchanged and changed fetches (one change
    in the recent observations, several, none), folded ones, a first fetch, zero elapsed times."""
    rng = random.Random(11)
    ours, reference = FreshnessPolicy(**kwargs), _Reference(**kwargs)
    for _ in range(100):
        state = ref = None
        now = rng.uniform(0, 2e9)
        rate = 10 ** rng.uniform(-3, 1.5) / DAY
        for _ in range(rng.randrange(1, 40)):
            changed: bool | None = None if state is None else rng.random() < 1 - math.exp(-rate * (now - state.last_fetch))
            distance = rng.choice((None, 0, 4, 30)) if changed else 0
            state, ref = ours.observe(state, now, changed, distance), reference.observe(ref, now, changed, distance)
            assert state == ref
            if changed is None:  # a first state, as the dataclass's __init__ made it
                d = reference.default_interval
                assert state == reference._plan(ScheduleState(now, now, d, now + d), None)
            when = now + rng.uniform(0, 3) * DAY
            assert ours.priority(state, when) == reference.priority(ref, when)
            if rng.random() < 0.3:  # as read back from a record
                state = ref = ScheduleState.from_dict(state.to_dict())
            now += rng.choice((0.0, rng.uniform(1, 5 * DAY), round(rng.uniform(HOUR, DAY), 3)))


@pytest.mark.parametrize("evidence", [0.7, 1.0])
def test_many_posteriors_at_once_are_each_ones_to_the_bit(evidence: float) -> None:
    """The posteriors that ``priorities`` makes for many rows at once (``_posterior_rows``) are
    ``posterior``'s of each state, to the bit: histories with no change, one, several, folded
    ones, zero elapsed times, first fetches; and so are the priorities."""
    rng = random.Random(13)
    policy = FreshnessPolicy(evidence=evidence, recent=6)
    states = []
    for _ in range(400):
        state, now = None, rng.uniform(0, 2e9)
        rate = 10 ** rng.uniform(-3, 1.5) / DAY
        for _ in range(rng.randrange(1, 14)):
            changed = None if state is None else rng.random() < 1 - math.exp(-rate * (now - state.last_fetch))
            state = policy.observe(state, now, changed, rng.choice((None, 4, 30)) if changed else 0)
            now += rng.choice((0.0, rng.uniform(1, 5 * DAY), round(rng.uniform(HOUR, DAY), 3)))
        assert state is not None
        states.append(state)
    assert {len([t for t, s in state.recent if s]) for state in states} >= {0, 1, 2, 3}
    assert any(state.old_changes for state in states) and not all(state.recent for state in states)
    rows = policy._posterior_rows(states)
    for state, row in zip(states, rows):
        assert row.tobytes() == policy._posterior_row(state).tobytes()
    now = max(state.last_fetch for state in states) + DAY
    at_once = policy.priorities(ScheduleColumns.of(states), now)
    assert at_once.tolist() == [float(policy.priorities(ScheduleColumns.of([s]), now)[0]) for s in states]


def test_a_policy_with_another_default_interval_is_that_policy_built_with_it():
    base = FreshnessPolicy(min_interval=HOUR, max_interval=30 * DAY)
    derived = base.with_default_interval(10 * DAY)
    assert isinstance(derived, FreshnessPolicy)
    built = FreshnessPolicy(default_interval=10 * DAY, min_interval=HOUR, max_interval=30 * DAY)
    assert (derived.threshold, derived.probe_interval) == (built.threshold, built.probe_interval)
    assert base.default_interval == DAY and base.probe_interval == DAY / 8  # unchanged
    state = built.observe(built.observe(None, 0.0, None), 3 * DAY, True, 12)
    assert derived.observe(derived.observe(None, 0.0, None), 3 * DAY, True, 12) == state
    assert base.with_default_interval(365 * DAY).default_interval == 30 * DAY  # clamped
    assert budget_interval(10_000, 42, HOUR) == pytest.approx(10_000 / 42 * HOUR)
