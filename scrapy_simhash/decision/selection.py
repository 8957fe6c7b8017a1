"""An incremental crawl's selection of known URLs (:func:`select_known`), read from the store's hot
states (:mod:`scrapy_simhash.store.hot`) a page at a time, keeping only the best rows so far: its
memory grows with the budget (and up to :data:`_KEPT` bytes of hot states), not with the store.
A record is read only for a row whose priority the hot state only bounds (the policy's
:meth:`~scrapy_simhash.schedule.SchedulePolicy.hot_priorities`) and whose bound could still enter
the selection, and only its schedule (:func:`~scrapy_simhash.store.record.schedule_states`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from scrapy_simhash.schedule import (
    ScheduleColumns,
    budget_interval,
    period_of,
    run_priorities,
    run_starts,
    runs_blob,
    size_scale,
)
from scrapy_simhash.store.base import MAX_DUE, due_ms
from scrapy_simhash.store.hot import HISTORY, HOT, STATE
from scrapy_simhash.store.record import schedule_states

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy_simhash.auxblobs import AuxBlobs
    from scrapy_simhash.schedule import SchedulePolicy
    from scrapy_simhash.store.index import SimhashIndex

#: Hot states per store read.
PAGE = 4096

#: Bounded rows ranked (their records read) per batch.
_STEP = 512

#: Bytes of hot states that the first pass keeps for the second, which reads the others again
#: (16 MiB: 294,000 URLs).
_KEPT = 16 << 20


#: The aux blob where incremental crawls keep the start times of the last few (JSON).
RUNS_AUX = "recrawl/runs"


def run_period(index: AuxBlobs, now: float, *, record: bool = False) -> float | None:
    """The time between incremental crawls into ``index`` (:func:`~scrapy_simhash.schedule.period_of`
    of the starts it keeps); ``None`` before any crawl. ``record``: ``now`` is kept as a crawl's start."""
    starts = run_starts(index.get_aux(RUNS_AUX), now)
    if record:
        index.put_aux(RUNS_AUX, runs_blob(starts, now))
    return period_of(starts, now)


class DueRow(NamedTuple):
    """One row of a selection: a key due for a recrawl, its due time and priority."""

    key: str
    due: float
    priority: float


def select_known(
    index: SimhashIndex, policy: SchedulePolicy | None, now: float, budget: int = 0, run_period: float | None = None
) -> tuple[list[DueRow], SchedulePolicy | None]:
    """The rows of :meth:`ChangeTracker.selection <scrapy_simhash.decision.ChangeTracker.selection>`
    and the policy it ranks by from then on (with a budget and a ``run_period``, its default
    interval follows from the budget: :func:`~scrapy_simhash.schedule.budget_interval`). Two
    passes over the hot states: the candidates' count and change sizes (the ranking's
    :func:`~scrapy_simhash.schedule.size_scale`), then the ranking (of the pages the first kept,
    up to :data:`_KEPT` bytes, then of those read again), keeping the ``budget`` best (all the
    due rows without a budget), a page's keys read only where a row may enter; ties go by due
    time, then key."""
    end = due_ms(min(max(now if budget <= 0 else math.inf, 0.0), MAX_DUE))
    scale = 1.0
    best = _Best(budget)
    kept: list[tuple[bytes | None, bytes | None, np.ndarray]] = []  # the first pass's pages, for the second
    if policy is not None:
        count, due_count, sizes = 0, 0, []
        room = _KEPT
        for page in _pages(index):
            hot = page[2]
            if hot.nbytes <= room:
                kept.append(page)
                room -= hot.nbytes
            else:
                room = -1  # the pages after this one are read again
            listed = hot["due"] <= end
            known = listed & (hot["flags"] & STATE).astype(bool)
            due = listed & (hot["due"] / 1000 <= now)
            count += int(np.count_nonzero(known | due))
            due_count += int(np.count_nonzero(due))
            sizes.append(hot["size"][known & (hot["size"] > 0)])
        if budget > 0 and run_period and count:
            policy = policy.with_default_interval(budget_interval(count, budget, run_period))
        scale = size_scale(policy, np.concatenate(sizes) if sizes else np.zeros(0))
        if 0 < budget <= due_count:  # a due row's priority is at least 1: the budget's cut too
            best.threshold, best.worst_due = 1.0, MAX_DUE * 1000
    after, wanted = None, True
    pages = iter(kept)
    while True:
        # A page's keys are read with it when the page before had a row that could enter; else
        # its hot states alone first (those the first pass kept, or read again), and the keys
        # only when one of its rows may enter (the LMDB due index is in due order: past the due
        # rows, most pages have none).
        kept_page = next(pages, None)
        keys: list[bytes] = []
        if kept_page is not None:
            before, after, hot = kept_page
        else:
            before = after
            after, keys, hots = index.due_states(before, PAGE, wanted)
            if after is None:
                break
            hot = np.frombuffer(hots, dtype=HOT)
        enter, priorities, exact, due = _entering(hot, policy, now, scale, budget, end, best)
        wanted = len(enter) > 0
        if not wanted:
            continue
        if not keys:
            kept_after = after
            after, keys, hots = index.due_states(before, PAGE)
            if after is None:
                break
            if after != kept_after:  # the store changed since: the kept pages after it are read again
                pages = iter(())
            hot = np.frombuffer(hots, dtype=HOT)
            enter, priorities, exact, due = _entering(hot, policy, now, scale, budget, end, best)
        ms = hot["due"]
        best.add(_rows(enter[exact[enter]], priorities, ms, keys))
        # The bounded rows from the highest bound down (the earliest due first), a batch at a time:
        # each batch may raise the threshold that the next must reach.
        bounded = enter[~exact[enter]]
        bounded = bounded[np.lexsort((ms[bounded], -priorities[bounded]))]
        step = _STEP if budget > 0 else max(len(bounded), 1)
        for start in range(0, len(bounded), step):
            batch = bounded[start : start + step]
            batch = batch[best.admits(priorities[batch], ms[batch])]
            if not len(batch):
                continue
            assert policy is not None
            _rank(index, policy, now, scale, keys, batch, due, priorities)
            batch = batch[best.admits(priorities[batch], ms[batch])]
            best.add(_rows(batch, priorities, ms, keys))
    return [DueRow(key, ms / 1000, -priority) for priority, ms, key in best.rows()], policy


