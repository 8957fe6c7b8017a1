"""The recrawl policies (see :mod:`scrapy_simhash.schedule`): the base :class:`SchedulePolicy`, which
keeps the observations, and the fixed, Nutch-adaptive and freshness policies; the change-rate
estimate and the value of a fetch that the freshness policy ranks by."""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from scrapy_simhash.schedule.columns import ScheduleColumns
from scrapy_simhash.schedule.state import BELOW_ONE, BLANK, DAY, HOUR, ScheduleState

# -- theory (Cho & Garcia-Molina 2003) -------------------------------------------------------------


def refresh_value(rate: Any, weight: Any, elapsed: Any) -> Any:
    """Freshness a fetch buys, ``weight / rate * (1 - exp(-x) * (1 + x))`` with ``x = rate * elapsed``
    (seconds of weighted freshness). Fetching every URL when this reaches one threshold is the
    Lagrange optimum of total weighted freshness at a fixed number of fetches (Azar et al., PNAS
    2018): it grows with the time since the last fetch and never exceeds ``weight / rate``, so
    URLs that change too often for the budget are starved. Works on numpy arrays."""
    rate = np.asarray(rate, dtype=float)
    x = rate * np.asarray(elapsed, dtype=float)
    gain = np.where(x < 1e-4, x * x * (0.5 - x / 3), -np.expm1(-x) - x * np.exp(-x))  # 1 - exp(-x) * (1 + x)
    value = np.asarray(weight, dtype=float) * np.where(rate > 0, gain / np.where(rate > 0, rate, 1.0), 0.0)
    return value if value.ndim else float(value)


@functools.lru_cache(maxsize=256)  # every new URL's first plan asks the same
def _value_time(threshold: float) -> float:
    """``x`` with ``1 - exp(-x) * (1 + x) == threshold`` (0 < threshold < 1), by bisection."""
    lo, hi = 0.0, 1.0
    while 1.0 - math.exp(-hi) * (1.0 + hi) < threshold:
        hi *= 2.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if 1.0 - math.exp(-mid) * (1.0 + mid) < threshold:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@functools.lru_cache(maxsize=64)
def _rate_grid(low: float, high: float, points_per_decade: int) -> tuple[np.ndarray, np.ndarray]:
    """Log-spaced rates from ``low`` to ``high``: their logarithms and the negated rates (read-only)."""
    if not 0 < low < high or points_per_decade < 1:
        raise ValueError(f"need 0 < low < high and points_per_decade >= 1, got {low}, {high}, {points_per_decade}")
    log_rates = np.linspace(math.log(low), math.log(high), 1 + round(points_per_decade * math.log10(high / low)))
    neg_rates = -np.exp(log_rates)
    log_rates.flags.writeable = neg_rates.flags.writeable = False
    return log_rates, neg_rates


@functools.lru_cache(maxsize=64)
def _prior_rate(low: float, high: float) -> float:
    """:func:`estimate_rate` without observations (the same for every new URL)."""
    return estimate_rate((), low=low, high=high)


def _log_posterior(
    neg_rates: np.ndarray,
    changed: Sequence[float],
    exposure: float,
    old_changes: float,
    old_changed_secs: float,
) -> np.ndarray:
    """Log posterior over the grid rates ``-neg_rates`` (log-uniform prior), shifted so that its
    maximum is 0: ``changed`` the elapsed times of the fetches that saw a change, ``exposure`` the
    total elapsed time of those that did not, folded older changes as in :func:`estimate_rate`."""
    return cast("np.ndarray", _log_posteriors(neg_rates, [changed], np.array([exposure], dtype=float), [old_changes], [old_changed_secs])[
        0
    ])


