"""One crawl's selection over many URLs at once: the policy's priorities of their schedule states
(:class:`~scrapy_simhash.schedule.columns.ScheduleColumns`), the budget's cut (:func:`plan_run`), and
the time between runs (:func:`period_of`)."""

from __future__ import annotations

import itertools
import json
import statistics
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scrapy_simhash.schedule.columns import ScheduleColumns
    from scrapy_simhash.schedule.policies import SchedulePolicy


def select(priorities: np.ndarray, budget: int, *, due_only: bool = True) -> np.ndarray:
    """Indices of the ``budget`` highest ``priorities``, highest first (only the due ones, priority
    >= 1, unless ``due_only`` is false)."""
    if budget <= 0:
        return np.zeros(0, dtype=np.intp)
    candidates = np.flatnonzero(priorities >= 1.0) if due_only else np.arange(len(priorities))
    if budget < len(candidates):
        top = np.argpartition(-priorities[candidates], budget - 1)[:budget]
        candidates = candidates[top]
    return candidates[np.argsort(-priorities[candidates], kind="stable")]


def budget_interval(known: int, budget: int, run_period: float) -> float:
    """The mean interval at which a budget of ``budget`` pages per run, runs ``run_period``
    seconds apart, refetches ``known`` URLs: the default interval that follows from the budget.
    A policy's default interval sets the price of a fetch (:class:`FreshnessPolicy`'s threshold)
    and its probes; left at one day when the budget refetches a URL every ten, the probes of the
    pages seen changed would take most of the budget (`benchmarks/recrawl/simulate.py`: 0.64 of
    the oracle instead of 0.94 at 0.1 fetches per URL per day)."""
    return known / budget * run_period


def size_scale(policy: SchedulePolicy, sizes: np.ndarray) -> float:
    """The factor that makes the typical change ``sizes`` of the URLs ranked together unit-free:
    ``reference_size`` over the median of the positive sizes, so that the median changed URL
    weighs 1 whatever the change measure (bits, ``1 - similarity``); 1 for a policy without size
    weights or when no URL has changed yet."""
    reference = getattr(policy, "reference_size", None)
    positive = sizes[sizes > 0]
    if reference is None or not len(positive):
        return 1.0
    return float(reference / np.median(positive))


def run_priorities(policy: SchedulePolicy, columns: ScheduleColumns, now: float, scale: float = 1.0) -> np.ndarray:
    """``policy.priorities(columns, now)`` with the change sizes multiplied by ``scale``
    (:func:`size_scale`); ``columns`` is left as it was."""
    if scale == 1.0:
        return policy.priorities(columns, now)
    sizes = columns.size
    columns.size = sizes * scale
    try:
        return policy.priorities(columns, now)
    finally:
        columns.size = sizes


def plan_run(priorities: np.ndarray, due: np.ndarray, budget: int = 0) -> np.ndarray:
    """Return the known URLs one crawl fetches, as indices of ``priorities`` in fetch order: the
    ``budget`` highest priorities, due or not, or with ``budget`` 0 every ``due`` URL, highest first.

    The one selection of incremental crawls, the ``due`` command and the simulation; why a budget
    counts pages per run is in ``docs/usage/incremental.rst``.
    """
    candidates = np.arange(len(priorities)) if budget > 0 else np.flatnonzero(due)
    if budget > 0 and budget < len(candidates):
        cut = np.partition(priorities, len(priorities) - budget)[len(priorities) - budget]  # the budget-th highest
        above = np.flatnonzero(priorities > cut)
        candidates = np.union1d(above, np.flatnonzero(priorities == cut)[: budget - len(above)])  # ties: index order
    return candidates[np.argsort(-priorities[candidates], kind="stable")]


_RUNS_KEPT = 5


def run_starts(raw: bytes | None, now: float) -> list[float]:
    """The start times of the last few incremental crawls before ``now``, read from ``raw`` (the
    JSON :func:`runs_blob` wrote); an unreadable or missing blob gives none."""
    try:
        starts = [float(t) for t in json.loads(raw)["starts"]] if raw else []
    except (ValueError, TypeError, KeyError):
        starts = []  # unreadable: as if there were no crawl before
    return [t for t in starts if t < now][-_RUNS_KEPT:]  # a clock that went back: those are dropped


def runs_blob(starts: list[float], now: float) -> bytes:
    """``starts`` with ``now`` added as a crawl's start, as :func:`run_starts` reads them."""
    return json.dumps({"starts": [*starts, now][-_RUNS_KEPT:]}).encode()


def period_of(starts: list[float], now: float) -> float | None:
    """The time between incremental crawls: the median of the gaps between ``starts`` and ``now``
    (one crawl restarted at once does not make it short); ``None`` with no start before."""
    if not starts:
        return None
    times = [*starts, now]
    return float(statistics.median(b - a for a, b in itertools.pairwise(times)))


def iso(t: float | None) -> str | None:
    """Unix seconds as an ISO 8601 UTC time to the second (``None`` stays ``None``)."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