def _rows(at: np.ndarray, priorities: np.ndarray, ms: np.ndarray, keys: list[bytes]) -> list[tuple[float, int, str]]:
    """The rows ``at`` of a page as :class:`_Best` keeps them."""
    rows = at.tolist()
    load = getattr(keys, "load", None)
    if load is not None:  # the store's keys read on demand: all of these in one read
        load(rows)
    return list(zip((-priorities[at]).tolist(), ms[at].tolist(), [keys[i].decode("utf-8") for i in rows]))


def _pages(index: SimhashIndex) -> Iterator[tuple[bytes | None, bytes | None, np.ndarray]]:
    """The store's hot states, a page at a time, without their keys: the cursors before and
    after the page, and its states (a :data:`HOT` array)."""
    after = None
    while True:
        before = after
        after, _, hots = index.due_states(before, PAGE, False)
        if after is None:
            return
        yield before, after, np.frombuffer(hots, dtype=HOT)


def _entering(
    hot: np.ndarray, policy: SchedulePolicy | None, now: float, scale: float, budget: int, end: int, best: _Best
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows of a page of hot states that may enter ``best`` (their priority exact, or an
    upper bound of it), and per row its priority or bound, whether it is exact, whether it is due."""
    due = hot["due"] / 1000 <= now
    listed = hot["due"] <= end
    known = listed & (hot["flags"] & STATE).astype(bool) if policy is not None else np.zeros(len(hot), bool)
    candidate = (known | due) & listed if budget > 0 else due & listed
    priorities = np.ones(len(hot))
    exact = np.ones(len(hot), dtype=bool)
    rows = np.flatnonzero(known & candidate)
    if len(rows):
        assert policy is not None
        columns = _columns(hot[rows], scale)
        history = (hot["flags"][rows] & HISTORY).astype(bool)
        priorities[rows], exact[rows] = policy.hot_priorities(columns, now, history)
    priorities[due] = np.maximum(priorities[due], 1.0)
    return np.flatnonzero(candidate & best.admits(priorities, hot["due"])), priorities, exact, due


def _columns(hot: np.ndarray, scale: float) -> ScheduleColumns:
    """Schedule columns of hot states (no ``states``), the change sizes times ``scale``."""
    columns = ScheduleColumns(len(hot))
    for name in ("last_fetch", "next_due", "interval", "rate", "size", "probe"):
        setattr(columns, name, hot[name].astype(float))
    columns.size = columns.size * scale
    return columns


def _rank(
    index: SimhashIndex,
    policy: SchedulePolicy,
    now: float,
    scale: float,
    keys: list[bytes],
    rows: np.ndarray,
    due: np.ndarray,
    priorities: np.ndarray,
) -> None:
    """Set ``priorities[rows]`` from the records of the rows (``keys``: the page's): the policy's
    priority of the state (at least 1 when due); a record without a state now is 1 when due, else
    left out (-inf)."""
    at = rows.tolist()
    read = getattr(keys, "records", None)  # the store reads them by the due index's ids
    records = read(at) if read is not None else index.get_records([keys[i].decode("utf-8") for i in at])
    states = []
    for i, state in zip(at, schedule_states(records)):
        if state is None:
            priorities[i] = 1.0 if due[i] else -math.inf
        else:
            states.append((i, state))
    if states:
        at = np.array([i for i, _ in states])
        ranked = run_priorities(policy, ScheduleColumns.of([state for _, state in states]), now, scale)
        priorities[at] = np.where(due[at], np.maximum(ranked, 1.0), ranked)


class _Best:
    """The best ``budget`` rows ``(-priority, due ms, key)`` added so far (every row without a
    budget), in their order (highest priority first, then earliest due time, then key);
    ``threshold`` and ``worst_due``, the priority and due time of the last of them at the latest
    cut, which a row must beat to enter."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.threshold = -math.inf
        self.worst_due = -1
        self._rows: list[tuple[float, int, str]] = []

    def admits(self, priorities: np.ndarray, dues: np.ndarray) -> np.ndarray:
        """Which rows of ``priorities`` (exact, or upper bounds) and due times (ms) may enter: a
        higher priority than the threshold, or the same one and a due time no later (the key
        decides then); never a priority of -inf."""
        return cast(
            "np.ndarray", (priorities > self.threshold) | ((priorities == self.threshold) & (dues <= self.worst_due))
        )

    def add(self, rows: list[tuple[float, int, str]]) -> None:
        """Add ``rows``, then keep the best ``budget`` when they are over it by a quarter (or for a
        first threshold), the threshold raised to the last of them."""
        self._rows += rows
        n, budget = len(self._rows), self.budget
        if rows and budget > 0 and n > budget and (self.threshold == -math.inf or n >= budget + max(budget // 4, 256)):
            self._rows.sort()
            del self._rows[budget:]
            priority, self.worst_due, _ = self._rows[-1]
            self.threshold = -priority

    def rows(self) -> list[tuple[float, int, str]]:
        self._rows.sort()
        if self.budget > 0:
            del self._rows[self.budget :]
        return self._rows