def _log_posteriors(
    neg_rates: np.ndarray,
    changed: Sequence[Sequence[float]],
    exposure: np.ndarray,
    old_changes: Sequence[float],
    old_changed_secs: Sequence[float],
) -> np.ndarray:
    """:func:`_log_posterior` of many URLs, one row each (row ``i`` of ``changed[i]``,
    ``exposure[i]``, ...), vectorised over the URLs with as many changes: each row is the one URL's,
    to the bit (the same operations per rate; a URL's changes summed in order)."""
    # (-r) * t is -(r * t) to the bit, so a row is that of the formula as written in estimate_rate's docstring.
    log_like = np.multiply(neg_rates, exposure[:, None])
    groups: dict[int, list[int]] = {}
    for i, times in enumerate(changed):
        if times:
            groups.setdefault(len(times), []).append(i)
    for k, at in groups.items():
        terms = np.multiply.outer(np.array([changed[i] for i in at], dtype=float), neg_rates)
        np.expm1(terms, out=terms)
        np.negative(terms, out=terms)
        np.log(terms, out=terms)
        _add_rows(log_like, at, terms[:, 0] if k == 1 else terms.sum(axis=1))
    folded = [i for i, (c, secs) in enumerate(zip(old_changes, old_changed_secs)) if c > 0 and secs > 0]
    if folded:
        counts = np.array([old_changes[i] for i in folded], dtype=float)
        old = neg_rates * (np.array([old_changed_secs[i] for i in folded], dtype=float) / counts)[:, None]
        np.expm1(old, out=old)
        np.negative(old, out=old)
        np.log(old, out=old)
        old *= counts[:, None]
        _add_rows(log_like, folded, old)
    log_like -= log_like.max(axis=1, keepdims=True)
    return cast("np.ndarray", log_like)


def _add_rows(values: np.ndarray, at: list[int], rows: np.ndarray) -> None:
    """``values[at] += rows``, in place (all the rows at once when ``at`` is every row, in order)."""
    if len(at) == len(values):
        values += rows
    else:
        values[at] += rows


def estimate_rate(
    observations: Sequence[tuple[float, bool]],
    *,
    low: float,
    high: float,
    old_changes: float = 0.0,
    old_changed_secs: float = 0.0,
    old_unchanged_secs: float = 0.0,
    points_per_decade: int = 16,
) -> float:
    """Change rate (per second) from irregular visits: ``observations`` are ``(elapsed, changed)``
    per fetch, Poisson changes seen only as "changed since the last fetch" (the likelihood
    ``prod (1 - exp(-r t))^c * exp(-r t)^(1 - c)`` of Cho & Garcia-Molina's irregular-visit
    estimator). Bayesian, with a log-uniform prior from ``low`` to ``high`` (rates over orders of
    magnitude, none favoured: a URL with no history is explored, one change does not pin a rate) on a
    grid of ``points_per_decade`` rates per decade; returns the posterior geometric mean. Folded
    older observations count as ``old_changes`` changes over intervals of their mean length.
    """
    log_rates, neg_rates = _rate_grid(low, high, points_per_decade)
    changed = [t for t, c in observations if c and t > 0]
    exposure = sum(t for t, c in observations if not c) + old_unchanged_secs
    posterior = np.exp(_log_posterior(neg_rates, changed, exposure, old_changes, old_changed_secs))
    return float(math.exp(posterior @ log_rates / posterior.sum()))


# -- policies ---------------------------------------------------------------------------------------


