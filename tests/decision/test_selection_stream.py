"""The streaming selection (``ChangeTracker.selection`` over the stores' hot states) against the
selection before it, kept here as the reference: every record read and parsed, every candidate
ranked at once (brute force), on the same stores."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any, cast

import numpy as np
import pytest

from scrapy_simhash import SimhashIndex
from scrapy_simhash.decision import selection as selection_module
from scrapy_simhash.decision.tracker import ChangeTracker, DueRow
from scrapy_simhash.schedule import (
    DAY,
    HOUR,
    FixedIntervalPolicy,
    FreshnessPolicy,
    NutchAdaptivePolicy,
    ScheduleColumns,
    ScheduleState,
    budget_interval,
    plan_run,
    run_priorities,
    size_scale,
)
from scrapy_simhash.store import lmdbstore
from scrapy_simhash.store.hot import HOT
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.record import PageRecord, schedule_of, schedule_state_of
from scrapy_simhash.store.redisstore import RedisStore

T0 = 1_700_000_000.0


def reference(index: SimhashIndex, policy: Any, now: float, budget: int, run_period: float | None) -> list[DueRow]:
    """``ChangeTracker.selection`` as it was before the hot states (its code, verbatim but for names)."""
    listed = sorted(index.records_due(now if budget <= 0 else math.inf, limit=2**62), key=lambda r: (r[1], r[0]))
    keys, dues, states = [], [], []
    for (key, when), raw in zip(listed, index.get_records([key for key, _ in listed])):
        record = PageRecord.parse(raw)
        state = None if record is None or record.gone or policy is None else schedule_state_of(record)
        if state is None and when > now:
            continue
        keys.append(key)
        dues.append(when)
        states.append(state)
    if budget > 0 and run_period and keys and policy is not None:
        policy = policy.with_default_interval(budget_interval(len(keys), budget, run_period))
    priorities = np.ones(len(keys))
    known_states = {i: state for i, state in enumerate(states) if state is not None}
    known = list(known_states)
    if known and policy is not None:
        scale = size_scale(policy, np.array([known_states[i].size for i in known]))
        for start in range(0, len(known), 1000):
            rows = known[start : start + 1000]
            columns = ScheduleColumns.of([known_states[i] for i in rows])
            priorities[rows] = run_priorities(policy, columns, now, scale)
    due = np.array(dues) <= now
    priorities[due] = np.maximum(priorities[due], 1.0)
    order = plan_run(priorities, due, budget)
    return [DueRow(keys[i], dues[i], float(priorities[i])) for i in order.tolist()]


class OwnRanking(FreshnessPolicy):
    """A policy with priorities of its own: the selection must rank every candidate by its state."""

    def priorities(self, columns: ScheduleColumns, now: float) -> np.ndarray:
        states = cast("list[ScheduleState]", columns.states)  # the candidates' rows: each set from a state
        return super().priorities(columns, now) * np.array([1.0 + (s.fetches % 3) for s in states])


POLICY = FreshnessPolicy(default_interval=DAY, min_interval=HOUR, max_interval=30 * DAY)


def fill(index: SimhashIndex, n: int, seed: int) -> float:
    """``n`` records through ``put_record``: histories of 1-24 fetches at random intervals, some
    gone, some without a schedule, some never due, a few keys too long for LMDB; returns a ``now``
    at which some are due and most are not."""
    rng = random.Random(seed)
    for i in range(n):
        key = f"https://s{i % 7}.example/{i}" + ("x" * 600 if i % 97 == 0 else "")
        t = T0 + rng.uniform(0, 20 * DAY)
        state: ScheduleState | None = None
        for _ in range(rng.choice((1, 1, 2, 5, 24))):
            changed = None if state is None else rng.random() < 0.4
            state = POLICY.observe(state, t, changed, rng.choice((3.0, 7.0, 20.0)) if changed else None)
            t += rng.choice((HOUR, DAY, rng.uniform(HOUR, 9 * DAY)))
        assert state is not None
        next_due, schedule = schedule_of(state)
        record = PageRecord.first(rng.getrandbits(64), now=state.last_fetch)
        kind = rng.random()
        if kind < 0.05:
            record = replace(record, gone=True, next_due=next_due)
        elif kind < 0.1:
            record = replace(record, next_due=next_due)  # no schedule
        else:
            record = replace(record, schedule=schedule, next_due=next_due)
        if i % 50 == 0:
            next_due = T0 + 25 * DAY  # many at one due time: ties by key
        index.put_record(key, record.to_bytes(), due=None if kind > 0.97 else next_due)
    return T0 + 22 * DAY


@pytest.fixture(params=["memory", "lmdb", "redis"])
def index(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "redis":
        server = request.getfixturevalue("redis_server")
        idx = SimhashIndex(RedisStore(server.url, prefix=str(tmp_path)))
    elif request.param == "lmdb":
        idx = SimhashIndex.open(tmp_path / "idx", durable=False)
    else:
        idx = SimhashIndex()
    yield idx
    idx.close()


POLICIES = {
    "freshness": POLICY,
    "freshness-no-uncertainty": FreshnessPolicy(default_interval=DAY, max_interval=30 * DAY, uncertainty=False),
    "nutch": NutchAdaptivePolicy(),
    "fixed": FixedIntervalPolicy(),
    "own-ranking": OwnRanking(default_interval=DAY, max_interval=30 * DAY),
    "none": None,
}


@pytest.mark.parametrize("name", list(POLICIES))
def test_the_same_rows_in_the_same_order_as_the_brute_force_selection(index, name, monkeypatch):
    monkeypatch.setattr(selection_module, "PAGE", 64)  # many pages: the best rows carried over each
    now = fill(index, 900, seed=3)
    policy = POLICIES[name]
    not_due = 0
    for budget, period in ((0, None), (10, None), (10, 3 * DAY), (100, DAY), (2000, DAY)):
        for when in (now, now + 10 * DAY, T0):
            tracker = ChangeTracker(index, policy=policy)
            got = tracker.selection(when, budget, period)
            want = reference(index, policy, when, budget, period)
            assert got == want, (name, budget, period, when)
            assert len(got) == (min(budget, len(want)) if budget else len(want))
            not_due += sum(row.due > when for row in got)
            if policy is not None and budget and period:
                assert tracker.policy is not None
                assert tracker.policy.default_interval != policy.default_interval  # set from the budget
    assert not_due > 100 or policy is None  # the budget reaches URLs not due yet, ranked by their bounds


def test_a_tie_at_the_budget_goes_to_the_earliest_due_then_the_first_key(index):
    # Without a policy every candidate is due at priority 1: the cut falls among ties.
    for i in range(30):
        record = replace(PageRecord.first(i, now=T0), next_due=T0 + (i % 3))
        index.put_record(f"https://a.example/{29 - i:02d}", record.to_bytes(), due=T0 + (i % 3))
    rows = ChangeTracker(index, policy=None).selection(T0 + 10, budget=12)
    listed = sorted((row.due, row.key) for row in ChangeTracker(index, policy=None).selection(T0 + 10))
    assert [(row.due, row.key) for row in rows] == listed[:12]
    assert rows == reference(index, None, T0 + 10, 12, None)


def test_records_read_are_only_those_whose_bound_could_enter(index, monkeypatch):
    now = fill(index, 900, seed=5)
    read: list[str] = []
    get_records = index.get_records

    def counting(keys):
        keys = list(keys)
        read.extend(keys)
        return get_records(keys)

    def counting_rows(self, rows):  # LMDB: the records of a page's rows, read by id
        read.extend(self[i].decode() for i in rows)
        return entry_records(self, rows)

    when = now - 10 * DAY  # a third of the URLs due
    monkeypatch.setattr(index, "get_records", counting)
    entry_records = lmdbstore._EntryKeys.records
    monkeypatch.setattr(lmdbstore._EntryKeys, "records", counting_rows)
    rows = ChangeTracker(index, policy=POLICY).selection(when, 20, DAY)
    monkeypatch.undo()
    assert rows == reference(index, POLICY, when, 20, DAY)
    due = len(index.records_due(when, limit=10_000))
    assert 20 <= len(read) <= due < 0.4 * len(index.records_due(math.inf, limit=10_000))


def test_an_lmdb_store_without_hot_states_is_read_from_its_records(tmp_path):
    index = SimhashIndex.open(tmp_path / "idx", durable=False)
    now = fill(index, 300, seed=7)
    want = reference(index, POLICY, now, 50, DAY)
    store = index._store
    assert isinstance(store, LmdbStore) and store._shared is not None
    with store._shared.env.begin(write=True) as txn:  # as an index written before hot states
        for key, _ in list(txn.cursor(store._due_index)):
            txn.put(key, b"", db=store._due_index)
    assert ChangeTracker(index, policy=POLICY).selection(now, 50, DAY) == want
    index.close()


def test_a_refetch_moves_the_hot_state_with_the_record(tmp_path):
    # A due time moved later keeps its due-index entry (a lower bound) and rewrites its hot state;
    # records_due then moves the entry, hot state and all.
    index = SimhashIndex.open(tmp_path / "idx", durable=False)
    tracker = ChangeTracker(index, policy=POLICY)
    now = fill(index, 200, seed=9)
    state = POLICY.observe(None, now, None)
    for i in range(0, 200, 3):
        next_due, schedule = schedule_of(state)
        record = replace(PageRecord.first(i, now=now), schedule=schedule, next_due=next_due)
        index.put_record(f"https://s{i % 7}.example/{i}", record.to_bytes(), due=next_due)
    for when in (now, now + 5 * DAY):
        assert tracker.selection(when, 40, DAY) == reference(index, POLICY, when, 40, DAY)
    index.records_due(now + 40 * DAY, limit=10_000)  # moves the stale entries
    assert tracker.selection(now, 40, DAY) == reference(index, POLICY, now, 40, DAY)
    index.close()


def due_state_reads(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[list[bool], int]:
    """A budgeted selection (the brute force's rows) over 900 URLs in pages of 32 on LMDB: per
    ``due_states`` read whether it asked for the keys, and the number of pages of the due index."""
    monkeypatch.setattr(selection_module, "PAGE", 32)
    index = SimhashIndex.open(tmp_path / "idx", durable=False)
    now = fill(index, 900, seed=3)
    calls: list[bool] = []
    due_states = index.due_states

    def counting(after, limit=1000, keys=True):
        calls.append(keys)
        return due_states(after, limit, keys)

    monkeypatch.setattr(index, "due_states", counting)
    rows = ChangeTracker(index, policy=POLICY).selection(now, 20, None)
    monkeypatch.undo()
    assert rows == reference(index, POLICY, now, 20, None)
    pages = -(-len(index.records_due(math.inf, limit=10_000)) // 32)
    index.close()
    return calls, pages


def test_keys_are_read_only_for_the_pages_where_a_row_may_enter(tmp_path, monkeypatch):
    # In the LMDB due index's order, the due rows come first: the pages after them cannot enter a
    # budget that the due rows fill, and their keys are not read.
    calls, pages = due_state_reads(tmp_path, monkeypatch)
    assert calls.count(True) < pages / 2 < calls.count(False)


@pytest.mark.parametrize("kept", [0, 5 * 64 * HOT.itemsize, 1 << 30])
@pytest.mark.parametrize("name", ["freshness", "own-ranking"])
def test_the_same_rows_whatever_the_first_pass_keeps_for_the_second(index, name, kept, monkeypatch):
    # None of the hot states, the first five pages, or all of them: the pages after those kept are read again.
    monkeypatch.setattr(selection_module, "PAGE", 64)
    monkeypatch.setattr(selection_module, "_KEPT", kept)
    now = fill(index, 900, seed=11)
    for budget, period in ((0, None), (10, 3 * DAY), (300, DAY)):
        for when in (now, now + 10 * DAY):
            got = ChangeTracker(index, policy=POLICIES[name]).selection(when, budget, period)
            assert got == reference(index, POLICIES[name], when, budget, period), (budget, period, when)


@pytest.mark.parametrize("kept", [0, 1 << 30])
def test_hot_states_kept_by_the_first_pass_are_not_read_again(tmp_path, monkeypatch, kept):
    monkeypatch.setattr(selection_module, "_KEPT", kept)
    calls, pages = due_state_reads(tmp_path, monkeypatch)
    if kept:  # the first pass's reads (and its last, past the end), and none of the second's
        assert calls.count(False) <= pages + 2
    else:
        assert calls.count(False) >= 1.5 * pages


def test_a_store_changed_between_the_passes_is_read_again_from_there(tmp_path, monkeypatch):
    # A record written between the first pass and the second shifts the pages: the second pass
    # reads the pages after the first one that changed from the store, none twice.
    monkeypatch.setattr(selection_module, "PAGE", 32)
    index = SimhashIndex.open(tmp_path / "idx", durable=False)
    now = fill(index, 300, seed=5)
    due_states = index.due_states
    state = POLICY.observe(None, T0, None)
    written: list[str] = []

    def writing(after, limit=1000, keys=True):
        if keys and not written:  # the second pass's first read of keys
            for i in range(40):
                next_due, schedule = schedule_of(state)
                record = replace(PageRecord.first(i, now=T0), schedule=schedule, next_due=next_due)
                written.append(f"https://new.example/{i}")
                index.put_record(written[-1], record.to_bytes(), due=T0 - DAY)  # before every page
        return due_states(after, limit, keys)

    monkeypatch.setattr(index, "due_states", writing)
    rows = ChangeTracker(index, policy=POLICY).selection(now, 0, None)
    monkeypatch.undo()
    keys = [row.key for row in rows]
    assert written and len(keys) == len(set(keys))
    assert set(keys) >= {row.key for row in reference(index, POLICY, now, 0, None)} - set(written)
    index.close()
