"""The schedule-only record readers (``schedule_state``, what the hot states read, and
``schedule_states``, many records at once, what the selection reads) against the full decoder:
the same schedule state as ``schedule_state_of(PageRecord.parse(raw))`` (``None`` for a record gone,
without a schedule or unreadable), on random records, their cut, padded and flipped bytes, and
the records of real pages observed by the tracker."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers.states import random_states

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.schedule import DAY, FreshnessPolicy
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.lmdbstore import LmdbStore
from scrapy_simhash.store.record import PageRecord, schedule_of, schedule_state, schedule_state_of, schedule_states


def full(raw: bytes | None):
    """The schedule state by the full decode, as the selection read it before the reader."""
    record = PageRecord.parse(raw)
    return None if record is None or record.gone else schedule_state_of(record)


def same(raws: Sequence[bytes | None]) -> None:
    """Each reader's state is the full decode's, every number bit for bit (``repr``: -0.0, NaN):
    one record at a time, and all of them at once (in batches of 1, 7 and all)."""
    want = [repr(full(raw)) for raw in raws]
    for raw, state in zip(raws, want):
        assert repr(schedule_state(raw)) == state, raw
    for size in (1, 7, len(raws)):
        got = [repr(s) for start in range(0, len(raws), size) for s in schedule_states(raws[start : start + size])]
        assert got == want


def random_records(n: int, seed: int) -> list[PageRecord]:
    """Records of every shape the format holds: histories of 0-9 fetches (128-bit fingerprints
    too), texts (UTF-8), packed and JSON schedules, gone, visible keys, sketches, evidence."""
    rng = random.Random(seed)
    states = random_states(n, seed)
    out = []
    for i, state in enumerate(states):
        t = rng.choice((0.0, 1.0, 1_700_000_000.0)) + rng.uniform(0, 1e6)
        wide = rng.random() < 0.15
        history = tuple(
            (rng.getrandbits(128 if wide and j == 0 else 64), None if j == k - 1 else rng.randrange(65))
            for k in [rng.randrange(10)]
            for j in range(k)
        )
        schedule: Mapping[str, Any] | None
        next_due, schedule = schedule_of(state)
        shape = i % 7
        if shape == 1:
            schedule = state.to_dict()  # a mapping of the packed form (not a _Schedule)
        elif shape == 2:
            schedule = {**state.to_dict(), "rate": 1}  # an int where the form has a float: JSON
        elif shape == 3:
            schedule = rng.choice(({"interval": 5}, {}, {"last_fetch": "x"}, {**state.to_dict(), "interval": -1.0}))
        elif shape == 4:
            schedule = None
        elif shape == 5:  # recent numbers of every kind: not whole ms (6 digits, float64), -0.0, huge
            recent = [[rng.choice((0.1234567, 1 / 3, -0.0, 2e12, 3600.5, 1e-3)), rng.choice((0.0, 7.25))] for _ in "ab"]
            schedule = {**state.to_dict(), "recent": recent + state.to_dict()["recent"]}
        texts = {name: rng.choice((None, "", 'W/"x"', "https://例子.example.cn/新闻")) for name in _TEXT_FIELDS}
        out.append(
            PageRecord(
                first_seen=t,
                last_fetched=t + rng.choice((0.0, 3600.5, 86400 * 30.0)),
                last_changed=t,
                fetch_count=max(len(history), 1),
                change_count=rng.randrange(3),
                history=history,
                next_due=None if schedule is None and rng.random() < 0.5 else next_due,
                schedule=schedule,
                gone=rng.random() < 0.1,
                sketch=rng.choice((None, bytes(rng.getrandbits(8) for _ in range(64)))),
                visible_key=rng.choice((None, rng.getrandbits(64))),
                evidence=rng.random() < 0.3,
                **texts,
            )
        )
    return out


_TEXT_FIELDS = ("duplicate_of", "etag", "last_modified", "moved_to")


def test_the_reader_gives_the_full_decodes_state_on_random_records() -> None:
    records = random_records(1500, 38)
    raws = [record.to_bytes() for record in records]
    states = [full(raw) for raw in raws]
    # every case is there: states, and None for gone, no schedule, a schedule that is no state
    assert sum(s is not None for s in states) > 500 and sum(s is None for s in states) > 300
    assert sum(bool(s and s.recent) for s in states) > 200
    assert sum(r.gone and r.schedule is not None for r in records) > 50
    same(raws)


def test_the_reader_gives_the_full_decodes_state_on_cut_padded_and_flipped_bytes() -> None:
    """Unreadable records are ``None`` for both, whatever part of the record is damaged (the
    history and texts that the reader passes over included)."""
    rng = random.Random(7)
    unreadable = 0
    for record in random_records(120, 9):
        raw = record.to_bytes()
        variants = [raw[:end] for end in range(len(raw))] + [raw + b"\0", raw + b"\x80", b"", None]
        for _ in range(40):
            flipped = bytearray(raw)
            flipped[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
            variants.append(bytes(flipped))
        same(variants)
        unreadable += sum(variant is not None and PageRecord.parse(variant) is None for variant in variants)
    assert unreadable > 1000


def test_the_reader_gives_the_full_decodes_state_on_real_records(tmp_path: Path) -> None:
    """The records that the tracker writes for real pages (``../shared/data``): first fetches,
    refetches unchanged and changed, 304s with validators, gone and moved URLs."""
    from helpers.data import DATA, load_pages

    if not DATA.exists():
        pytest.skip(f"no data under {DATA}")
    from scrapy_simhash.fingerprint.simhash import Fingerprinter

    fingerprinter = Fingerprinter()
    pages = []
    for bodies in load_pages().values():
        for body in bodies[:25]:
            try:
                pages.append(fingerprinter.fingerprint_page(body))
            except ValueError:  # a page without text
                continue
    assert len(pages) >= 30
    index = SimhashIndex(LmdbStore(tmp_path / "pages", map_size=1 << 28))
    tracker = ChangeTracker(index, policy=FreshnessPolicy())
    rng = random.Random(3)
    keys = [f"https://site{i % 4}.example/page/{i}" for i in range(len(pages))]
    t = 1_700_000_000.0
    for step in range(12):
        for i, key in enumerate(keys):
            if rng.random() < 0.3:
                continue
            t += rng.uniform(1, 600)
            roll = rng.random()
            if roll < 0.08:
                tracker.not_modified(key, t + step * DAY, validators=('W/"e"', "Mon, 01 Jan 2024"))
            elif roll < 0.1:
                tracker.gone(key, t + step * DAY)
            elif roll < 0.11:
                tracker.moved(key, keys[(i + 1) % len(keys)], t + step * DAY)
            else:
                page = pages[i] if rng.random() < 0.7 else pages[(i + step) % len(pages)]
                tracker.observe(key, page, t + step * DAY, validators=(rng.choice((None, '"v1"')), None))
    raws = index.get_records(keys)
    states = [full(raw) for raw in raws]
    assert sum(bool(s and s.recent) for s in states) > 10
    same(raws)
    index.close()