class SchedulePolicy:
    """Base policy: keeps the observations; subclasses choose the interval, next due time and rate.

    ``default_interval``: a URL's first interval; ``min_interval`` / ``max_interval``: clamps;
    ``recent``: observations kept exactly, older ones are folded and discounted by ``memory`` each.
    """

    def __init__(
        self,
        *,
        default_interval: float = DAY,
        min_interval: float = HOUR,
        max_interval: float = 90 * DAY,
        recent: int = 16,
        memory: float = 0.95,
    ) -> None:
        if not 0 < min_interval <= default_interval <= max_interval:
            raise ValueError(
                f"intervals must satisfy 0 < min_interval ({min_interval}) <= default_interval "
                f"({default_interval}) <= max_interval ({max_interval})"
            )
        if recent < 1 or not 0 < memory <= 1:
            raise ValueError(f"need recent >= 1 and 0 < memory <= 1, got {recent}, {memory}")
        self.default_interval = float(default_interval)
        self.min_interval = float(min_interval)
        self.max_interval = float(max_interval)
        self.recent = recent
        self.memory = memory

    def with_default_interval(self, default_interval: float) -> SchedulePolicy:
        """A copy of this policy whose ``default_interval`` (clamped to [``min_interval``,
        ``max_interval``]) is ``default_interval``, and whatever follows from it (see
        :func:`budget_interval`)."""
        policy = copy.copy(self)
        policy.default_interval = min(max(float(default_interval), self.min_interval), self.max_interval)
        policy._interval_changed()
        return policy

    def _interval_changed(self) -> None:
        """Recompute what a subclass derives from ``default_interval``."""

    def observe(
        self, state: ScheduleState | None, fetch_time: float, changed: bool | None, distance: float | None = None
    ) -> ScheduleState:
        """The state after a fetch at ``fetch_time``. ``changed``: the fetch's verdict (``None`` for
        a first fetch, which starts a state whatever ``state`` is); ``distance``: the change distance
        (its size when changed; ``None`` if unknown, e.g. a changed ETag)."""
        if changed is None or state is None:
            # ScheduleState(last_fetch=..., ...) without the frozen dataclass's per-field __init__
            first = BLANK.evolve(
                last_fetch=fetch_time,
                last_change=fetch_time,
                interval=self.default_interval,
                next_due=fetch_time + self.default_interval,
            )
            return self._plan(first, None)
        elapsed = max(fetch_time - state.last_fetch, 0.0)
        size = 0.0  # unchanged
        if changed:
            size = float(distance) if distance is not None and distance > 0 else -1.0  # -1: changed, size unknown
        recent = ((elapsed, size), *state.recent)
        old = (state.old_changes, state.old_changed_secs, state.old_unchanged_secs)
        if len(recent) > self.recent:
            (t, s), recent = recent[-1], recent[:-1]
            m = self.memory
            old = (m * old[0] + (s != 0), m * old[1] + (t if s else 0.0), m * old[2] + (0.0 if s else t))
        observed = state.evolve(
            last_fetch=fetch_time,
            last_change=fetch_time if changed else state.last_change,
            size=(0.7 * state.size + 0.3 * size if state.size else size) if size > 0 else state.size,
            fetches=state.fetches + 1,
            changes=state.changes + bool(changed),
            recent=recent,
            old_changes=old[0],
            old_changed_secs=old[1],
            old_unchanged_secs=old[2],
        )
        return self._plan(observed, bool(changed))

    def _plan(self, state: ScheduleState, changed: bool | None) -> ScheduleState:
        """``state`` (already observed) with this policy's interval, next due time and rate."""
        raise NotImplementedError

    def _clamp(self, interval: float) -> float:
        return min(max(interval, self.min_interval), self.max_interval)

    def priorities(self, columns: ScheduleColumns, now: float) -> np.ndarray:
        """Priority per row at ``now``: ``1 + overdue / interval`` (1 when due; higher, more overdue)."""
        return 1.0 + (now - columns.next_due) / columns.interval

    def priority(self, state: ScheduleState, now: float) -> float:
        """The priority of one URL at ``now`` (>= 1: due)."""
        return float(self.priorities(ScheduleColumns.of([state]), now)[0])

    def hot_priorities(
        self, columns: ScheduleColumns, now: float, history: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """What a selection knows of :meth:`priorities` from ``columns`` alone (their ``states``
        unset; ``history``: the rows whose states hold observations): per row a priority and
        whether it is exact; a row that is not has an upper bound of its priority there, and is
        ranked by its state when that bound could enter the selection. Here: exact when this
        class ranks by ``next_due`` and ``interval`` as the base policy does, else unknown (inf)."""
        n = len(history)
        if type(self).priorities is SchedulePolicy.priorities:
            return self.priorities(columns, now), np.ones(n, dtype=bool)
        return np.full(n, np.inf), np.zeros(n, dtype=bool)

    def is_due(self, state: ScheduleState, now: float) -> bool:
        """Whether the URL is due at ``now`` (the same answer as ``priority(state, now) >= 1``)."""
        return now >= state.next_due


class FixedIntervalPolicy(SchedulePolicy):
    """Every URL every ``default_interval`` seconds, whatever it does."""

    def _plan(self, state: ScheduleState, changed: bool | None) -> ScheduleState:
        return state.evolve(interval=self.default_interval, next_due=state.last_fetch + self.default_interval)


class NutchAdaptivePolicy(SchedulePolicy):
    """Apache Nutch's ``AdaptiveFetchSchedule`` (defaults of ``nutch-default.xml``).

    Changed: interval x (1 - ``dec_rate``); unchanged: x (1 + ``inc_rate``). With ``sync_delta``,
    ``delta`` = fetch time - time of the last change seen; the interval is at least ``delta`` and the
    next fetch is ``fetch time - sync_delta_rate * delta + interval``. Clamped to [min, max]. Nutch's
    "changed" is a different MD5 signature; here it is whatever the caller passes.
    """

    def __init__(
        self,
        *,
        inc_rate: float = 0.4,
        dec_rate: float = 0.2,
        sync_delta: bool = True,
        sync_delta_rate: float = 0.3,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not (inc_rate >= 0 and 0 <= dec_rate < 1 and 0 <= sync_delta_rate <= 1):
            raise ValueError(
                f"need inc_rate >= 0, 0 <= dec_rate < 1, 0 <= sync_delta_rate <= 1, got {inc_rate}, {dec_rate}, "
                f"{sync_delta_rate}"
            )
        self.inc_rate = inc_rate
        self.dec_rate = dec_rate
        self.sync_delta = sync_delta
        self.sync_delta_rate = sync_delta_rate

    def _plan(self, state: ScheduleState, changed: bool | None) -> ScheduleState:
        if changed is None:
            return state
        interval = state.interval * ((1 - self.dec_rate) if changed else (1 + self.inc_rate))
        ref = state.last_fetch
        if self.sync_delta:
            delta = state.last_fetch - state.last_change
            interval = max(interval, delta)
            ref -= self.sync_delta_rate * delta
        interval = self._clamp(interval)
        return state.evolve(interval=interval, next_due=ref + interval)


class FreshnessPolicy(SchedulePolicy):
    """Ours: the most expected freshness per fetch, from estimated change rates and change sizes.

    Each URL's change rate is a posterior over its change verdicts (:func:`estimate_rate`); a fetch is
    due when its value (:func:`refresh_value`, averaged over that posterior) reaches the threshold, and
    its priority is value / threshold. The formula, the probes and the reasons are in
    ``docs/topics/schedule.rst``.

    :param reference_size: the change size of weight 1 (a URL's size until it changed).
    :param size_exponent: a URL's weight is ``(size / reference_size) ** size_exponent``.
    :param probe_ratio: a probe comes ``default_interval / probe_ratio`` after a change seen over a
        long interval (0: no probes).
    :param probes: probes in a series at most (each twice as long as the one before).
    :param uncertainty: average over the posterior (``False``: value at its geometric mean alone).
    :param evidence: the power of the likelihood in the posterior (1: plain Bayes).
    """

    def __init__(
        self,
        *,
        reference_size: float = 10.0,
        size_exponent: float = 0.5,
        probe_ratio: float = 8.0,
        probes: int = 2,
        uncertainty: bool = True,
        evidence: float = 0.7,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if reference_size <= 0 or size_exponent < 0 or probe_ratio < 0 or probes < 1 or not 0 < evidence <= 1:
            raise ValueError(
                f"need reference_size > 0, size_exponent >= 0, probe_ratio >= 0, probes >= 1, 0 < evidence <= 1, got "
                f"{reference_size}, {size_exponent}, {probe_ratio}, {probes}, {evidence}"
            )
        self.evidence = evidence
        self.reference_size = reference_size
        self.size_exponent = size_exponent
        self.uncertainty = uncertainty
        self.probe_ratio = probe_ratio
        self.probes = probes
        self.low_rate = 0.1 / self.max_interval
        self.high_rate = 10.0 / self.min_interval
        self._interval_changed()
        self._log_rates, neg_rates = _rate_grid(self.low_rate, self.high_rate, 16)
        self._neg_rates = neg_rates
        self._rates = -neg_rates
        self._inv_rates = 1.0 / self._rates
        # the expected value's curve: refresh_value of every grid rate at log-spaced elapsed times
        self._taus = np.geomspace(self.min_interval, self.max_interval, 97)
        self._tau_step = float(self._taus[1] / self._taus[0])
        self._taus_list = self._taus.tolist()
        self._curve = refresh_value(self._rates[:, None], 1.0, self._taus[None, :])
        self._last: tuple[ScheduleState | None, np.ndarray | None] = (None, None)

    def _interval_changed(self) -> None:
        ratio = self.probe_ratio
        self.probe_interval = max(self.default_interval / ratio, self.min_interval) if ratio else 0.0
        self.threshold = self.default_interval * (1.0 - 2.0 / math.e)  # refresh_value(1 / d, 1, d) for d = default

    def weight(self, size: Any) -> Any:
        """A URL's weight from its typical change size (``reference_size`` weighs 1)."""
        size = np.where(np.asarray(size) > 0, size, self.reference_size)
        value = (size / self.reference_size) ** self.size_exponent
        return value if np.ndim(value) else float(value)

    def posterior(self, state: ScheduleState) -> np.ndarray:
        """The probabilities of the URL's change rate being each of the policy's grid rates
        (log-spaced, 16 per decade from ``low_rate`` to ``high_rate``), from its observations, the
        likelihood raised to the power ``evidence``."""
        return cast("np.ndarray", self._posteriors([state])[0])

    def _posteriors(self, states: Sequence[ScheduleState]) -> np.ndarray:
        """:meth:`posterior` of each of ``states``, one row each (the same numbers, to the bit)."""
        changed_rows: list[list[float]] = []
        exposure = np.empty(len(states))
        for i, state in enumerate(states):
            changed = []
            unchanged = state.old_unchanged_secs
            for t, s in state.recent:
                if not s:
                    unchanged += t
                elif t > 0:
                    changed.append(t)
            changed_rows.append(changed)
            exposure[i] = unchanged
        log_like = _log_posteriors(
            self._neg_rates,
            changed_rows,
            exposure,
            [state.old_changes for state in states],
            [state.old_changed_secs for state in states],
        )
        if self.evidence != 1.0:
            log_like *= self.evidence  # the likelihood tempered: its maximum stays 0
        np.exp(log_like, out=log_like)
        log_like /= log_like.sum(axis=1, keepdims=True)
        return log_like

    def expected_value(self, posterior: np.ndarray, elapsed: Any) -> Any:
        """:func:`refresh_value` (weight 1) ``elapsed`` seconds after the last fetch, averaged over
        ``posterior`` (one row per URL and ``elapsed`` one number per URL, or one URL)."""
        neg_x = np.multiply.outer(np.asarray(elapsed, dtype=float), self._neg_rates)  # -r t
        em = np.expm1(neg_x)
        gain = em + 1.0
        gain *= neg_x
        gain -= em  # 1 - exp(-x) * (1 + x), to ~1e-16 absolute: enough where it is small
        gain *= posterior
        gain *= self._inv_rates
        return gain.sum(axis=-1)  # a row's sum whatever the rows beside it (a matrix product's may not be)

    def _plan(self, state: ScheduleState, changed: bool | None) -> ScheduleState:
        need = self.threshold / self._weight(state.size)
        if state.recent or state.old_changes or state.old_changed_secs or state.old_unchanged_secs:  # _history
            posterior = self.posterior(state)
            rate = math.exp(posterior @ self._log_rates)
        else:  # a URL's first fetch: the prior's rate, due after about default_interval
            posterior = None
            rate = _prior_rate(self.low_rate, self.high_rate)
        if self.uncertainty and posterior is not None:
            interval = self._due_after(posterior, need)
        else:
            interval = self.max_interval
            if need * rate < 1.0:
                interval = self._clamp(_value_time(need * rate) / rate)
        probe = 0.0
        if changed and self.probe_interval:
            probe = self._probe(state)
            if probe:
                interval = min(interval, probe)
        planned = state.evolve(rate=rate, interval=interval, next_due=state.last_fetch + interval, probe=probe)
        self._last = (planned, posterior)  # what ScheduleColumns.put of this very state asks next
        return planned

    def _probe(self, state: ScheduleState) -> float:
        """The probe after a change (0: none). The k-th probe of a series (k = 1 .. ``probes``) waits
        ``2 ** (k - 1)`` probe intervals and follows k - 1 short visits (up to twice the longest probe)
        that all saw a change."""
        short = 2.0**self.probes * self.probe_interval
        k = 0
        for t, s in state.recent:
            if t <= short:
                if not s:
                    return 0.0
                k += 1
        if k == 0:
            return self.probe_interval
        return 2.0**k * self.probe_interval if k < self.probes and state.recent[0][0] <= short else 0.0

    def _weight(self, size: float) -> float:
        """:meth:`weight` of one size, without numpy."""
        return cast("float", ((size or self.reference_size) / self.reference_size) ** self.size_exponent)

    def _due_after(self, posterior: np.ndarray, need: float) -> float:
        """The elapsed time (clamped) at which the expected value reaches ``need``, interpolated
        between the curve's log-spaced times (8% apart: the due time to ~1%; :meth:`priorities`
        makes due and priority >= 1 agree exactly)."""
        curve = posterior @ self._curve
        if curve[-1] < need:
            return self.max_interval
        j = int(curve.searchsorted(need))
        if j == 0:
            return self.min_interval
        lo, hi = curve[j - 1 : j + 1].tolist()  # floats: the same arithmetic as numpy's scalars, faster
        return cast("float", self._taus_list[j - 1] * self._tau_step ** ((need - lo) / (hi - lo)))

    def priority(self, state: ScheduleState, now: float) -> float:
        elapsed = max(now - state.last_fetch, 0.0)
        weight = self._weight(state.size)
        uncertain = self.uncertainty and _history(state)
        if uncertain:
            value = float(self.expected_value(self.posterior(state), elapsed)) * weight
        else:
            value = float(refresh_value(state.rate, weight, elapsed))
        value = max(min(value / self.threshold, elapsed / self.min_interval), elapsed / self.max_interval)
        if state.probe > 0:
            value = max(value, elapsed / state.probe)
        if not uncertain:
            return value
        return max(value, 1.0) if now >= state.next_due else min(value, BELOW_ONE)

    def priorities(self, columns: ScheduleColumns, now: float) -> np.ndarray:
        elapsed = np.maximum(now - columns.last_fetch, 0.0)
        weight = self.weight(columns.size)
        posteriors = np.zeros((len(elapsed), 1))
        if self.uncertainty:  # rows with a history: averaged over the posterior (rows without: as below)
            key = ("posterior", self.low_rate, self.high_rate, self.evidence)
            posteriors = columns.derived(key, len(self._rates) + 1, self._posterior_row, self._posterior_rows)
        uncertain = posteriors[:, -1] > 0
        if len(elapsed) and uncertain.all():  # a selection's ranked rows: no copy of the posteriors
            value = self.expected_value(posteriors[:, :-1], elapsed) * weight
        else:
            value = refresh_value(columns.rate, weight, elapsed)
            if uncertain.any():
                value[uncertain] = (
                    self.expected_value(posteriors[uncertain, :-1], elapsed[uncertain]) * weight[uncertain]
                )
        value = self._limited(value, columns, elapsed)
        if not self.uncertainty:
            return value
        # due (now >= next_due) and priority >= 1 agree exactly, whatever the rounding of the due time
        due = now >= columns.next_due
        return np.where(uncertain, np.where(due, np.maximum(value, 1.0), np.minimum(value, BELOW_ONE)), value)

    def _limited(self, value: np.ndarray, columns: ScheduleColumns, elapsed: np.ndarray) -> np.ndarray:
        """:meth:`priorities` of the values of fetches ``value``: over the threshold, within the
        interval limits, at least the probe's (non-decreasing in ``value``)."""
        value = value / self.threshold
        value = np.maximum(np.minimum(value, elapsed / self.min_interval), elapsed / self.max_interval)
        probing = columns.probe > 0
        return np.where(probing, np.maximum(value, elapsed / np.where(probing, columns.probe, 1.0)), value)

    def hot_priorities(
        self, columns: ScheduleColumns, now: float, history: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact for the rows without a history (and all rows without ``uncertainty``); a row with
        one is bounded by the priority of a fetch worth ``0.2985 * elapsed`` (the most that
        :func:`refresh_value` of weight 1 reaches at any rate), at least 1 when due, below 1 when not."""
        if type(self).priorities is not FreshnessPolicy.priorities:
            return super().hot_priorities(columns, now, history)
        elapsed = np.maximum(now - columns.last_fetch, 0.0)
        weight = self.weight(columns.size)
        value = self._limited(refresh_value(columns.rate, weight, elapsed), columns, elapsed)
        if not self.uncertainty or not history.any():
            return value, np.ones(len(history), dtype=bool)
        bound = self._limited(_GAIN_PER_X * elapsed * weight, columns, elapsed) * (1.0 + 1e-9)
        bound = np.where(now >= columns.next_due, np.maximum(bound, 1.0), np.minimum(bound, BELOW_ONE))
        return np.where(history, bound, value), ~history

    def _posterior_rows(self, states: Sequence[ScheduleState]) -> np.ndarray:
        """:meth:`_posterior_row` of many states at once (the same numbers, to the bit)."""
        rows = np.zeros((len(states), len(self._rates) + 1))
        history = [i for i, state in enumerate(states) if _history(state)]
        if history:
            rows[history, :-1] = self._posteriors([states[i] for i in history])
            rows[history, -1] = 1.0
        return rows

    def _posterior_row(self, state: ScheduleState) -> np.ndarray:
        """:meth:`posterior` and a last column: 1 if the state has a history, else 0 (and zeros)."""
        row = np.zeros(len(self._rates) + 1)
        if _history(state):
            last, posterior = self._last
            row[:-1] = posterior if last is state and posterior is not None else self.posterior(state)
            row[-1] = 1.0
        return row


#: Over the maximum of ``(1 - exp(-x) * (1 + x)) / x`` (0.29843 at x = 1.793): the value of a
#: fetch ``elapsed`` after the last one is at most this times ``elapsed``, whatever the rate.
_GAIN_PER_X = 0.2984260


def _history(state: ScheduleState) -> bool:
    """Whether ``state`` holds any observation (a first fetch holds none)."""
    return bool(state.recent or state.old_changes or state.old_changed_secs or state.old_unchanged_secs)
